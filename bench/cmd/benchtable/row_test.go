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
