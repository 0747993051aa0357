package emulator

import (
	"strings"

	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// valueRange is the ValueRange JSON of the values API.
type valueRange struct {
	Range          string  `json:"range,omitempty"`
	MajorDimension *string `json:"majorDimension,omitempty"`
	Values         [][]any `json:"values,omitempty"`
}

func (v valueRange) major() string {
	if v.MajorDimension == nil || *v.MajorDimension == "" || *v.MajorDimension == "DIMENSION_UNSPECIFIED" {
		return "ROWS"
	}
	return *v.MajorDimension
}

// rowsOf returns the values in row-major order.
func (v valueRange) rowsOf() ([][]any, error) {
	switch v.major() {
	case "ROWS":
		return v.Values, nil
	case "COLUMNS":
		return transpose(v.Values), nil
	}
	return nil, errorf(ErrInvalidArgument, "Invalid value at 'data.major_dimension' (%s)", v.major())
}

func transpose(cols [][]any) [][]any {
	var rows [][]any
	for c, col := range cols {
		for r, v := range col {
			for len(rows) <= r {
				rows = append(rows, nil)
			}
			for len(rows[r]) < c {
				rows[r] = append(rows[r], nil)
			}
			rows[r] = append(rows[r], v)
		}
	}
	return rows
}

func (e *Emulator) dispatchValues(c call) (result, error) {
	switch c.op {
	case "values.get":
		return e.valuesGet(c)
	case "values.batchGet":
		return e.valuesBatchGet(c)
	case "values.update":
		return e.valuesUpdate(c)
	case "values.batchUpdate":
		return e.valuesBatchUpdate(c)
	case "values.append":
		return e.valuesAppend(c)
	case "values.clear":
		return e.valuesClear(c)
	case "values.batchClear":
		return e.valuesBatchClear(c)
	case "values.batchGetByDataFilter":
		return e.valuesBatchGetByDataFilter(c)
	case "values.batchUpdateByDataFilter":
		return e.valuesBatchUpdateByDataFilter(c)
	case "values.batchClearByDataFilter":
		return e.valuesBatchClearByDataFilter(c)
	}
	return result{}, errorf(ErrUnknownRequest, "The emulator does not implement %s.", c.op)
}

func readOpts(q map[string][]string, prefix string) (renderOpts, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	o := renderOpts{Value: get(prefix + "valueRenderOption"), DateTime: get(prefix + "dateTimeRenderOption"), Major: get("majorDimension")}
	if prefix != "" {
		o.Major = ""
	}
	return o.normalized()
}

// readRange renders one range as a ValueRange map (no "values" key when empty).
func (b *book) readRange(text string, o renderOpts) (map[string]any, error) {
	s, g, err := b.resolveBounded(text)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"range": a1Of(s, g), "majorDimension": o.Major}
	if vals := b.readGrid(s, g, o); vals != nil {
		out["values"] = vals
	}
	return out, nil
}

func (e *Emulator) valuesGet(c call) (result, error) {
	o, err := readOpts(c.query, "")
	if err != nil {
		return result{}, err
	}
	var out map[string]any
	err = e.withBook(c.id, func(b *book) error {
		out, err = b.readRange(c.rng, o)
		return err
	})
	return result{body: out}, err
}

func (e *Emulator) valuesBatchGet(c call) (result, error) {
	o, err := readOpts(c.query, "")
	if err != nil {
		return result{}, err
	}
	ranges := c.query["ranges"]
	vrs := []any{}
	err = e.withBook(c.id, func(b *book) error {
		for _, r := range ranges {
			vr, err := b.readRange(r, o)
			if err != nil {
				return err
			}
			vrs = append(vrs, vr)
		}
		return nil
	})
	out := map[string]any{"spreadsheetId": c.id}
	if len(vrs) > 0 {
		out["valueRanges"] = vrs
	}
	return result{body: out}, err
}

// writeOpts are the options of a values write.
type writeOpts struct {
	input        string
	withValues   bool
	responseOpts renderOpts
}

func parseWriteOpts(input string, include bool, value, dt string) (writeOpts, error) {
	if input != inputRaw && input != inputUserEntered {
		if input == "" || input == "INPUT_VALUE_OPTION_UNSPECIFIED" {
			return writeOpts{}, errorf(ErrInvalidArgument, "'valueInputOption' is required but not specified")
		}
		return writeOpts{}, errorf(ErrInvalidArgument, "Invalid value at 'value_input_option' (%s)", input)
	}
	o, err := renderOpts{Value: value, DateTime: dt}.normalized()
	return writeOpts{input: input, withValues: include, responseOpts: o}, err
}

func queryWriteOpts(q map[string][]string) (writeOpts, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return parseWriteOpts(get("valueInputOption"), strings.EqualFold(get("includeValuesInResponse"), "true"),
		get("responseValueRenderOption"), get("responseDateTimeRenderOption"))
}

// writeStats describes what a write touched.
type writeStats struct {
	s     *sheet
	box   gridRange
	cells int
	rows  map[int]bool
	cols  map[int]bool
}

// convertBlock turns row-major input into cells (nil = skip), validating
// every value before anything is written.
func convertBlock(rows [][]any, userEntered bool) ([][]*cellData, error) {
	out := make([][]*cellData, len(rows))
	for r, row := range rows {
		out[r] = make([]*cellData, len(row))
		for c, v := range row {
			cd, skip, err := cellFromInput(v, userEntered, r, c)
			if err != nil {
				return nil, err
			}
			if !skip {
				out[r][c] = &cd
			}
		}
	}
	return out, nil
}

func blockWidth(rows [][]*cellData) int {
	w := 0
	for _, r := range rows {
		w = max(w, len(r))
	}
	return w
}

// writeBlock writes cells with (R0, C0) as the top-left and reports the
// bounding box of the cells written.
func writeBlock(s *sheet, r0, c0 int, cells [][]*cellData) writeStats {
	st := writeStats{s: s, rows: map[int]bool{}, cols: map[int]bool{}}
	box := gridRange{SheetID: s.ID, R0: -1}
	for i, row := range cells {
		for j, cd := range row {
			if cd == nil {
				continue
			}
			s.setValue(r0+i, c0+j, *cd)
			st.cells++
			st.rows[r0+i], st.cols[c0+j] = true, true
			box = growBox(box, r0+i, c0+j)
		}
	}
	if box.R0 < 0 {
		box = gridRange{SheetID: s.ID, R0: r0, R1: r0 + 1, C0: c0, C1: c0 + 1}
	}
	st.box = box
	return st
}

func growBox(g gridRange, r, c int) gridRange {
	if g.R0 < 0 {
		return gridRange{SheetID: g.SheetID, R0: r, R1: r + 1, C0: c, C1: c + 1}
	}
	g.R0, g.R1 = min(g.R0, r), max(g.R1, r+1)
	g.C0, g.C1 = min(g.C0, c), max(g.C1, c+1)
	return g
}

// updateResponse builds an UpdateValuesResponse. As Google does,
// updatedRows and updatedColumns count the rows and columns that hold an
// updated cell (a sparse write of A1 and D6 into A1:D6 updated 2 rows and
// 2 columns), as the batch totals do; updatedRange is the bounding box.
func (b *book) updateResponse(st writeStats, o writeOpts) map[string]any {
	out := map[string]any{"spreadsheetId": b.ID, "updatedRange": a1Of(st.s, st.box)}
	if st.cells > 0 {
		out["updatedRows"], out["updatedColumns"], out["updatedCells"] = len(st.rows), len(st.cols), st.cells
	}
	if o.withValues {
		ro := o.responseOpts
		ro.Major = "ROWS"
		vr, _ := b.readRange(a1Of(st.s, st.box), ro)
		out["updatedData"] = vr
	}
	return out
}

// planWrite validates one ValueRange write into b and returns a function
// that performs it.
func (b *book) planWrite(rangeText string, vr valueRange, o writeOpts) (func() writeStats, error) {
	t, err := b.locate(rangeText)
	if err != nil {
		return nil, err
	}
	rows, err := vr.rowsOf()
	if err != nil {
		return nil, err
	}
	cells, err := convertBlock(rows, o.input == inputUserEntered)
	if err != nil {
		return nil, err
	}
	g, err := t.writeBox(len(cells), blockWidth(cells))
	if err != nil {
		return nil, err
	}
	return func() writeStats { return writeBlock(t.s, g.R0, g.C0, cells) }, nil
}

func (e *Emulator) valuesUpdate(c call) (result, error) {
	o, err := queryWriteOpts(c.query)
	if err != nil {
		return result{}, err
	}
	var vr valueRange
	if err := decodeBody(c.body, &vr); err != nil {
		return result{}, err
	}
	if err := sameRange(c.rng, vr.Range); err != nil {
		return result{}, err
	}
	var out map[string]any
	var cells int
	err = e.withBook(c.id, func(b *book) error {
		apply, err := b.planWrite(c.rng, vr, o)
		if err != nil {
			return err
		}
		st := apply()
		cells = st.cells
		out = b.updateResponse(st, o)
		return nil
	})
	return result{body: out, cells: cells}, err
}

func sameRange(path, body string) error {
	if body == "" || body == path {
		return nil
	}
	p, err1 := a1.Parse(path)
	q, err2 := a1.Parse(body)
	if err1 == nil && err2 == nil && p == q {
		return nil
	}
	return errorf(ErrInvalidArgument, "Requested entity range [%s] does not match the range in the body [%s].", path, body)
}

type batchUpdateValuesBody struct {
	ValueInputOption             string       `json:"valueInputOption"`
	Data                         []valueRange `json:"data"`
	IncludeValuesInResponse      bool         `json:"includeValuesInResponse"`
	ResponseValueRenderOption    string       `json:"responseValueRenderOption"`
	ResponseDateTimeRenderOption string       `json:"responseDateTimeRenderOption"`
}

func (e *Emulator) valuesBatchUpdate(c call) (result, error) {
	var body batchUpdateValuesBody
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	o, err := parseWriteOpts(body.ValueInputOption, body.IncludeValuesInResponse, body.ResponseValueRenderOption, body.ResponseDateTimeRenderOption)
	if err != nil {
		return result{}, err
	}
	var out map[string]any
	var cells int
	err = e.withBook(c.id, func(b *book) error {
		var plans []func() writeStats
		for _, vr := range body.Data {
			p, err := b.planWrite(vr.Range, vr, o)
			if err != nil {
				return err
			}
			plans = append(plans, p)
		}
		out, cells = b.runBatchWrites(plans, o)
		return nil
	})
	return result{body: out, cells: cells}, err
}

func (b *book) runBatchWrites(plans []func() writeStats, o writeOpts) (map[string]any, int) {
	out := map[string]any{"spreadsheetId": b.ID}
	var responses []any
	rows, cols, sheets := map[[2]int64]bool{}, map[[2]int64]bool{}, map[int64]bool{}
	cells := 0
	for _, p := range plans {
		st := p()
		responses = append(responses, b.updateResponse(st, o))
		for r := range st.rows {
			rows[[2]int64{st.s.ID, int64(r)}] = true
		}
		for c := range st.cols {
			cols[[2]int64{st.s.ID, int64(c)}] = true
		}
		if st.cells > 0 {
			sheets[st.s.ID] = true
		}
		cells += st.cells
	}
	if cells > 0 {
		out["totalUpdatedRows"], out["totalUpdatedColumns"] = len(rows), len(cols)
		out["totalUpdatedCells"], out["totalUpdatedSheets"] = cells, len(sheets)
	}
	if len(responses) > 0 {
		out["responses"] = responses
	}
	return out, cells
}

// clearRange clears values (notes and formats stay) and returns the echo.
func (b *book) clearRange(text string) (string, error) {
	s, g, err := b.resolveBounded(text)
	if err != nil {
		return "", err
	}
	clearValues(s, g)
	return a1Of(s, g), nil
}

func clearValues(s *sheet, g gridRange) {
	for r := g.R0; r < min(g.R1, len(s.Rows)); r++ {
		row := s.Rows[r]
		for c := g.C0; c < min(g.C1, len(row)); c++ {
			row[c] = cellData{}.keepAttached(row[c])
		}
	}
}

func (e *Emulator) valuesClear(c call) (result, error) {
	var cleared string
	err := e.withBook(c.id, func(b *book) error {
		var err error
		cleared, err = b.clearRange(c.rng)
		return err
	})
	return result{body: map[string]any{"spreadsheetId": c.id, "clearedRange": cleared}}, err
}

func (e *Emulator) valuesBatchClear(c call) (result, error) {
	var body struct {
		Ranges []string `json:"ranges"`
	}
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	var cleared []string
	err := e.withBook(c.id, func(b *book) error {
		var targets []sheetRange
		for _, r := range body.Ranges {
			s, g, err := b.resolveBounded(r)
			if err != nil {
				return err
			}
			targets = append(targets, sheetRange{s, g})
		}
		for _, t := range targets {
			clearValues(t.s, t.g)
			cleared = append(cleared, a1Of(t.s, t.g))
		}
		return nil
	})
	out := map[string]any{"spreadsheetId": c.id}
	if len(cleared) > 0 {
		out["clearedRanges"] = cleared
	}
	return result{body: out}, err
}
