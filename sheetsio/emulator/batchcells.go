package emulator

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"
)

// gridRangeIn is GridRange as a request carries it: a missing start is 0,
// a missing end is the edge of the grid.
type gridRangeIn struct {
	SheetID          int64 `json:"sheetId"`
	StartRowIndex    *int  `json:"startRowIndex"`
	EndRowIndex      *int  `json:"endRowIndex"`
	StartColumnIndex *int  `json:"startColumnIndex"`
	EndColumnIndex   *int  `json:"endColumnIndex"`
}

// resolveGrid checks a GridRange against its sheet.
func (b *book) resolveGrid(in gridRangeIn) (*sheet, gridRange, error) {
	s := b.sheetByID(in.SheetID)
	if s == nil {
		return nil, gridRange{}, errorf(ErrInvalidArgument, "No grid with id: %d", in.SheetID)
	}
	g := gridRange{SheetID: s.ID, R0: deref(in.StartRowIndex), C0: deref(in.StartColumnIndex), R1: s.RowCount, C1: s.ColCount}
	if in.EndRowIndex != nil {
		g.R1 = *in.EndRowIndex
	}
	if in.EndColumnIndex != nil {
		g.C1 = *in.EndColumnIndex
	}
	if g.R0 < 0 || g.C0 < 0 || g.R1 > s.RowCount || g.C1 > s.ColCount || g.R0 > g.R1 || g.C0 > g.C1 {
		return nil, g, errorf(ErrGridLimits, "Range (%s) exceeds grid limits. Max rows: %d, max columns: %d",
			quoteForMessage(s.Title, a1Cells(g)), s.RowCount, s.ColCount)
	}
	return s, g, nil
}

func a1Cells(g gridRange) string {
	full := a1Of(&sheet{Title: "x"}, g)
	return strings.TrimPrefix(full, "x!")
}

// gridRangeJSON renders a GridRange like Google (zero fields omitted).
func gridRangeJSON(g gridRange) map[string]any {
	out := map[string]any{}
	for k, v := range map[string]int64{"sheetId": g.SheetID, "startRowIndex": int64(g.R0), "endRowIndex": int64(g.R1), "startColumnIndex": int64(g.C0), "endColumnIndex": int64(g.C1)} {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// cellIn is CellData as a request carries it.
type cellIn struct {
	UserEnteredValue *struct {
		NumberValue  *json.Number `json:"numberValue"`
		StringValue  *string      `json:"stringValue"`
		BoolValue    *bool        `json:"boolValue"`
		FormulaValue *string      `json:"formulaValue"`
	} `json:"userEnteredValue"`
	UserEnteredFormat *cellFormatIn   `json:"userEnteredFormat"`
	Note              *string         `json:"note"`
	DataValidation    json.RawMessage `json:"dataValidation"`
}

type rowIn struct {
	Values []cellIn `json:"values"`
}

// toCell converts a CellData's userEnteredValue.
func (c cellIn) toCell() (cellData, error) {
	v := c.UserEnteredValue
	switch {
	case v == nil:
		return cellData{}, nil
	case v.NumberValue != nil:
		cd, _, err := cellFromInput(*v.NumberValue, false, 0, 0)
		return cd, err
	case v.StringValue != nil:
		cd, _, err := cellFromInput(*v.StringValue, false, 0, 0)
		return cd, err
	case v.BoolValue != nil:
		return cellData{Kind: kindBool, Bool: *v.BoolValue}, nil
	case v.FormulaValue != nil:
		if utf8.RuneCountInString(*v.FormulaValue) > maxCellChars {
			return cellData{}, tooManyChars()
		}
		if !strings.HasPrefix(*v.FormulaValue, "=") {
			return cellData{Kind: kindString, Str: *v.FormulaValue}, nil
		}
		return cellData{Kind: kindFormula, Str: *v.FormulaValue}, nil
	}
	return cellData{}, nil
}

// applyCell writes the masked fields of in onto the cell at (r, c).
func applyCell(s *sheet, r, c int, in cellIn, mask map[string]bool) error {
	cur := s.cell(r, c)
	all := mask["*"]
	if all || mask["userEnteredValue"] {
		v, err := in.toCell()
		if err != nil {
			return err
		}
		cur = v.keepAttached(cur)
	}
	if formatMasked(mask) {
		applyNumberFormat(&cur, in.UserEnteredFormat)
	}
	if all || mask["note"] {
		cur.Note = deref(in.Note)
	}
	if all || mask["dataValidation"] {
		cur.DV = compactRule(in.DataValidation)
	}
	s.setCell(r, c, cur)
	return nil
}

func reqUpdateCells(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Rows   []rowIn `json:"rows"`
		Fields string  `json:"fields"`
		Start  *struct {
			SheetID     int64 `json:"sheetId"`
			RowIndex    int   `json:"rowIndex"`
			ColumnIndex int   `json:"columnIndex"`
		} `json:"start"`
		Range *gridRangeIn `json:"range"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	mask := parseMask(req.Fields)
	if len(mask) == 0 {
		return nil, errorf(ErrInvalidArgument, "At least one field must be updated, but 'fields' is empty.")
	}
	if req.Range != nil {
		s, g, err := b.resolveGrid(*req.Range)
		if err != nil {
			return nil, err
		}
		return nil, fillRange(s, g, req.Rows, mask)
	}
	if req.Start == nil {
		return nil, errorf(ErrInvalidArgument, "Either 'start' or 'range' must be set.")
	}
	st := gridRangeIn{SheetID: req.Start.SheetID, StartRowIndex: &req.Start.RowIndex, StartColumnIndex: &req.Start.ColumnIndex}
	s, g, err := b.resolveGrid(st)
	if err != nil {
		return nil, err
	}
	return nil, writeRows(s, g.R0, g.C0, req.Rows, mask)
}

// fillRange writes rows into g; cells of g not covered by rows get an
// empty CellData (clearing the masked fields), as Google does.
func fillRange(s *sheet, g gridRange, rows []rowIn, mask map[string]bool) error {
	for r := g.R0; r < g.R1; r++ {
		for c := g.C0; c < g.C1; c++ {
			var in cellIn
			if i, j := r-g.R0, c-g.C0; i < len(rows) && j < len(rows[i].Values) {
				in = rows[i].Values[j]
			}
			if err := applyCell(s, r, c, in, mask); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeRows(s *sheet, r0, c0 int, rows []rowIn, mask map[string]bool) error {
	for i, row := range rows {
		for j, in := range row.Values {
			if r0+i >= s.RowCount || c0+j >= s.ColCount {
				return errorf(ErrGridLimits, "Range (%s) exceeds grid limits. Max rows: %d, max columns: %d",
					quoteForMessage(s.Title, a1Cells(gridRange{R0: r0 + i, R1: r0 + i + 1, C0: c0 + j, C1: c0 + j + 1})), s.RowCount, s.ColCount)
			}
			if err := applyCell(s, r0+i, c0+j, in, mask); err != nil {
				return err
			}
		}
	}
	return nil
}

func reqAppendCells(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		SheetID int64   `json:"sheetId"`
		Rows    []rowIn `json:"rows"`
		Fields  string  `json:"fields"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s := b.sheetByID(req.SheetID)
	if s == nil {
		return nil, errorf(ErrInvalidArgument, "No grid with id: %d", req.SheetID)
	}
	at := s.lastRowWithData() + 1
	width := 0
	for _, r := range req.Rows {
		width = max(width, len(r.Values))
	}
	if err := b.makeRoom(s, at, 0, len(req.Rows), width, false); err != nil {
		return nil, err
	}
	return nil, writeRows(s, at, 0, req.Rows, parseMask(req.Fields))
}

// lastRowWithData is the index of the last row holding a value or note (-1 if none).
func (s *sheet) lastRowWithData() int {
	for r := len(s.Rows) - 1; r >= 0; r-- {
		for _, c := range s.Rows[r] {
			if !c.isEmpty() {
				return r
			}
		}
	}
	return -1
}

func reqRepeatCell(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Range  gridRangeIn `json:"range"`
		Cell   cellIn      `json:"cell"`
		Fields string      `json:"fields"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, g, err := b.resolveGrid(req.Range)
	if err != nil {
		return nil, err
	}
	mask := parseMask(req.Fields)
	if !mask["*"] && !mask["userEnteredValue"] && !mask["note"] && !mask["dataValidation"] && !formatMasked(mask) {
		return nil, nil // formatting the emulator does not model (wrapStrategy, colours, …)
	}
	for r := g.R0; r < g.R1; r++ {
		for c := g.C0; c < g.C1; c++ {
			if err := applyCell(s, r, c, req.Cell, mask); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// dimensionRangeIn is DimensionRange as a request carries it.
type dimensionRangeIn struct {
	SheetID    int64  `json:"sheetId"`
	Dimension  string `json:"dimension"`
	StartIndex *int   `json:"startIndex"`
	EndIndex   *int   `json:"endIndex"`
}

func (b *book) resolveDim(in dimensionRangeIn, forInsert bool) (*sheet, int, int, error) {
	s := b.sheetByID(in.SheetID)
	if s == nil {
		return nil, 0, 0, errorf(ErrInvalidArgument, "No grid with id: %d", in.SheetID)
	}
	size := s.RowCount
	switch in.Dimension {
	case dimRows:
	case dimCols:
		size = s.ColCount
	default:
		return nil, 0, 0, errorf(ErrInvalidArgument, "Invalid dimension: %q", in.Dimension)
	}
	start, end := deref(in.StartIndex), size
	if in.EndIndex != nil {
		end = *in.EndIndex
	}
	limit := size
	if forInsert {
		limit = size + 1
	}
	if start < 0 || end <= start || start >= limit || (!forInsert && end > size) {
		return nil, 0, 0, errorf(ErrInvalidArgument, "Invalid dimension range: [%d, %d) on a grid of %d.", start, end, size)
	}
	return s, start, end, nil
}

func reqInsertDimension(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Range dimensionRangeIn `json:"range"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, start, end, err := b.resolveDim(req.Range, true)
	if err != nil {
		return nil, err
	}
	rows, cols := s.RowCount, s.ColCount
	if end-start > maxCellsPerBook {
		return nil, checkGrid(maxCellsPerBook+1, 1)
	}
	if req.Range.Dimension == dimCols {
		cols += end - start
	} else {
		rows += end - start
	}
	if err := checkGrid(rows, cols); err != nil {
		return nil, err
	}
	if err := b.checkCells(rows*cols - s.RowCount*s.ColCount); err != nil {
		return nil, err
	}
	b.insertDim(s, req.Range.Dimension, start, end-start)
	return nil, nil
}

func reqDeleteDimension(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Range dimensionRangeIn `json:"range"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, start, end, err := b.resolveDim(req.Range, false)
	if err != nil {
		return nil, err
	}
	size := s.RowCount
	if req.Range.Dimension == dimCols {
		size = s.ColCount
	}
	if end-start >= size {
		return nil, errorf(ErrInvalidArgument, "You can't delete all the rows on the sheet.")
	}
	b.deleteDim(s, req.Range.Dimension, start, end-start)
	return nil, nil
}

func reqAppendDimension(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		SheetID   int64  `json:"sheetId"`
		Dimension string `json:"dimension"`
		Length    int    `json:"length"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s := b.sheetByID(req.SheetID)
	if s == nil {
		return nil, errorf(ErrInvalidArgument, "No grid with id: %d", req.SheetID)
	}
	if req.Length < 1 || (req.Dimension != dimRows && req.Dimension != dimCols) {
		return nil, errorf(ErrInvalidArgument, "Invalid appendDimension: dimension %q, length %d.", req.Dimension, req.Length)
	}
	if req.Length > maxCellsPerBook {
		return nil, checkGrid(maxCellsPerBook+1, 1)
	}
	rows, cols := s.RowCount, s.ColCount
	if req.Dimension == dimRows {
		rows += req.Length
	} else {
		cols += req.Length
	}
	if err := checkGrid(rows, cols); err != nil {
		return nil, err
	}
	if err := b.checkCells(rows*cols - s.RowCount*s.ColCount); err != nil {
		return nil, err
	}
	s.RowCount, s.ColCount = rows, cols
	return nil, nil
}

type sortSpec struct {
	DimensionIndex int    `json:"dimensionIndex"`
	SortOrder      string `json:"sortOrder"`
}

func reqSortRange(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Range     gridRangeIn `json:"range"`
		SortSpecs []sortSpec  `json:"sortSpecs"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, g, err := b.resolveGrid(req.Range)
	if err != nil {
		return nil, err
	}
	for _, sp := range req.SortSpecs {
		if sp.DimensionIndex < 0 || sp.DimensionIndex >= s.ColCount {
			return nil, errorf(ErrInvalidArgument, "Invalid sort dimension index %d.", sp.DimensionIndex)
		}
	}
	b.sortRows(s, g, req.SortSpecs)
	return nil, nil
}

// sortRows sorts the rows of g (cells within g's columns move; developer
// metadata on single rows inside g moves with its row). Empty cells sort
// last in both orders; numbers < text < booleans < errors.
func (b *book) sortRows(s *sheet, g gridRange, specs []sortSpec) {
	n := g.rows()
	idx := b.sortOrder(s, g, specs)
	old := make([][]cellData, n)
	for i := 0; i < n; i++ {
		r := g.R0 + i
		for c := g.C0; c < g.C1; c++ {
			old[i] = append(old[i], s.cell(r, c))
		}
	}
	newRowOf := map[int]int{}
	for to, from := range idx {
		newRowOf[g.R0+from] = g.R0 + to
		for j, cd := range old[from] {
			if !cd.isBlank() || !s.cell(g.R0+to, g.C0+j).isBlank() {
				s.setCell(g.R0+to, g.C0+j, cd)
			}
		}
	}
	for _, m := range b.Meta {
		if m.LocType == dimRows && m.SheetID == s.ID && m.End-m.Start == 1 {
			if to, ok := newRowOf[m.Start]; ok {
				m.Start, m.End = to, to+1
			}
		}
	}
}

// sortOrder returns the row offsets of g in sorted order (stable).
func (b *book) sortOrder(s *sheet, g gridRange, specs []sortSpec) []int {
	keys := make([][]effective, g.rows())
	idx := make([]int, g.rows())
	for i := range keys {
		idx[i] = i
		for _, sp := range specs {
			keys[i] = append(keys[i], b.effectiveOf(s, g.R0+i, sp.DimensionIndex))
		}
	}
	sort.SliceStable(idx, func(x, y int) bool { return lessKeys(keys[idx[x]], keys[idx[y]], specs) })
	return idx
}

func lessKeys(a, b []effective, specs []sortSpec) bool {
	for i, sp := range specs {
		c := compareForSort(a[i], b[i], sp.SortOrder == "DESCENDING")
		if c != 0 {
			return c < 0
		}
	}
	return false
}

func sortRank(v effective) int {
	switch v.Kind {
	case kindNumber:
		return 0
	case kindString:
		return 1
	case kindBool:
		return 2
	case kindError:
		return 3
	}
	return 4
}

func compareForSort(x, y effective, desc bool) int {
	rx, ry := sortRank(x), sortRank(y)
	if rx == 4 || ry == 4 {
		return rx/4 - ry/4
	}
	c := rx - ry
	if c == 0 {
		switch x.Kind {
		case kindNumber:
			c = cmpFloat(x.Num, y.Num)
		case kindString:
			c = strings.Compare(strings.ToLower(x.Str), strings.ToLower(y.Str))
		case kindBool:
			c = cmpFloat(boolNum(x.Bool), boolNum(y.Bool))
		}
	}
	if desc {
		return -c
	}
	return c
}

func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func reqMergeCells(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Range     gridRangeIn `json:"range"`
		MergeType string      `json:"mergeType"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, g, err := b.resolveGrid(req.Range)
	if err != nil {
		return nil, err
	}
	return nil, b.merge(s, g, req.MergeType)
}

// merge merges g (MERGE_ALL, MERGE_COLUMNS or MERGE_ROWS). Overlapping
// merges are replaced; only each merge's top-left value survives.
func (b *book) merge(s *sheet, g gridRange, mergeType string) error {
	var parts []gridRange
	switch mergeType {
	case "", "MERGE_ALL":
		parts = []gridRange{g}
	case "MERGE_COLUMNS":
		for c := g.C0; c < g.C1; c++ {
			parts = append(parts, gridRange{SheetID: s.ID, R0: g.R0, R1: g.R1, C0: c, C1: c + 1})
		}
	case "MERGE_ROWS":
		for r := g.R0; r < g.R1; r++ {
			parts = append(parts, gridRange{SheetID: s.ID, R0: r, R1: r + 1, C0: g.C0, C1: g.C1})
		}
	default:
		return errorf(ErrInvalidArgument, "Invalid mergeType: %q", mergeType)
	}
	s.unmerge(g)
	for _, p := range parts {
		if p.rows()*p.cols() < 2 {
			continue
		}
		for r := p.R0; r < p.R1; r++ {
			for c := p.C0; c < p.C1; c++ {
				if (r != p.R0 || c != p.C0) && s.cell(r, c).hasValue() {
					s.setValue(r, c, cellData{})
				}
			}
		}
		s.Merges = append(s.Merges, p)
	}
	return nil
}

func overlaps(a, b gridRange) bool {
	return a.R0 < b.R1 && b.R0 < a.R1 && a.C0 < b.C1 && b.C0 < a.C1
}

// unmerge removes every merge intersecting g.
func (s *sheet) unmerge(g gridRange) {
	kept := s.Merges[:0]
	for _, m := range s.Merges {
		if !overlaps(m, g) {
			kept = append(kept, m)
		}
	}
	s.Merges = kept
}

func reqUnmergeCells(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Range gridRangeIn `json:"range"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, g, err := b.resolveGrid(req.Range)
	if err != nil {
		return nil, err
	}
	s.unmerge(g)
	return nil, nil
}
