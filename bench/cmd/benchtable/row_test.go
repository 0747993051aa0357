package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A row whose benchmark has not run (not merged yet) is n/a with met =
// false and says so; it does not end the runner.
func TestRowOfMissingBenchmarkIsNotMet(t *testing.T) {
	s := spec{name: "x", ours: metric{"BenchmarkNew", "log-B/row", 0}, base: metric{"BenchmarkNew", "record-B/row", 0}, goal: oursAtMost(2048, " B")}
	row := s.row(runs{})
	if !math.IsNaN(float64(row.Ours)) || row.Met == nil || *row.Met || row.Ratio != nil {
		t.Fatalf("row %+v, want n/a and not met", row)
	}
	if strings.Count(row.Note, "benchmark not found: BenchmarkNew") != 1 {
		t.Fatalf("note %q does not name the missing benchmark once", row.Note)
	}
	data, err := json.Marshal(row)
	if err != nil || !strings.Contains(string(data), `"ours":null`) {
		t.Fatalf("json %s, %v: want ours null", data, err)
	}
}

// The ratio of interleaved repeats is the median of the per-pair ratios,
// and each pair is kept.
func TestRowRatioIsMedianOfPairs(t *testing.T) {
	r := runs{
		"BenchmarkOurs": {{"x/s": 10}, {"x/s": 30}, {"x/s": 18}},
		"BenchmarkBase": {{"x/s": 20}, {"x/s": 30}, {"x/s": 20}},
	}
	row := spec{ours: metric{"BenchmarkOurs", "x/s", 0}, base: metric{"BenchmarkBase", "x/s", 0}, goal: ratioAtLeast(0.8)}.row(r)
	if row.Ratio == nil || *row.Ratio != 0.9 || row.Met == nil || !*row.Met {
		t.Fatalf("ratio %v met %v, want 0.9 (median of 0.5, 1, 0.9) and met", row.Ratio, row.Met)
	}
	if float64(row.Ours) != 18 || float64(row.Baseline) != 20 || len(row.Repeats) != 3 {
		t.Fatalf("row %+v, want medians 18 and 20 and 3 repeats", row)
	}
}

// An information row has no met.
func TestInfoRowHasNoMet(t *testing.T) {
	r := runs{"BenchmarkOurs": {{"x/s": 10}}, "BenchmarkBase": {{"x/s": 20}}}
	row := spec{ours: metric{"BenchmarkOurs", "x/s", 0}, base: metric{"BenchmarkBase", "x/s", 0}, goal: info}.row(r)
	if row.Met != nil {
		t.Fatalf("met %v, want none", *row.Met)
	}
}

func TestParseDropsProcsSuffix(t *testing.T) {
	r := parse("BenchmarkPollUnchanged10Tabs-2   	       5	 701000000 ns/op	 663.2 ms/pass	 1.000 reads/op\nok\n")
	if got := r.vals("BenchmarkPollUnchanged10Tabs", "ms/pass"); len(got) != 1 || got[0] != 663.2 {
		t.Fatalf("parsed %v", r)
	}
}

// Row 14 reads the long-history benchmarks' metrics (sub-benchmarks by
// their full name); its 10^7 row is there only when -historymax asks.
func TestHistoryRows(t *testing.T) {
	r := parse(`BenchmarkOpenHistory/events=100000-2    3  47193109 ns/op  0.05 s/open
BenchmarkOpenHistory/events=1000000-2   3  60000000 ns/op  0.06 s/open
BenchmarkCommitRateAfterHistory-2   1  9000000000 ns/op  4000 events/s-1e6  5000 events/s-empty  0.8 ratio
BenchmarkHotLogUnderRetention-2   1  1 ns/op  29.8 MiB-at-25%  30.9 MiB-at-75%  32.0 MiB-at-100%
`)
	defer func(v uint64) { *histMax = v }(*histMax)
	got := map[string]Row{}
	for _, s := range historySpecs() {
		got[strings.Fields(s.name)[0]] = s.row(r)
	}
	if _, ok := got["14c"]; ok || len(got) != 4 {
		t.Fatalf("rows %v: want 14a, 14b, 14d, 14e without -historymax", got)
	}
	if b := got["14b"]; b.Ratio == nil || math.Abs(*b.Ratio-1.2) > 1e-9 || b.Met == nil || !*b.Met {
		t.Errorf("14b %+v: want ratio 1.2 and met (0.06 s ≤ 1 s)", b)
	}
	if d := got["14d"]; d.Ratio == nil || *d.Ratio != 0.8 || d.Met == nil || *d.Met {
		t.Errorf("14d %+v: want ratio 0.8, not met", d)
	}
	if e := got["14e"]; e.Ratio == nil || math.Abs(*e.Ratio-32.0/29.8) > 1e-9 || e.Met == nil || !*e.Met {
		t.Errorf("14e %+v: want ratio 32.0/29.8, met", e)
	}
	*histMax = 10_000_000
	if n := len(historySpecs()); n != 5 {
		t.Fatalf("%d rows with -historymax 10000000, want 5 (14c added)", n)
	}
	if got := historySizes(10_000_000); strings.Join(got, "|") != "100000|1000000|10000000" {
		t.Fatalf("sizes %v", got)
	}
}

// Row 10a takes both its figures from the one alternating benchmark, one
// pair a process.
func TestChainRowReadsTheAlternatingBenchmark(t *testing.T) {
	r := parse("BenchmarkAppend64ChainAlternating-2   45  55930788 ns/op  43541 events/s-chained  48244 events/s-unchained  0.9025 ratio\n")
	r.add(parse("BenchmarkAppend64ChainAlternating-2   45  51608513 ns/op  48074 events/s-chained  51238 events/s-unchained  0.9382 ratio\n"))
	r.add(parse("BenchmarkAppend64ChainAlternating-2   36  63111865 ns/op  40828 events/s-chained  40303 events/s-unchained  1.013 ratio\n"))
	var row Row
	for _, s := range specs(r) {
		if strings.HasPrefix(s.name, "10a ") {
			row = s.row(r)
		}
	}
	if row.Ratio == nil || math.Abs(*row.Ratio-48074.0/51238) > 1e-9 || len(row.Repeats) != 3 || row.missing != "" {
		t.Fatalf("row 10a %+v: want 3 repeats, ratio %v (the median pair's)", row, 48074.0/51238)
	}
	if row.Met == nil || *row.Met {
		t.Fatalf("row 10a met %v, want false (0.938 < 0.95)", row.Met)
	}
}
