package emulator

// Table detection for values.append. The search range is bounded to the
// grid; the seed is the last cell with a value inside it (row-major), and
// the table is the seed's "current region": the smallest rectangle around
// it whose bordering rows and columns (diagonals included) hold no values.
// New rows go below the table starting at its first column; with no table
// they go to the search range's top-left cell. This reproduces the recorded
// quirk where row 1 = x,"",y makes the table C1 and the next row land at C2.

import "github.com/hikoutei/hikoutei-go/sheetsio/a1"

func (s *sheet) filled(r, c int) bool { return s.cell(r, c).hasValue() }

// lastFilled returns the last cell with a value inside g, row-major.
func (s *sheet) lastFilled(g gridRange) (int, int, bool) {
	for r := min(g.R1, len(s.Rows)) - 1; r >= g.R0; r-- {
		row := s.Rows[r]
		for c := min(g.C1, len(row)) - 1; c >= g.C0; c-- {
			if row[c].hasValue() {
				return r, c, true
			}
		}
	}
	return 0, 0, false
}

func (s *sheet) rowSpanFilled(r, c0, c1 int) bool {
	if r < 0 || r >= s.RowCount {
		return false
	}
	for c := max(c0, 0); c < min(c1, s.ColCount); c++ {
		if s.filled(r, c) {
			return true
		}
	}
	return false
}

func (s *sheet) colSpanFilled(c, r0, r1 int) bool {
	if c < 0 || c >= s.ColCount {
		return false
	}
	for r := max(r0, 0); r < min(r1, s.RowCount, len(s.Rows)); r++ {
		if s.filled(r, c) {
			return true
		}
	}
	return false
}

// currentRegion grows a rectangle from (r, c) until it is surrounded by
// empty rows and columns.
func (s *sheet) currentRegion(r, c int) gridRange {
	g := gridRange{SheetID: s.ID, R0: r, R1: r + 1, C0: c, C1: c + 1}
	for changed := true; changed; {
		changed = false
		for s.rowSpanFilled(g.R1, g.C0-1, g.C1+1) {
			g.R1, changed = g.R1+1, true
		}
		for s.rowSpanFilled(g.R0-1, g.C0-1, g.C1+1) {
			g.R0, changed = g.R0-1, true
		}
		for s.colSpanFilled(g.C1, g.R0-1, g.R1+1) {
			g.C1, changed = g.C1+1, true
		}
		for s.colSpanFilled(g.C0-1, g.R0-1, g.R1+1) {
			g.C0, changed = g.C0-1, true
		}
	}
	return g
}

// findTable returns the table an append into g extends, if any.
func (s *sheet) findTable(g gridRange) (gridRange, bool) {
	r, c, ok := s.lastFilled(g)
	if !ok {
		return gridRange{}, false
	}
	return s.currentRegion(r, c), true
}

func (e *Emulator) valuesAppend(c call) (result, error) {
	o, err := queryWriteOpts(c.query)
	if err != nil {
		return result{}, err
	}
	insert := c.query.Get("insertDataOption")
	if insert != "" && insert != "OVERWRITE" && insert != "INSERT_ROWS" {
		return result{}, errorf(ErrInvalidArgument, "Invalid value at 'insert_data_option' (%s)", insert)
	}
	var vr valueRange
	if err := decodeBody(c.body, &vr); err != nil {
		return result{}, err
	}
	var out map[string]any
	var cells int
	err = e.withBook(c.id, func(b *book) error { // appendValues validates before it mutates
		var err error
		out, cells, err = b.appendValues(c.rng, vr, o, insert == "INSERT_ROWS")
		return err
	})
	return result{body: out, cells: cells}, err
}

func (b *book) appendValues(rangeText string, vr valueRange, o writeOpts, insertRows bool) (map[string]any, int, error) {
	s, g, err := b.resolveBounded(rangeText)
	if err != nil {
		return nil, 0, err
	}
	rows, err := vr.rowsOf()
	if err != nil {
		return nil, 0, err
	}
	cells, err := convertBlock(rows, o.input == inputUserEntered)
	if err != nil {
		return nil, 0, err
	}
	out := map[string]any{"spreadsheetId": b.ID}
	r0, c0 := g.R0, g.C0
	if table, ok := s.findTable(g); ok {
		out["tableRange"] = a1Of(s, table)
		r0, c0 = table.R1, table.C0
	}
	if err := b.makeRoom(s, r0, c0, len(cells), blockWidth(cells), insertRows); err != nil {
		return nil, 0, err
	}
	st := writeBlock(s, r0, c0, cells)
	out["updates"] = b.updateResponse(st, o)
	return out, st.cells, nil
}

// makeRoom grows the grid (or inserts rows) so an nr × nc block fits at
// (r0, c0), within the 10,000,000-cell limit. It checks before it mutates.
func (b *book) makeRoom(s *sheet, r0, c0, nr, nc int, insertRows bool) error {
	inserted := 0
	if insertRows && nr > 0 && r0 < s.RowCount {
		inserted = nr
	}
	needRows := max(r0+nr-(s.RowCount+inserted), 0)
	needCols := max(c0+nc-s.ColCount, 0)
	rows := s.RowCount + inserted + needRows
	if err := checkGrid(rows, s.ColCount+needCols); err != nil {
		return err
	}
	if err := b.checkCells((inserted+needRows)*s.ColCount + needCols*rows); err != nil {
		return err
	}
	if inserted > 0 {
		b.insertDim(s, dimRows, r0, inserted)
	}
	s.RowCount += needRows
	s.ColCount += needCols
	return nil
}

// checkGrid fails for a tab size Google cannot have: under 1 × 1, more than
// a1.MaxColumns columns, or more cells than a whole spreadsheet may hold.
// Call it before multiplying sizes: within these bounds rows × cols cannot
// overflow, so checkCells sees the true cell count.
func checkGrid(rows, cols int) error {
	if rows < 1 || cols < 1 {
		return errorf(ErrInvalidArgument, "Invalid grid size: rows %d, columns %d.", rows, cols)
	}
	if cols > a1.MaxColumns {
		return errorf(ErrInvalidArgument, "This action would increase the number of columns in the sheet above the limit of %d columns.", a1.MaxColumns)
	}
	if rows > maxCellsPerBook || rows*cols > maxCellsPerBook {
		return errorf(ErrInvalidArgument, "This action would increase the number of cells in the workbook above the limit of %d cells.", maxCellsPerBook)
	}
	return nil
}

// checkCells fails when adding extra cells would pass the 10,000,000-cell limit.
func (b *book) checkCells(extra int) error {
	if extra > 0 && b.totalCells()+extra > maxCellsPerBook {
		return errorf(ErrInvalidArgument, "This action would increase the number of cells in the workbook above the limit of %d cells.", maxCellsPerBook)
	}
	return nil
}
