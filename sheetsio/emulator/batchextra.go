package emulator

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

func extraHandlers() map[string]requestHandler {
	return map[string]requestHandler{
		"addNamedRange":            reqAddNamedRange,
		"updateNamedRange":         reqUpdateNamedRange,
		"deleteNamedRange":         reqDeleteNamedRange,
		"findReplace":              reqFindReplace,
		"copyPaste":                reqCopyPaste,
		"cutPaste":                 reqCutPaste,
		"addDimensionGroup":        reqAddDimensionGroup,
		"deleteDimensionGroup":     reqDeleteDimensionGroup,
		"updateDimensionGroup":     reqFormattingOnly,
		"setBasicFilter":           reqSetBasicFilter,
		"clearBasicFilter":         reqClearBasicFilter,
		"setDataValidation":        reqSetDataValidation,
		"addConditionalFormatRule": reqFormattingOnly,
		"trimWhitespace":           reqTrimWhitespace,
	}
}

type namedRangeIn struct {
	NamedRangeID string       `json:"namedRangeId"`
	Name         string       `json:"name"`
	Range        *gridRangeIn `json:"range"`
}

var reNamedRange = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

func namedJSON(n namedRange) map[string]any {
	return map[string]any{"namedRangeId": n.ID, "name": n.Name, "range": gridRangeJSON(n.Range)}
}

func (b *book) checkRangeName(name, selfID string) error {
	if !reNamedRange.MatchString(name) || name == "" || strings.EqualFold(name, "TRUE") || strings.EqualFold(name, "FALSE") {
		return errorf(ErrInvalidArgument, "Invalid name for a named range: %s", name)
	}
	for _, n := range b.Named {
		if n.ID != selfID && strings.EqualFold(n.Name, name) {
			return errorf(ErrInvalidArgument, "Named range with name %q already exists.", name)
		}
	}
	return nil
}

func reqAddNamedRange(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		NamedRange namedRangeIn `json:"namedRange"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	in := req.NamedRange
	if in.Range == nil {
		return nil, errorf(ErrInvalidArgument, "A named range must have a range.")
	}
	if err := b.checkRangeName(in.Name, ""); err != nil {
		return nil, err
	}
	_, g, err := b.resolveGrid(*in.Range)
	if err != nil {
		return nil, err
	}
	n := namedRange{ID: in.NamedRangeID, Name: in.Name, Range: g}
	if n.ID == "" {
		n.ID = strconv.FormatInt(b.nextID(), 36)
	}
	b.Named = append(b.Named, n)
	return map[string]any{"namedRange": namedJSON(n)}, nil
}

func (b *book) namedIndex(id string) int {
	for i, n := range b.Named {
		if n.ID == id {
			return i
		}
	}
	return -1
}

func reqUpdateNamedRange(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		NamedRange namedRangeIn `json:"namedRange"`
		Fields     string       `json:"fields"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	i := b.namedIndex(req.NamedRange.NamedRangeID)
	if i < 0 {
		return nil, errorf(ErrInvalidArgument, "No named range with id %s.", req.NamedRange.NamedRangeID)
	}
	mask := parseMask(req.Fields)
	if mask["name"] || mask["*"] {
		if err := b.checkRangeName(req.NamedRange.Name, b.Named[i].ID); err != nil {
			return nil, err
		}
		b.Named[i].Name = req.NamedRange.Name
	}
	if (mask["range"] || mask["*"]) && req.NamedRange.Range != nil {
		_, g, err := b.resolveGrid(*req.NamedRange.Range)
		if err != nil {
			return nil, err
		}
		b.Named[i].Range = g
	}
	return nil, nil
}

func reqDeleteNamedRange(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		NamedRangeID string `json:"namedRangeId"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	i := b.namedIndex(req.NamedRangeID)
	if i < 0 {
		return nil, errorf(ErrInvalidArgument, "No named range with id %s.", req.NamedRangeID)
	}
	b.Named = append(b.Named[:i], b.Named[i+1:]...)
	return nil, nil
}

// namedByName finds a named range for A1 resolution.
func (b *book) namedByName(name string) (namedRange, bool) {
	for _, n := range b.Named {
		if strings.EqualFold(n.Name, name) {
			return n, true
		}
	}
	return namedRange{}, false
}

func reqFindReplace(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Find            string       `json:"find"`
		Replacement     string       `json:"replacement"`
		MatchCase       bool         `json:"matchCase"`
		MatchEntireCell bool         `json:"matchEntireCell"`
		SearchByRegex   bool         `json:"searchByRegex"`
		IncludeFormulas bool         `json:"includeFormulas"`
		Range           *gridRangeIn `json:"range"`
		SheetID         *int64       `json:"sheetId"`
		AllSheets       bool         `json:"allSheets"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	pattern := regexp.QuoteMeta(req.Find)
	if req.SearchByRegex {
		pattern = req.Find
	}
	if req.MatchEntireCell {
		pattern = "^(?:" + pattern + ")$"
	}
	if !req.MatchCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil || req.Find == "" {
		return nil, errorf(ErrInvalidArgument, "Invalid find pattern.")
	}
	targets, err := b.findTargets(req.Range, req.SheetID, req.AllSheets)
	if err != nil {
		return nil, err
	}
	st := replaceStats{rows: map[[2]int64]bool{}, sheets: map[int64]bool{}}
	for _, t := range targets {
		b.replaceIn(t.s, t.g, re, req.Replacement, req.IncludeFormulas, &st)
	}
	return st.reply(), nil
}

type sheetRange struct {
	s *sheet
	g gridRange
}

func (b *book) findTargets(rng *gridRangeIn, sheetID *int64, all bool) ([]sheetRange, error) {
	var out []sheetRange
	switch {
	case rng != nil:
		s, g, err := b.resolveGrid(*rng)
		if err != nil {
			return nil, err
		}
		out = append(out, sheetRange{s, g})
	case sheetID != nil:
		s := b.sheetByID(*sheetID)
		if s == nil {
			return nil, errorf(ErrInvalidArgument, "No grid with id: %d", *sheetID)
		}
		out = append(out, sheetRange{s, fullGrid(s)})
	case all:
		for _, s := range b.Sheets {
			out = append(out, sheetRange{s, fullGrid(s)})
		}
	default:
		return nil, errorf(ErrInvalidArgument, "One of range, sheetId or allSheets must be set.")
	}
	return out, nil
}

func fullGrid(s *sheet) gridRange {
	return gridRange{SheetID: s.ID, R0: 0, R1: s.RowCount, C0: 0, C1: s.ColCount}
}

type replaceStats struct {
	values, formulas, occurrences int
	rows                          map[[2]int64]bool
	sheets                        map[int64]bool
}

func (st *replaceStats) reply() map[string]any {
	out := map[string]any{}
	for k, v := range map[string]int{"valuesChanged": st.values, "formulasChanged": st.formulas,
		"rowsChanged": len(st.rows), "sheetsChanged": len(st.sheets), "occurrencesChanged": st.occurrences} {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

func (b *book) replaceIn(s *sheet, g gridRange, re *regexp.Regexp, repl string, formulas bool, st *replaceStats) {
	for r := g.R0; r < min(g.R1, len(s.Rows)); r++ {
		for c := g.C0; c < min(g.C1, len(s.Rows[r])); c++ {
			cd := s.Rows[r][c]
			if cd.Kind != kindString && !(formulas && cd.Kind == kindFormula) {
				continue
			}
			n := len(re.FindAllStringIndex(cd.Str, -1))
			if n == 0 {
				continue
			}
			cd.Str = re.ReplaceAllString(cd.Str, repl)
			s.Rows[r][c] = cd
			st.occurrences += n
			if cd.Kind == kindFormula {
				st.formulas++
			} else {
				st.values++
			}
			st.rows[[2]int64{s.ID, int64(r)}] = true
			st.sheets[s.ID] = true
		}
	}
}

func reqCopyPaste(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Source           gridRangeIn `json:"source"`
		Destination      gridRangeIn `json:"destination"`
		PasteType        string      `json:"pasteType"`
		PasteOrientation string      `json:"pasteOrientation"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	src, sg, err := b.resolveGrid(req.Source)
	if err != nil {
		return nil, err
	}
	dst, dg, err := b.resolveGrid(req.Destination)
	if err != nil {
		return nil, err
	}
	block := copyBlock(src, sg, req.PasteOrientation == "TRANSPOSE")
	return nil, pasteTiled(dst, dg, block, req.PasteType)
}

// copyBlock snapshots a range (optionally transposed).
func copyBlock(s *sheet, g gridRange, transpose bool) [][]cellData {
	block := make([][]cellData, g.rows())
	for i := range block {
		for c := g.C0; c < g.C1; c++ {
			block[i] = append(block[i], s.cell(g.R0+i, c))
		}
	}
	if !transpose {
		return block
	}
	t := make([][]cellData, g.cols())
	for j := range t {
		for i := range block {
			t[j] = append(t[j], block[i][j])
		}
	}
	return t
}

// pasteTiled repeats block over dg (at least once), like Google's copyPaste.
func pasteTiled(s *sheet, dg gridRange, block [][]cellData, pasteType string) error {
	if len(block) == 0 || len(block[0]) == 0 {
		return nil
	}
	h, w := len(block), len(block[0])
	rows, cols := max(dg.rows()/h, 1)*h, max(dg.cols()/w, 1)*w
	if dg.R0+rows > s.RowCount || dg.C0+cols > s.ColCount {
		return errorf(ErrGridLimits, "Range (%s) exceeds grid limits. Max rows: %d, max columns: %d",
			quoteForMessage(s.Title, a1Cells(gridRange{R0: dg.R0, R1: dg.R0 + rows, C0: dg.C0, C1: dg.C0 + cols})), s.RowCount, s.ColCount)
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			pasteCell(s, dg.R0+i, dg.C0+j, block[i%h][j%w], pasteType)
		}
	}
	return nil
}

func pasteCell(s *sheet, r, c int, cd cellData, pasteType string) {
	switch pasteType {
	case "", "PASTE_NORMAL", "PASTE_NO_BORDERS":
		s.setCell(r, c, cd)
	case "PASTE_VALUES":
		v := cd
		if cd.Kind == kindFormula {
			v = cellData{}
		}
		s.setValue(r, c, v)
	case "PASTE_FORMULA":
		s.setValue(r, c, cd)
	}
}

func reqCutPaste(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Source      gridRangeIn `json:"source"`
		Destination struct {
			SheetID     int64 `json:"sheetId"`
			RowIndex    int   `json:"rowIndex"`
			ColumnIndex int   `json:"columnIndex"`
		} `json:"destination"`
		PasteType string `json:"pasteType"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	src, sg, err := b.resolveGrid(req.Source)
	if err != nil {
		return nil, err
	}
	d := req.Destination
	dst, dg, err := b.resolveGrid(gridRangeIn{SheetID: d.SheetID, StartRowIndex: &d.RowIndex, StartColumnIndex: &d.ColumnIndex})
	if err != nil {
		return nil, err
	}
	block := copyBlock(src, sg, false)
	for r := sg.R0; r < sg.R1; r++ {
		for c := sg.C0; c < sg.C1; c++ {
			src.setCell(r, c, cellData{})
		}
	}
	dg.R1, dg.C1 = dg.R0+sg.rows(), dg.C0+sg.cols()
	return nil, pasteTiled(dst, dg, block, req.PasteType)
}

func groupJSON(s *sheet, g dimGroup) map[string]any {
	dr := map[string]any{"dimension": g.Dim, "endIndex": g.End}
	if s.ID != 0 {
		dr["sheetId"] = s.ID
	}
	if g.Start != 0 {
		dr["startIndex"] = g.Start
	}
	out := map[string]any{"range": dr, "depth": g.Depth}
	if g.Collapsed {
		out["collapsed"] = true
	}
	return out
}

func groupsJSON(s *sheet) []any {
	out := []any{}
	for _, g := range s.Groups {
		out = append(out, groupJSON(s, g))
	}
	return out
}

func reqAddDimensionGroup(b *book, raw json.RawMessage) (any, error) {
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
	depth := 1
	for _, g := range s.Groups {
		if g.Dim == req.Range.Dimension && g.Start <= start && end <= g.End {
			depth = max(depth, g.Depth+1)
		}
	}
	s.Groups = append(s.Groups, dimGroup{Dim: req.Range.Dimension, Start: start, End: end, Depth: depth})
	return map[string]any{"dimensionGroups": groupsJSON(s)}, nil
}

func reqDeleteDimensionGroup(b *book, raw json.RawMessage) (any, error) {
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
	for i := len(s.Groups) - 1; i >= 0; i-- {
		g := s.Groups[i]
		if g.Dim == req.Range.Dimension && g.Start == start && g.End == end {
			s.Groups = append(s.Groups[:i], s.Groups[i+1:]...)
			return map[string]any{"dimensionGroups": groupsJSON(s)}, nil
		}
	}
	return nil, errorf(ErrInvalidArgument, "No dimension group matches the range.")
}

func reqSetBasicFilter(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Filter struct {
			Range gridRangeIn `json:"range"`
		} `json:"filter"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s, g, err := b.resolveGrid(req.Filter.Range)
	if err != nil {
		return nil, err
	}
	s.BasicFilter, _ = json.Marshal(map[string]any{"range": gridRangeJSON(g)})
	return nil, nil
}

func reqClearBasicFilter(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		SheetID int64 `json:"sheetId"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s := b.sheetByID(req.SheetID)
	if s == nil {
		return nil, errorf(ErrInvalidArgument, "No grid with id: %d", req.SheetID)
	}
	s.BasicFilter = nil
	return nil, nil
}

func reqTrimWhitespace(b *book, raw json.RawMessage) (any, error) {
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
	changed := 0
	for r := g.R0; r < min(g.R1, len(s.Rows)); r++ {
		for c := g.C0; c < min(g.C1, len(s.Rows[r])); c++ {
			cd := s.Rows[r][c]
			if t := strings.Join(strings.Fields(cd.Str), " "); cd.Kind == kindString && t != cd.Str {
				cd.Str = t
				s.Rows[r][c] = cd
				changed++
			}
		}
	}
	out := map[string]any{}
	if changed > 0 {
		out["cellsChangedCount"] = changed
	}
	return out, nil
}
