package events

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SeqRange is the sequences First..Last, inclusive.
type SeqRange struct{ First, Last uint64 }

// SeqRanges is a set of sequences as sorted, disjoint, non-adjacent ranges.
// Its String form is "811-813, 900"; parseSeqRanges reads it back.
type SeqRanges []SeqRange

// Add adds seq. Adding in ascending order is O(1).
func (r *SeqRanges) Add(seq uint64) { r.AddRange(seq, seq) }

// AddRange adds first..last (nothing when last < first).
func (r *SeqRanges) AddRange(first, last uint64) {
	if last < first {
		return
	}
	n := len(*r)
	switch {
	case n == 0 || first > (*r)[n-1].Last && first-(*r)[n-1].Last > 1:
		*r = append(*r, SeqRange{first, last})
	case first >= (*r)[n-1].First:
		(*r)[n-1].Last = max((*r)[n-1].Last, last)
	default:
		*r = append(*r, SeqRange{first, last})
		r.normalize()
	}
}

func (r *SeqRanges) normalize() {
	s := *r
	slices.SortFunc(s, func(a, b SeqRange) int {
		switch {
		case a.First < b.First:
			return -1
		case a.First > b.First:
			return 1
		}
		return 0
	})
	out := s[:0]
	for _, x := range s {
		if n := len(out); n > 0 && (x.First <= out[n-1].Last || x.First-out[n-1].Last == 1) {
			out[n-1].Last = max(out[n-1].Last, x.Last)
			continue
		}
		out = append(out, x)
	}
	*r = out
}

// Contains reports whether seq is in the set.
func (r SeqRanges) Contains(seq uint64) bool { return r.ContainsAll(seq, seq) }

// ContainsAll reports whether every sequence first..last is in the set
// (true when last < first).
func (r SeqRanges) ContainsAll(first, last uint64) bool {
	if last < first {
		return true
	}
	i, _ := slices.BinarySearchFunc(r, first, func(x SeqRange, s uint64) int {
		if x.Last < s {
			return -1
		}
		if x.First > s {
			return 1
		}
		return 0
	})
	return i < len(r) && r[i].First <= first && last <= r[i].Last
}

// Count is how many sequences the set holds.
func (r SeqRanges) Count() uint64 {
	var n uint64
	for _, x := range r {
		n += x.Last - x.First + 1
	}
	return n
}

// Minus returns the sequences of r that are not in o.
func (r SeqRanges) Minus(o SeqRanges) SeqRanges {
	var out SeqRanges
	for _, x := range r {
		first, done := x.First, false
		for _, y := range o {
			if done || y.Last < first || y.First > x.Last {
				continue
			}
			if y.First > first {
				out.AddRange(first, y.First-1)
			}
			if y.Last >= x.Last {
				done = true
				continue
			}
			first = y.Last + 1
		}
		if !done {
			out.AddRange(first, x.Last)
		}
	}
	return out
}

// Union returns the sequences in r or o.
func (r SeqRanges) Union(o SeqRanges) SeqRanges {
	out := append(slices.Clone(r), o...)
	out.normalize()
	return out
}

func (r SeqRanges) String() string {
	parts := make([]string, len(r))
	for i, x := range r {
		parts[i] = strconv.FormatUint(x.First, 10)
		if x.Last != x.First {
			parts[i] += "-" + strconv.FormatUint(x.Last, 10)
		}
	}
	return strings.Join(parts, ", ")
}

// parseSeqRanges reads the String form ("" is the empty set).
func parseSeqRanges(s string) (SeqRanges, error) {
	var out SeqRanges
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, b, isRange := strings.Cut(part, "-")
		first, err1 := strconv.ParseUint(a, 10, 64)
		last, err2 := first, error(nil)
		if isRange {
			last, err2 = strconv.ParseUint(b, 10, 64)
		}
		if err1 != nil || err2 != nil || last < first || first == 0 {
			return nil, fmt.Errorf("bad sequence range %q", part)
		}
		out.AddRange(first, last)
	}
	return out, nil
}
