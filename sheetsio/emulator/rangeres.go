package emulator

import (
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// target is an A1 range resolved against a book: the tab and the parsed
// (possibly open) range.
type target struct {
	s   *sheet
	raw a1.Range
	in  string
}

// locate parses text and finds its tab. Unknown tabs and malformed text
// give ErrRangeParse "Unable to parse range: <text>".
func (b *book) locate(text string) (target, error) {
	r, err := a1.Parse(text)
	if err != nil {
		return target{}, errorf(ErrRangeParse, "Unable to parse range: %s", text)
	}
	s := b.firstVisible()
	if r.HasSheet {
		s = b.sheetByTitle(r.Sheet)
	}
	if s == nil && r.WholeSheet {
		if n, ok := b.namedByName(r.Sheet); ok {
			return b.namedTarget(n, text)
		}
	}
	if s == nil {
		return target{}, errorf(ErrRangeParse, "Unable to parse range: %s", text)
	}
	return target{s: s, raw: r, in: text}, nil
}

// bound resolves open ends against the tab's grid; a range outside it gives
// ErrGridLimits with Google's message.
func (t target) bound() (gridRange, error) {
	b, err := t.raw.Bound(t.s.RowCount, t.s.ColCount)
	if err != nil {
		return gridRange{}, gridLimitError(t.s, t.raw)
	}
	return gridRange{SheetID: t.s.ID, R0: b.StartRow, R1: b.EndRow, C0: b.StartCol, C1: b.EndCol}, nil
}

func gridLimitError(s *sheet, r a1.Range) error {
	return errorf(ErrGridLimits, "Range (%s) exceeds grid limits. Max rows: %d, max columns: %d",
		quoteForMessage(s.Title, r.Cells()), s.RowCount, s.ColCount)
}

// a1Of formats a concrete grid range on s as Google echoes it.
func a1Of(s *sheet, g gridRange) string {
	r := a1.Range{Sheet: s.Title, HasSheet: true, StartRow: g.R0, EndRow: g.R1, StartCol: g.C0, EndCol: g.C1}
	return r.String()
}

// resolveBounded is locate + bound.
func (b *book) resolveBounded(text string) (*sheet, gridRange, error) {
	t, err := b.locate(text)
	if err != nil {
		return nil, gridRange{}, err
	}
	g, err := t.bound()
	return t.s, g, err
}

// writeBox computes where a block of nr × nc values lands for a values
// write into t: a single-cell range expands from its cell; any other range
// must contain the data.
func (t target) writeBox(nr, nc int) (gridRange, error) {
	r := t.raw
	g := gridRange{SheetID: t.s.ID, R0: r.StartRow, C0: r.StartCol, R1: r.StartRow + max(nr, 1), C1: r.StartCol + max(nc, 1)}
	single := !r.WholeSheet && r.Rows() == 1 && r.Cols() == 1
	if !single {
		if r.EndRow != a1.Open && g.R1 > r.EndRow {
			return g, errorf(ErrInvalidArgument, "Requested writing within range [%s], but tried writing to row [%d]", quoteForMessage(t.s.Title, r.Cells()), r.EndRow+1)
		}
		if r.EndCol != a1.Open && g.C1 > r.EndCol {
			return g, errorf(ErrInvalidArgument, "Requested writing within range [%s], but tried writing to column [%s]", quoteForMessage(t.s.Title, r.Cells()), a1.ColumnLabel(r.EndCol))
		}
	}
	if g.R1 > t.s.RowCount || g.C1 > t.s.ColCount {
		box := a1.Range{StartRow: g.R0, EndRow: g.R1, StartCol: g.C0, EndCol: g.C1}
		return g, gridLimitError(t.s, box)
	}
	return g, nil
}

// namedTarget resolves a named range used as an A1 range.
func (b *book) namedTarget(n namedRange, text string) (target, error) {
	s := b.sheetByID(n.Range.SheetID)
	if s == nil {
		return target{}, errorf(ErrRangeParse, "Unable to parse range: %s", text)
	}
	g := n.Range
	r := a1.Range{Sheet: s.Title, HasSheet: true, StartRow: g.R0, EndRow: g.R1, StartCol: g.C0, EndCol: g.C1}
	return target{s: s, raw: r, in: text}, nil
}
