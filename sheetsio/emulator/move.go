package emulator

import (
	"encoding/json"
	"slices"
)

// moveDimension, as Google documents it: the rows or columns of source
// move to destinationIndex, counted BEFORE the source is taken out (to
// move columns B:C between D and E, source is [1, 3) and the destination
// 4; the result reads A, D, B, C, E). Everything on the moved rows or
// columns goes with them: values, notes, data validation, developer
// metadata, and merges, protected and named ranges and groups that stay
// contiguous (one that the move splits keeps the span from its first to
// its last moved index). A destination inside the source moves nothing.
// Formulas keep their text (references are not rewritten).

func reqMoveDimension(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Source           dimensionRangeIn `json:"source"`
		DestinationIndex *int             `json:"destinationIndex"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, start, end, err := b.resolveDim(req.Source, false)
	if err != nil {
		return nil, err
	}
	size := s.RowCount
	if req.Source.Dimension == dimCols {
		size = s.ColCount
	}
	dest := deref(req.DestinationIndex)
	if dest < 0 || dest > size {
		return nil, errorf(ErrInvalidArgument, "Invalid destinationIndex %d on a grid of %d.", dest, size)
	}
	if dest >= start && dest <= end {
		return nil, nil
	}
	b.moveDim(s, req.Source.Dimension, movePerm(start, end, dest))
	return nil, nil
}

// perm maps an index before a move to its index after it.
type perm func(i int) int

// movePerm is the index map of moving [start, end) to dest (counted
// before the removal), dest outside [start, end].
func movePerm(start, end, dest int) perm {
	n := end - start
	return func(i int) int {
		switch {
		case i >= start && i < end && dest < start:
			return dest + i - start
		case i >= start && i < end:
			return dest - n + i - start
		case dest < start && i >= dest && i < start:
			return i + n
		case dest > end && i >= end && i < dest:
			return i - n
		}
		return i
	}
}

// moveDim moves the cells and everything anchored on dim of s by p.
func (b *book) moveDim(s *sheet, dim string, p perm) {
	if dim == dimRows {
		s.Rows = permuted(s.Rows, p, func(r []cellData) bool { return len(r) == 0 })
	} else {
		for i, row := range s.Rows {
			s.Rows[i] = permuted(row, p, cellData.isBlank)
		}
	}
	b.adjust(s, dim, func(a, z int) (int, int, bool) {
		lo, hi := p(a), p(a)
		for i := a + 1; i < z; i++ {
			lo, hi = min(lo, p(i)), max(hi, p(i))
		}
		return lo, hi + 1, true
	})
}

// permuted returns xs with xs[i] at p(i), trimmed of trailing blanks.
func permuted[T any](xs []T, p perm, blank func(T) bool) []T {
	n := 0
	for i := range xs {
		if !blank(xs[i]) {
			n = max(n, p(i)+1)
		}
	}
	out := make([]T, n)
	for i := range xs {
		if j := p(i); j < n {
			out[j] = xs[i]
		}
	}
	for len(out) > 0 && blank(out[len(out)-1]) {
		out = out[:len(out)-1]
	}
	return slices.Clip(out)
}
