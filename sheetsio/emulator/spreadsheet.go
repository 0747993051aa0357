package emulator

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// getOpts select what spreadsheets.get returns.
type getOpts struct {
	gridData bool
	ranges   []string
}

// spreadsheetJSON renders the Spreadsheet resource.
func (b *book) spreadsheetJSON(o getOpts) map[string]any {
	props := map[string]any{"title": b.Title, "locale": b.Locale, "autoRecalc": b.AutoRecalc, "timeZone": b.TimeZone}
	out := map[string]any{"spreadsheetId": b.ID, "properties": props,
		"spreadsheetUrl": "https://docs.google.com/spreadsheets/d/" + b.ID + "/edit"}
	sheets := []any{}
	for _, s := range b.Sheets {
		sheets = append(sheets, b.sheetJSON(s, o.gridData, nil))
	}
	out["sheets"] = sheets
	if metas := b.metaAt("SPREADSHEET", 0); len(metas) > 0 {
		out["developerMetadata"] = metas
	}
	if len(b.Named) > 0 {
		var named []any
		for _, n := range b.Named {
			named = append(named, namedJSON(n))
		}
		out["namedRanges"] = named
	}
	return out
}

func (b *book) metaAt(locType string, sheetID int64) []any {
	var out []any
	for _, m := range b.Meta {
		if m.LocType == locType && (locType == "SPREADSHEET" || m.SheetID == sheetID) {
			out = append(out, metaJSON(m))
		}
	}
	return out
}

// sheetJSON renders one Sheet; grids (when gridData) are the ranges to
// include, nil meaning the whole tab.
func (b *book) sheetJSON(s *sheet, gridData bool, grids []gridRange) map[string]any {
	out := map[string]any{"properties": b.sheetPropsJSON(s)}
	if len(s.Merges) > 0 {
		var ms []any
		for _, m := range s.Merges {
			ms = append(ms, gridRangeJSON(m))
		}
		out["merges"] = ms
	}
	if len(s.Protected) > 0 {
		var ps []any
		for _, p := range s.Protected {
			ps = append(ps, protectedJSON(p))
		}
		out["protectedRanges"] = ps
	}
	if metas := b.metaAt("SHEET", s.ID); len(metas) > 0 {
		out["developerMetadata"] = metas
	}
	addGroupsJSON(out, s)
	if len(s.BasicFilter) > 0 {
		out["basicFilter"] = json.RawMessage(s.BasicFilter)
	}
	if gridData {
		if grids == nil {
			grids = []gridRange{{SheetID: s.ID, R0: 0, R1: s.RowCount, C0: 0, C1: s.ColCount}}
		}
		var data []any
		for _, g := range grids {
			data = append(data, b.gridDataJSON(s, g))
		}
		out["data"] = data
	}
	return out
}

// gridDataJSON renders GridData: cells with userEnteredValue,
// effectiveValue (errorValue for errors), formattedValue and note, plus
// row/column metadata carrying developer metadata.
func (b *book) gridDataJSON(s *sheet, g gridRange) map[string]any {
	b.noteRead(s, g)
	out := map[string]any{}
	if g.R0 > 0 {
		out["startRow"] = g.R0
	}
	if g.C0 > 0 {
		out["startColumn"] = g.C0
	}
	var rows []any
	last := -1
	for r := g.R0; r < min(g.R1, len(s.Rows)); r++ {
		row := b.rowDataJSON(s, r, g)
		rows = append(rows, row)
		if len(row) > 0 {
			last = len(rows) - 1
		}
	}
	if last >= 0 {
		out["rowData"] = rows[:last+1]
	}
	out["rowMetadata"] = b.dimMetaJSON(s, dimRows, g.R0, g.R1, 21)
	out["columnMetadata"] = b.dimMetaJSON(s, dimCols, g.C0, g.C1, 100)
	return out
}

func (b *book) rowDataJSON(s *sheet, r int, g gridRange) map[string]any {
	var cells []any
	last := -1
	for c := g.C0; c < min(g.C1, len(s.Rows[r])); c++ {
		cj := b.cellJSON(s, r, c)
		cells = append(cells, cj)
		if len(cj) > 0 {
			last = len(cells) - 1
		}
	}
	if last < 0 {
		return map[string]any{}
	}
	return map[string]any{"values": cells[:last+1]}
}

func (b *book) cellJSON(s *sheet, r, c int) map[string]any {
	cd := s.cell(r, c)
	out := map[string]any{}
	if cd.Note != "" {
		out["note"] = cd.Note
	}
	if cd.DV != "" {
		out["dataValidation"] = json.RawMessage(cd.DV)
	}
	if !cd.hasValue() {
		return out
	}
	out["userEnteredValue"] = extendedValue(cd)
	v := b.effectiveOf(s, r, c)
	switch v.Kind {
	case kindNumber:
		out["effectiveValue"] = map[string]any{"numberValue": v.Num}
	case kindString:
		out["effectiveValue"] = map[string]any{"stringValue": v.Str}
	case kindBool:
		out["effectiveValue"] = map[string]any{"boolValue": v.Bool}
	case kindError:
		out["effectiveValue"] = map[string]any{"errorValue": map[string]any{"type": v.ErrType, "message": v.ErrMsg}}
	}
	out["formattedValue"] = display(v)
	return out
}

func extendedValue(cd cellData) map[string]any {
	switch cd.Kind {
	case kindNumber:
		return map[string]any{"numberValue": cd.Num}
	case kindBool:
		return map[string]any{"boolValue": cd.Bool}
	case kindFormula:
		return map[string]any{"formulaValue": cd.Str}
	}
	return map[string]any{"stringValue": cd.Str}
}

func (b *book) dimMetaJSON(s *sheet, dim string, from, to, px int) []any {
	out := make([]any, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, map[string]any{"pixelSize": px})
	}
	for _, m := range b.Meta {
		if m.LocType == dim && m.SheetID == s.ID && m.Start >= from && m.Start < to {
			entry := out[m.Start-from].(map[string]any)
			list, _ := entry["developerMetadata"].([]any)
			entry["developerMetadata"] = append(list, metaJSON(m))
		}
	}
	return out
}

func (e *Emulator) apiGet(c call) (result, error) {
	fields := c.query.Get("fields")
	mask := parseFieldMask(fields)
	o := getOpts{gridData: c.query.Get("includeGridData") == "true", ranges: c.query["ranges"]}
	if fields != "" {
		o.gridData = mask.mentions("sheets", "data")
	}
	var out map[string]any
	err := e.withBook(c.id, func(b *book) error {
		var err error
		out, err = b.getWithRanges(o)
		return err
	})
	if err != nil || fields == "" {
		return result{body: out}, err
	}
	filtered, _ := mask.apply(out).(map[string]any)
	trimGridData(filtered)
	return result{body: filtered}, nil
}

// getWithRanges renders the spreadsheet limited to the tabs (and grid
// data) of the requested A1 ranges.
func (b *book) getWithRanges(o getOpts) (map[string]any, error) {
	out := b.spreadsheetJSON(getOpts{gridData: o.gridData && len(o.ranges) == 0})
	if len(o.ranges) == 0 {
		return out, nil
	}
	var order []*sheet
	grids := map[*sheet][]gridRange{}
	for _, r := range o.ranges {
		s, g, err := b.resolveBounded(r)
		if err != nil {
			return nil, err
		}
		if _, ok := grids[s]; !ok {
			order = append(order, s)
		}
		grids[s] = append(grids[s], g)
	}
	sheets := []any{}
	for _, s := range order {
		sheets = append(sheets, b.sheetJSON(s, o.gridData, grids[s]))
	}
	out["sheets"] = sheets
	return out, nil
}

type createBody struct {
	Properties struct {
		Title    string `json:"title"`
		Locale   string `json:"locale"`
		TimeZone string `json:"timeZone"`
	} `json:"properties"`
	Sheets []struct {
		Properties sheetPropsIn `json:"properties"`
	} `json:"sheets"`
}

func (e *Emulator) apiCreate(c call) (result, error) {
	var body createBody
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	id := e.newSpreadsheetID()
	b := newBook(id, body.Properties.Title)
	if body.Properties.Locale != "" {
		b.Locale = body.Properties.Locale
	}
	if body.Properties.TimeZone != "" {
		b.TimeZone = body.Properties.TimeZone
	}
	if err := b.createSheets(body); err != nil {
		return result{}, err
	}
	e.books[id] = b
	return result{body: b.spreadsheetJSON(getOpts{})}, nil
}

func (b *book) createSheets(body createBody) error {
	if len(body.Sheets) == 0 {
		return nil
	}
	b.Sheets = nil
	for i, sp := range body.Sheets {
		raw, _ := json.Marshal(map[string]any{"properties": sp.Properties})
		if i == 0 && sp.Properties.SheetID == nil {
			zero := int64(0)
			sp.Properties.SheetID = &zero
			raw, _ = json.Marshal(map[string]any{"properties": sp.Properties})
		}
		if _, err := reqAddSheet(b, raw); err != nil {
			return prefixRequestError(err, i, "sheets")
		}
	}
	return nil
}

// newSpreadsheetID derives a Google-looking 44-character id from a counter.
func (e *Emulator) newSpreadsheetID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for n := len(e.books); ; n++ {
		var sb strings.Builder
		sb.WriteByte('1')
		for i := 0; sb.Len() < 44; i++ {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%d", n, i)
			x := h.Sum64()
			for k := 0; k < 8 && sb.Len() < 44; k++ {
				sb.WriteByte(alphabet[x%64])
				x /= 64
			}
		}
		if _, taken := e.books[sb.String()]; !taken {
			return sb.String()
		}
	}
}

func addGroupsJSON(out map[string]any, s *sheet) {
	for _, dim := range []string{dimRows, dimCols} {
		var list []any
		for _, g := range s.Groups {
			if g.Dim == dim {
				list = append(list, groupJSON(s, g))
			}
		}
		if len(list) > 0 {
			out[map[string]string{dimRows: "rowGroups", dimCols: "columnGroups"}[dim]] = list
		}
	}
}

// apiCopyTo copies one tab into another spreadsheet (sheets.copyTo): the
// copy is titled "Copy of <title>" (numbered if taken) and goes last.
func (e *Emulator) apiCopyTo(c call) (result, error) {
	var body struct {
		DestinationSpreadsheetID string `json:"destinationSpreadsheetId"`
	}
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	if body.DestinationSpreadsheetID == "" {
		return result{}, errorf(ErrInvalidArgument, "Invalid destinationSpreadsheetId: it must not be empty.")
	}
	if e.isDenied(body.DestinationSpreadsheetID) {
		return result{}, permissionDenied().err
	}
	sheetID, perr := strconv.ParseInt(c.rng, 10, 64)
	var src *sheet
	err := e.withBook(c.id, func(b *book) error {
		if src = b.sheetByID(sheetID); perr != nil || src == nil {
			return errorf(ErrNotFound, "Requested entity was not found.")
		}
		src = src.clone()
		return nil
	})
	if err != nil {
		return result{}, err
	}
	var out map[string]any
	err = e.mutateBook(body.DestinationSpreadsheetID, func(b *book) error {
		s := src
		s.Title, s.Protected, s.ID = b.copyTitle(src.Title), nil, b.nextID()
		if err := b.checkCells(s.RowCount * s.ColCount); err != nil {
			return err
		}
		b.Sheets = append(b.Sheets, s)
		out = b.sheetPropsJSON(s)
		return nil
	})
	return result{body: out}, err
}

func (b *book) copyTitle(title string) string {
	t := "Copy of " + title
	for n := 2; b.sheetByTitle(t) != nil; n++ {
		t = fmt.Sprintf("Copy of %s %d", title, n)
	}
	return t
}
