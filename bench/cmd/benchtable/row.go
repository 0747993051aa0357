package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Num is a figure of the table; NaN (not measured) is null in JSON.
type Num float64

// MarshalJSON writes NaN and ±Inf as null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// Pair is one repeat of a row: ours and its baseline, run back to back.
type Pair struct {
	Ours     Num `json:"ours"`
	Baseline Num `json:"baseline"`
}

// Row is one line of the table and of bench/results.json.
type Row struct {
	Name     string   `json:"name"`
	Ours     Num      `json:"ours"`     // median over the repeats; null when not measured
	Baseline Num      `json:"baseline"` // median over the repeats; null when not measured
	Ratio    *float64 `json:"ratio"`    // ours ÷ baseline (median of the per-repeat ratios); null when undefined
	Goal     string   `json:"goal"`
	Unit     string   `json:"unit"`
	Met      *bool    `json:"met"` // null for an information row (no goal)
	Note     string   `json:"note,omitempty"`
	Repeats  []Pair   `json:"repeats,omitempty"` // each interleaved repeat, in the order run

	missing string // which benchmark or metric did not report (also in Note)
}

// goal is a row's target; met nil means information only.
type goal struct {
	text string
	met  func(ours float64, ratio *float64) bool
}

var info = goal{text: "info"}

func ratioAtLeast(x float64) goal {
	return goal{"ratio ≥ " + fmtGoal(x), func(_ float64, r *float64) bool { return r != nil && *r >= x }}
}

func ratioAtMost(x float64) goal {
	return goal{"ratio ≤ " + fmtGoal(x), func(_ float64, r *float64) bool { return r != nil && *r <= x }}
}

func oursAtMost(x float64, unit string) goal {
	return goal{"ours ≤ " + fmtGoal(x) + unit, func(o float64, _ *float64) bool { return !math.IsNaN(o) && o <= x }}
}

func oursBelow(x float64, unit string) goal {
	return goal{"ours < " + fmtGoal(x) + unit, func(o float64, _ *float64) bool { return !math.IsNaN(o) && o < x }}
}

func oursEqual(x float64) goal {
	return goal{"ours = " + fmtGoal(x), func(o float64, _ *float64) bool { return o == x }}
}

func fmtGoal(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// metric names one figure of one benchmark; scale multiplies it (0 = 1).
type metric struct {
	bench, unit string
	scale       float64
}

func (m metric) of(r runs) []float64 {
	xs := r.vals(m.bench, m.unit)
	if m.scale != 0 {
		for i := range xs {
			xs[i] *= m.scale
		}
	}
	return xs
}

// spec describes a row measured as ours beside a baseline.
type spec struct {
	name       string
	ours, base metric
	goal       goal
	unit, note string
}

// row builds a row from the runs: ours and baseline are the medians of
// their repeats, the ratio the median of the per-repeat ratios (the two
// sides of a repeat ran back to back, so they shared the machine's load).
// A benchmark that did not run (not merged yet, or skipped) gives n/a and
// met = false rather than ending the runner.
func (s spec) row(r runs) Row {
	ov, bv := s.ours.of(r), s.base.of(r)
	row := Row{Name: s.name, Ours: Num(median(ov)), Baseline: Num(median(bv)), Goal: s.goal.text, Unit: s.unit, Note: s.note}
	row.Ratio = pairedRatio(ov, bv)
	if row.missing = s.missing(r, ov, bv); row.missing != "" {
		row.Note = strings.TrimPrefix(row.Note+"; "+row.missing, "; ")
	}
	if len(ov) == len(bv) {
		for i := range ov {
			row.Repeats = append(row.Repeats, Pair{Num(ov[i]), Num(bv[i])})
		}
	}
	if s.goal.met != nil || len(ov) == 0 {
		met := len(ov) > 0 && s.goal.met(float64(row.Ours), row.Ratio)
		row.Met = &met
	}
	return row
}

// missing says which benchmark or metric of the row did not report.
func (s spec) missing(r runs, ov, bv []float64) string {
	var out []string
	for _, side := range []struct {
		m  metric
		xs []float64
	}{{s.ours, ov}, {s.base, bv}} {
		var say string
		switch {
		case side.m.bench == "" || len(side.xs) > 0:
			continue
		case len(r[side.m.bench]) == 0:
			say = "benchmark not found: " + side.m.bench
		default:
			say = fmt.Sprintf("%s reported no %s", side.m.bench, side.m.unit)
		}
		if !slices.Contains(out, say) {
			out = append(out, say)
		}
	}
	return strings.Join(out, "; ")
}

// pairedRatio is the median of ours[i] ÷ base[i] when both sides have the
// same number of repeats, else the ratio of the medians; nil when a side
// is missing or a baseline is 0.
func pairedRatio(ov, bv []float64) *float64 {
	if len(ov) == 0 || len(bv) == 0 {
		return nil
	}
	if len(ov) != len(bv) {
		return ratio(median(ov), median(bv))
	}
	var rs []float64
	for i := range ov {
		q := ratio(ov[i], bv[i])
		if q == nil {
			return nil
		}
		rs = append(rs, *q)
	}
	m := median(rs)
	return &m
}

func ratio(ours, base float64) *float64 {
	if base == 0 || math.IsNaN(base) || math.IsNaN(ours) {
		return nil
	}
	r := ours / base
	return &r
}

func printTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tours\tbaseline\tratio\tgoal\tunit\tmet")
	for _, r := range rows {
		rat := "—"
		if r.Ratio != nil {
			rat = fmt.Sprintf("%.3f", *r.Ratio)
		}
		met := "info"
		if r.Met != nil {
			met = map[bool]string{true: "yes", false: "NO"}[*r.Met]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, num(float64(r.Ours)), num(float64(r.Baseline)), rat, r.Goal, r.Unit, met)
	}
	tw.Flush()
	for _, r := range rows {
		if r.missing != "" {
			fmt.Fprintf(w, "  n/a %s: %s\n", strings.Fields(r.Name)[0], r.missing)
		}
	}
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}
