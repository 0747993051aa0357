package emulator

import (
	"strings"

	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// Person edits a spreadsheet the way someone in the Sheets UI would. Its
// edits bypass quotas, latency and faults and are not counted. Tabs are
// named by title; rows are 1-based like the UI. Errors: ErrNotFound for an
// unknown spreadsheet or tab, ErrRangeParse for a bad cell reference,
// ErrGridLimits for a cell outside the grid.
type Person struct {
	e  *Emulator
	id string
}

// Person returns the editor for one spreadsheet (created on first edit when
// AutoCreate is on).
func (e *Emulator) Person(spreadsheetID string) *Person {
	return &Person{e: e, id: spreadsheetID}
}

// edit runs fn on the named tab under the state lock. Every edit validates
// before it mutates, so a failed edit changes nothing (no copy needed).
func (p *Person) edit(tab string, fn func(b *book, s *sheet) error) error {
	return p.e.inBook(p.id, true, func(b *book) error {
		s := b.sheetByTitle(tab)
		if s == nil {
			return errorf(ErrNotFound, "no tab with that title")
		}
		return fn(b, s)
	})
}

func (p *Person) cellAt(s *sheet, ref string) (int, int, error) {
	r, err := a1.ParseCells(ref)
	if err != nil || r.Rows() != 1 || r.Cols() != 1 {
		return 0, 0, errorf(ErrRangeParse, "Unable to parse range: %s", ref)
	}
	if r.StartRow >= s.RowCount || r.StartCol >= s.ColCount {
		return 0, 0, gridLimitError(s, r)
	}
	return r.StartRow, r.StartCol, nil
}

// Type types text into a cell (e.g. "B3") with USER_ENTERED semantics:
// "=…" is a formula, "0050" becomes 50, "2020-01-01" a date, "'0050" text,
// "" clears the value.
func (p *Person) Type(tab, cell, text string) error {
	return p.e.edited(p.id, tab, p.edit(tab, func(b *book, s *sheet) error {
		r, c, err := p.cellAt(s, cell)
		if err != nil {
			return err
		}
		s.setValue(r, c, parseTyped(text))
		return nil
	}))
}

// LookAndType is one look at a tab and one keystroke in the same moment:
// decide sees the tab as Displayed shows it and returns the cell to type
// into and the text (Type's semantics); an empty cell types nothing. No
// change of the spreadsheet comes between the look and the typing, so a
// cell chosen by the header it showed is typed under that header. decide
// must not call the emulator.
func (p *Person) LookAndType(tab string, decide func(shown [][]string) (cell, text string)) error {
	typed := false
	err := p.edit(tab, func(b *book, s *sheet) error {
		ref, text := decide(b.displayedTab(s))
		if ref == "" {
			return nil
		}
		typed = true
		r, c, err := p.cellAt(s, ref)
		if err != nil {
			return err
		}
		s.setValue(r, c, parseTyped(text))
		return nil
	})
	if !typed {
		return err
	}
	return p.e.edited(p.id, tab, err)
}

// TypeFormula enters a formula into a cell; a missing leading '=' is added.
func (p *Person) TypeFormula(tab, cell, formula string) error {
	if !strings.HasPrefix(formula, "=") {
		formula = "=" + formula
	}
	return p.Type(tab, cell, formula)
}

// InsertRows inserts n empty rows before 1-based row `before` (anchors on
// later rows, such as developer metadata, move down).
func (p *Person) InsertRows(tab string, before, n int) error {
	return p.edit(tab, func(b *book, s *sheet) error {
		if before < 1 || before > s.RowCount+1 || n < 1 {
			return errorf(ErrInvalidArgument, "invalid row insertion")
		}
		b.insertDim(s, dimRows, before-1, n)
		return nil
	})
}

// DeleteRows deletes n rows starting at 1-based row `first`; developer
// metadata on deleted rows is deleted with them.
func (p *Person) DeleteRows(tab string, first, n int) error {
	return p.edit(tab, func(b *book, s *sheet) error {
		if first < 1 || n < 1 || first-1+n > s.RowCount || n >= s.RowCount {
			return errorf(ErrInvalidArgument, "invalid row deletion")
		}
		b.deleteDim(s, dimRows, first-1, n)
		return nil
	})
}

// SortByColumn sorts the tab's rows below headerRows by a column label
// ("B"), ascending or descending, like Data › Sort range. Rows move with
// their developer metadata.
func (p *Person) SortByColumn(tab, column string, descending bool, headerRows int) error {
	return p.edit(tab, func(b *book, s *sheet) error {
		col, err := a1.ColumnIndex(column)
		if err != nil || col >= s.ColCount || headerRows < 0 || headerRows >= s.RowCount {
			return errorf(ErrInvalidArgument, "invalid sort column or header rows")
		}
		order := "ASCENDING"
		if descending {
			order = "DESCENDING"
		}
		g := gridRange{SheetID: s.ID, R0: headerRows, R1: s.RowCount, C0: 0, C1: s.ColCount}
		b.sortRows(s, g, []sortSpec{{DimensionIndex: col, SortOrder: order}})
		return nil
	})
}

// RenameTab renames a tab (its sheetId is unchanged).
func (p *Person) RenameTab(oldTitle, newTitle string) error {
	return p.edit(oldTitle, func(b *book, s *sheet) error {
		if err := b.checkTitle(newTitle, s); err != nil {
			return err
		}
		s.Title = newTitle
		return nil
	})
}

// Merge merges a range of the tab ("A1:B2"); only the top-left value stays.
func (p *Person) Merge(tab, cells string) error {
	return p.edit(tab, func(b *book, s *sheet) error {
		r, err := a1.ParseCells(cells)
		if err != nil {
			return errorf(ErrRangeParse, "Unable to parse range: %s", cells)
		}
		bounded, err := r.Bound(s.RowCount, s.ColCount)
		if err != nil {
			return gridLimitError(s, r)
		}
		g := gridRange{SheetID: s.ID, R0: bounded.StartRow, R1: bounded.EndRow, C0: bounded.StartCol, C1: bounded.EndCol}
		return b.merge(s, g, "MERGE_ALL")
	})
}

// PasteRow copies 1-based row `row` (values and formulas, not notes or
// metadata) to a new row after the last row with data, growing the grid if
// needed, and returns the new row's 1-based number.
func (p *Person) PasteRow(tab string, row int) (int, error) {
	var at int
	err := p.edit(tab, func(b *book, s *sheet) error {
		if row < 1 || row > s.RowCount {
			return errorf(ErrInvalidArgument, "invalid row")
		}
		src := make([]cellData, s.ColCount)
		for c := range src {
			src[c] = s.cell(row-1, c)
			src[c].Note = ""
		}
		at = s.lastRowWithData() + 1
		if err := b.makeRoom(s, at, 0, 1, 0, false); err != nil {
			return err
		}
		for c, cd := range src {
			if cd.hasValue() {
				s.setValue(at, c, cd)
			}
		}
		return nil
	})
	return at + 1, p.e.edited(p.id, tab, err)
}

// Displayed returns the tab as the UI shows it: formatted strings, trailing
// empty cells and rows trimmed.
func (p *Person) Displayed(tab string) ([][]string, error) {
	var out [][]string
	err := p.e.inBook(p.id, true, func(b *book) error {
		s := b.sheetByTitle(tab)
		if s == nil {
			return errorf(ErrNotFound, "no tab with that title")
		}
		out = b.displayedTab(s)
		return nil
	})
	return out, err
}

// AddTab adds a tab with the given title and grid size and returns its sheetId.
func (p *Person) AddTab(title string, rows, cols int) (int64, error) {
	var id int64
	err := p.e.inBook(p.id, true, func(b *book) error {
		if err := b.checkTitle(title, nil); err != nil {
			return err
		}
		if err := checkGrid(rows, cols); err != nil {
			return err
		}
		if err := b.checkCells(rows * cols); err != nil {
			return err
		}
		s := &sheet{ID: b.nextID(), Title: title, RowCount: rows, ColCount: cols}
		b.Sheets = append(b.Sheets, s)
		id = s.ID
		return nil
	})
	return id, err
}

// ResizeTab sets a tab's grid size (rows × columns), like adding or
// deleting rows and columns at the end in the UI.
func (p *Person) ResizeTab(tab string, rows, cols int) error {
	return p.edit(tab, func(b *book, s *sheet) error {
		if err := checkGrid(rows, cols); err != nil {
			return err
		}
		if err := b.checkCells(rows*cols - s.RowCount*s.ColCount); err != nil {
			return err
		}
		b.resize(s, rows, cols)
		return nil
	})
}

// GridCells is the spreadsheet's grid: rows × columns of every tab summed,
// filled or not (what the 10,000,000-cell limit counts).
func (p *Person) GridCells() (int, error) {
	n := 0
	err := p.e.inBook(p.id, false, func(b *book) error {
		n = b.totalCells()
		return nil
	})
	return n, err
}
