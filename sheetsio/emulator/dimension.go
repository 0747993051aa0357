package emulator

// Dimension names as the API spells them.
const (
	dimRows = "ROWS"
	dimCols = "COLUMNS"
)

// spanShift moves the half-open span [a, b) for an insertion of n at at.
// Like Google, inserting at a span's start pushes the whole span.
func spanInsert(a, b, at, n int) (int, int) {
	if at <= a {
		return a + n, b + n
	}
	if at < b {
		return a, b + n
	}
	return a, b
}

// spanDelete shrinks [a, b) for a deletion of [at, at+n); ok is false when
// nothing of the span is left.
func spanDelete(a, b, at, n int) (int, int, bool) {
	end := at + n
	cut := func(x int) int {
		switch {
		case x <= at:
			return x
		case x >= end:
			return x - n
		}
		return at
	}
	a, b = cut(a), cut(b)
	return a, b, b > a
}

// insertDim inserts n empty rows or columns before index at.
func (b *book) insertDim(s *sheet, dim string, at, n int) {
	if dim == dimRows {
		if at < len(s.Rows) {
			s.Rows = append(s.Rows[:at], append(make([][]cellData, n), s.Rows[at:]...)...)
		}
		s.RowCount += n
	} else {
		for i, row := range s.Rows {
			if at < len(row) {
				s.Rows[i] = append(row[:at], append(make([]cellData, n), row[at:]...)...)
			}
		}
		s.ColCount += n
	}
	b.adjust(s, dim, func(a, z int) (int, int, bool) {
		a, z = spanInsert(a, z, at, n)
		return a, z, true
	})
}

// deleteDim deletes n rows or columns starting at index at. Metadata on a
// deleted row or column is deleted with it.
func (b *book) deleteDim(s *sheet, dim string, at, n int) {
	if dim == dimRows {
		if at < len(s.Rows) {
			s.Rows = append(s.Rows[:at], s.Rows[min(at+n, len(s.Rows)):]...)
		}
		s.RowCount -= n
	} else {
		for i, row := range s.Rows {
			if at < len(row) {
				s.Rows[i] = append(row[:at], row[min(at+n, len(row)):]...)
			}
		}
		s.ColCount -= n
	}
	b.adjust(s, dim, func(a, z int) (int, int, bool) { return spanDelete(a, z, at, n) })
}

// adjust applies a span transform to everything anchored on dim of s:
// merges, protected ranges and developer metadata.
func (b *book) adjust(s *sheet, dim string, f func(a, z int) (int, int, bool)) {
	moveRange := func(g gridRange) (gridRange, bool) {
		var ok bool
		if dim == dimRows {
			g.R0, g.R1, ok = f(g.R0, g.R1)
		} else {
			g.C0, g.C1, ok = f(g.C0, g.C1)
		}
		return g, ok
	}
	merges := s.Merges[:0]
	for _, m := range s.Merges {
		if m2, ok := moveRange(m); ok {
			merges = append(merges, m2)
		}
	}
	s.Merges = merges
	prot := s.Protected[:0]
	for _, p := range s.Protected {
		if g, ok := moveRange(p.Range); ok {
			p.Range = g
			prot = append(prot, p)
		}
	}
	s.Protected = prot
	named := b.Named[:0]
	for _, n := range b.Named {
		if n.Range.SheetID == s.ID {
			g, ok := moveRange(n.Range)
			if !ok {
				continue
			}
			n.Range = g
		}
		named = append(named, n)
	}
	b.Named = named
	s.Groups = adjustGroups(s.Groups, dim, f)
	b.adjustMeta(s.ID, dim, f)
}

func (b *book) adjustMeta(sheetID int64, dim string, f func(a, z int) (int, int, bool)) {
	kept := b.Meta[:0]
	for _, m := range b.Meta {
		if m.LocType == dim && m.SheetID == sheetID {
			a, z, ok := f(m.Start, m.End)
			if !ok {
				continue
			}
			m.Start, m.End = a, z
		}
		kept = append(kept, m)
	}
	b.Meta = kept
}

// resize sets the grid size, dropping data and anchors beyond it.
func (b *book) resize(s *sheet, rows, cols int) {
	if rows < s.RowCount {
		b.deleteDim(s, dimRows, rows, s.RowCount-rows)
	}
	if cols < s.ColCount {
		b.deleteDim(s, dimCols, cols, s.ColCount-cols)
	}
	s.RowCount, s.ColCount = max(rows, s.RowCount), max(cols, s.ColCount)
}

func adjustGroups(groups []dimGroup, dim string, f func(a, z int) (int, int, bool)) []dimGroup {
	kept := groups[:0]
	for _, g := range groups {
		if g.Dim == dim {
			a, z, ok := f(g.Start, g.End)
			if !ok {
				continue
			}
			g.Start, g.End = a, z
		}
		kept = append(kept, g)
	}
	return kept
}
