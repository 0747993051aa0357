package events

import (
	"slices"
	"testing"
)

func TestSeqRangesAddMinusContains(t *testing.T) {
	var r SeqRanges
	for _, s := range []uint64{811, 812, 813, 900, 5, 814, 899} {
		r.Add(s)
	}
	if r.String() != "5, 811-814, 899-900" || r.Count() != 7 {
		t.Fatalf("%s (%d)", r, r.Count())
	}
	if !r.ContainsAll(811, 814) || r.ContainsAll(810, 811) || !r.Contains(900) || r.Contains(6) {
		t.Fatal("contains")
	}
	var all SeqRanges
	all.AddRange(1, 1000)
	if got := all.Minus(r).String(); got != "1-4, 6-810, 815-898, 901-1000" {
		t.Fatalf("minus: %s", got)
	}
	if got := r.Union(all.Minus(r)); got.String() != "1-1000" {
		t.Fatalf("union: %s", got)
	}
	back, err := parseSeqRanges(r.String())
	if err != nil || !slices.Equal(back, r) {
		t.Fatalf("parse %q: %v %v", r, back, err)
	}
	for _, bad := range []string{"0", "5-3", "x", "1-", "-2", "1--2"} {
		if _, err := parseSeqRanges(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzParseSeqRanges: whatever parses prints back to a form that parses to
// the same set, and Minus of itself is empty.
func FuzzParseSeqRanges(f *testing.F) {
	for _, s := range []string{"", "1", "811-813, 900", "5,3,4", "1-18446744073709551615", " 7 , 9-9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseSeqRanges(s)
		if err != nil {
			return
		}
		back, err := parseSeqRanges(r.String())
		if err != nil || !slices.Equal(back, r) {
			t.Fatalf("%q → %q → %v, %v", s, r, back, err)
		}
		if len(r.Minus(r)) != 0 {
			t.Fatalf("%q minus itself: %s", r, r.Minus(r))
		}
		for _, x := range r {
			if !r.ContainsAll(x.First, x.Last) {
				t.Fatalf("%q does not contain %d-%d", r, x.First, x.Last)
			}
		}
	})
}
