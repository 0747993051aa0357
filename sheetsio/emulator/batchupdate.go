package emulator

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// requestHandler applies one batchUpdate request to a (cloned) book and
// returns its reply body (nil = {}).
type requestHandler func(b *book, raw json.RawMessage) (any, error)

// requestHandlers are the batchUpdate request kinds the emulator knows.
// Formatting-only kinds are accepted after validating their sheet and
// otherwise ignored (the emulator keeps no formats).
var requestHandlers = mergeHandlers(coreHandlers(), extraHandlers())

func mergeHandlers(sets ...map[string]requestHandler) map[string]requestHandler {
	out := map[string]requestHandler{}
	for _, set := range sets {
		for k, h := range set {
			out[k] = h
		}
	}
	return out
}

func coreHandlers() map[string]requestHandler {
	return map[string]requestHandler{
		"addSheet":                    reqAddSheet,
		"deleteSheet":                 reqDeleteSheet,
		"duplicateSheet":              reqDuplicateSheet,
		"updateSheetProperties":       reqUpdateSheetProperties,
		"updateSpreadsheetProperties": reqUpdateSpreadsheetProperties,
		"updateCells":                 reqUpdateCells,
		"appendCells":                 reqAppendCells,
		"repeatCell":                  reqRepeatCell,
		"insertDimension":             reqInsertDimension,
		"deleteDimension":             reqDeleteDimension,
		"moveDimension":               reqMoveDimension,
		"appendDimension":             reqAppendDimension,
		"sortRange":                   reqSortRange,
		"mergeCells":                  reqMergeCells,
		"unmergeCells":                reqUnmergeCells,
		"createDeveloperMetadata":     reqCreateMeta,
		"updateDeveloperMetadata":     reqUpdateMeta,
		"deleteDeveloperMetadata":     reqDeleteMeta,
		"addProtectedRange":           reqAddProtected,
		"updateProtectedRange":        reqUpdateProtected,
		"deleteProtectedRange":        reqDeleteProtected,
		"updateDimensionProperties":   reqFormattingOnly,
		"autoResizeDimensions":        reqFormattingOnly,
		"updateBorders":               reqFormattingOnly,
	}
}

// batchUpdateBody is spreadsheets.batchUpdate's body. The response
// options are Google's: includeSpreadsheetInResponse adds
// updatedSpreadsheet, rendered after every request was applied, in the
// same atomic step; responseRanges limits it to the tabs and grid data of
// those A1 ranges; responseIncludeGridData adds grid data (ignored when a
// field mask is set: the mask decides).
type batchUpdateBody struct {
	Requests                     []map[string]json.RawMessage `json:"requests"`
	IncludeSpreadsheetInResponse bool                         `json:"includeSpreadsheetInResponse"`
	ResponseRanges               []string                     `json:"responseRanges"`
	ResponseIncludeGridData      bool                         `json:"responseIncludeGridData"`
}

func (e *Emulator) apiBatchUpdate(c call) (result, error) {
	var body batchUpdateBody
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	if len(body.Requests) == 0 {
		return result{}, errorf(ErrInvalidArgument, "Must specify at least one request.")
	}
	fields := c.query.Get("fields")
	mask := parseFieldMask(fields)
	var out map[string]any
	err := e.mutateBook(c.id, func(b *book) error {
		replies, err := applyRequests(b, body.Requests)
		if err != nil {
			return err
		}
		out = map[string]any{"spreadsheetId": b.ID, "replies": replies}
		if !body.IncludeSpreadsheetInResponse {
			return nil
		}
		o := getOpts{gridData: body.ResponseIncludeGridData, ranges: body.ResponseRanges}
		if fields != "" {
			o.gridData = mask.mentions("updatedSpreadsheet", "sheets", "data")
		}
		out["updatedSpreadsheet"], err = b.getWithRanges(o) // an unparsable range fails the whole batch
		return err
	})
	if err != nil || fields == "" {
		return result{body: out, cells: countRequestCells(body.Requests)}, err
	}
	filtered, _ := mask.apply(out).(map[string]any)
	trimGridData(filtered)
	return result{body: filtered, cells: countRequestCells(body.Requests)}, nil
}

// applyRequests applies every request in order; the first failure aborts
// (the caller discards the clone, so nothing is applied).
func applyRequests(b *book, reqs []map[string]json.RawMessage) ([]any, error) {
	replies := make([]any, 0, len(reqs))
	for i, req := range reqs {
		if len(req) != 1 {
			return nil, errorf(ErrInvalidArgument, "Invalid requests[%d]: exactly one request kind must be set.", i)
		}
		for kind, raw := range req {
			h, ok := requestHandlers[kind]
			if !ok {
				return nil, errorf(ErrUnknownRequest, "Invalid JSON payload received. Unknown name %q at 'requests[%d]': Cannot find field.", kind, i)
			}
			reply, err := h(b, raw)
			if err != nil {
				return nil, prefixRequestError(err, i, kind)
			}
			if reply == nil {
				reply = map[string]any{}
			} else {
				reply = map[string]any{kind: reply}
			}
			replies = append(replies, reply)
		}
	}
	return replies, nil
}

func prefixRequestError(err error, i int, kind string) error {
	e := *asAPIError(err)
	e.Message = fmt.Sprintf("Invalid requests[%d].%s: %s", i, kind, e.Message)
	return &e
}

// countRequestCells estimates the cells a batch writes (rows × values).
func countRequestCells(reqs []map[string]json.RawMessage) int {
	n := 0
	for _, req := range reqs {
		for _, raw := range req {
			n += strings.Count(string(raw), "userEnteredValue")
		}
	}
	return n
}

func decodeReq(raw json.RawMessage, v any) error {
	if err := decodeBody(raw, v); err != nil {
		return errorf(ErrInvalidArgument, "%s", asAPIError(err).Message)
	}
	return nil
}

// sheetPropsIn is SheetProperties as a request carries it.
type sheetPropsIn struct {
	SheetID        *int64          `json:"sheetId"`
	Title          *string         `json:"title"`
	Index          *int            `json:"index"`
	SheetType      string          `json:"sheetType"`
	Hidden         *bool           `json:"hidden"`
	RightToLeft    *bool           `json:"rightToLeft"`
	TabColorStyle  json.RawMessage `json:"tabColorStyle"`
	TabColor       json.RawMessage `json:"tabColor"`
	GridProperties struct {
		RowCount          *int  `json:"rowCount"`
		ColumnCount       *int  `json:"columnCount"`
		FrozenRowCount    *int  `json:"frozenRowCount"`
		FrozenColumnCount *int  `json:"frozenColumnCount"`
		HideGridlines     *bool `json:"hideGridlines"`
	} `json:"gridProperties"`
}

// sheetPropsJSON renders SheetProperties like Google (false/zero omitted).
func (b *book) sheetPropsJSON(s *sheet) map[string]any {
	grid := map[string]any{"rowCount": s.RowCount, "columnCount": s.ColCount}
	if s.FrozenRows > 0 {
		grid["frozenRowCount"] = s.FrozenRows
	}
	if s.FrozenCols > 0 {
		grid["frozenColumnCount"] = s.FrozenCols
	}
	if s.HideGridlines {
		grid["hideGridlines"] = true
	}
	p := map[string]any{"sheetId": s.ID, "title": s.Title, "index": b.indexOf(s), "sheetType": "GRID", "gridProperties": grid}
	if s.Hidden {
		p["hidden"] = true
	}
	if s.RightToLeft {
		p["rightToLeft"] = true
	}
	if len(s.TabColor) > 0 {
		p["tabColorStyle"] = json.RawMessage(s.TabColor)
	}
	return p
}

func reqAddSheet(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Properties sheetPropsIn `json:"properties"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	p := req.Properties
	if p.SheetType != "" && p.SheetType != "GRID" {
		return nil, errorf(ErrInvalidArgument, "Only GRID sheets are supported by the emulator.")
	}
	s := &sheet{Title: b.defaultTitle(), RowCount: defaultRows, ColCount: defaultCols}
	if p.Title != nil {
		s.Title = *p.Title
	}
	if err := b.checkTitle(s.Title, nil); err != nil {
		return nil, err
	}
	if err := b.assignSheetID(s, p.SheetID); err != nil {
		return nil, err
	}
	if err := applyGridProps(b, s, p, nil); err != nil {
		return nil, err
	}
	at := len(b.Sheets)
	if p.Index != nil {
		at = min(max(*p.Index, 0), len(b.Sheets))
	}
	b.Sheets = append(b.Sheets[:at], append([]*sheet{s}, b.Sheets[at:]...)...)
	if p.Hidden != nil {
		s.Hidden = *p.Hidden
	}
	return map[string]any{"properties": b.sheetPropsJSON(s)}, nil
}

func (b *book) assignSheetID(s *sheet, want *int64) error {
	if want == nil {
		s.ID = b.nextID()
		return nil
	}
	if *want < 0 || b.sheetByID(*want) != nil {
		return errorf(ErrInvalidArgument, "A sheet with id %d already exists.", *want)
	}
	s.ID = *want
	return nil
}

func (b *book) defaultTitle() string {
	for n := len(b.Sheets) + 1; ; n++ {
		t := fmt.Sprintf("Sheet%d", n)
		if b.sheetByTitle(t) == nil {
			return t
		}
	}
}

// checkTitle validates a new tab title (self is the tab being renamed).
func (b *book) checkTitle(title string, self *sheet) error {
	if strings.TrimSpace(title) == "" {
		return errorf(ErrInvalidArgument, "The sheet name cannot be empty.")
	}
	if len([]rune(title)) > 100 {
		return errorf(ErrInvalidArgument, "The sheet name cannot be longer than 100 characters.")
	}
	for _, s := range b.Sheets {
		if s != self && strings.EqualFold(s.Title, title) {
			return errorf(ErrInvalidArgument, "A sheet with the name \"%s\" already exists. Please enter another name.", title)
		}
	}
	return nil
}

// applyGridProps applies gridProperties (only masked ones when mask != nil).
func applyGridProps(b *book, s *sheet, p sheetPropsIn, mask map[string]bool) error {
	gp := p.GridProperties
	want := func(name string, set bool) bool {
		if mask == nil {
			return set
		}
		return mask["gridProperties."+name] || mask["gridProperties"] || (mask["*"] && set)
	}
	rows, cols := s.RowCount, s.ColCount
	if want("rowCount", gp.RowCount != nil) {
		rows = deref(gp.RowCount)
	}
	if want("columnCount", gp.ColumnCount != nil) {
		cols = deref(gp.ColumnCount)
	}
	if err := checkGrid(rows, cols); err != nil {
		return err
	}
	existing := s.RowCount * s.ColCount
	if b.indexOf(s) < 0 {
		existing = 0
	}
	if err := b.checkCells(rows*cols - existing); err != nil {
		return err
	}
	b.resize(s, rows, cols)
	if want("frozenRowCount", gp.FrozenRowCount != nil) {
		s.FrozenRows = deref(gp.FrozenRowCount)
	}
	if want("frozenColumnCount", gp.FrozenColumnCount != nil) {
		s.FrozenCols = deref(gp.FrozenColumnCount)
	}
	if want("hideGridlines", gp.HideGridlines != nil) {
		s.HideGridlines = gp.HideGridlines != nil && *gp.HideGridlines
	}
	if s.FrozenRows >= s.RowCount || s.FrozenCols >= s.ColCount || s.FrozenRows < 0 || s.FrozenCols < 0 {
		return errorf(ErrInvalidArgument, "You can't freeze all visible rows or columns on the sheet.")
	}
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func reqDeleteSheet(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		SheetID int64 `json:"sheetId"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	s := b.sheetByID(req.SheetID)
	if s == nil {
		return nil, errorf(ErrInvalidArgument, "No sheet with id: %d", req.SheetID)
	}
	if len(b.Sheets) == 1 || b.visibleCount(s) == 0 {
		return nil, errorf(ErrInvalidArgument, "You can't remove all the sheets in a document.")
	}
	i := b.indexOf(s)
	b.Sheets = append(b.Sheets[:i], b.Sheets[i+1:]...)
	kept := b.Meta[:0]
	for _, m := range b.Meta {
		if m.LocType == "SPREADSHEET" || m.SheetID != s.ID {
			kept = append(kept, m)
		}
	}
	b.Meta = kept
	return nil, nil
}

// visibleCount counts visible tabs other than except.
func (b *book) visibleCount(except *sheet) int {
	n := 0
	for _, s := range b.Sheets {
		if s != except && !s.Hidden {
			n++
		}
	}
	return n
}

func reqDuplicateSheet(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		SourceSheetID    int64  `json:"sourceSheetId"`
		InsertSheetIndex *int   `json:"insertSheetIndex"`
		NewSheetID       *int64 `json:"newSheetId"`
		NewSheetName     string `json:"newSheetName"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	src := b.sheetByID(req.SourceSheetID)
	if src == nil {
		return nil, errorf(ErrInvalidArgument, "No sheet with id: %d", req.SourceSheetID)
	}
	s := src.clone()
	s.Title = req.NewSheetName
	if s.Title == "" {
		s.Title = "Copy of " + src.Title
	}
	if err := b.checkTitle(s.Title, nil); err != nil {
		return nil, err
	}
	if err := b.assignSheetID(s, req.NewSheetID); err != nil {
		return nil, err
	}
	s.Protected = nil
	at := min(max(deref(req.InsertSheetIndex), 0), len(b.Sheets))
	if req.InsertSheetIndex == nil {
		at = b.indexOf(src) + 1
	}
	b.Sheets = append(b.Sheets[:at], append([]*sheet{s}, b.Sheets[at:]...)...)
	return map[string]any{"properties": b.sheetPropsJSON(s)}, nil
}

// parseMask flattens a field mask ("a/b,c.d", "a(b,c)") into the set of
// dotted leaf paths it names.
func parseMask(fields string) map[string]bool {
	m := map[string]bool{}
	flattenMask(parseFieldMask(fields), "", m)
	return m
}

func flattenMask(n maskNode, prefix string, into map[string]bool) {
	for k, sub := range n {
		path := prefix + k
		if len(sub) == 0 {
			into[path] = true
		}
		flattenMask(sub, path+".", into)
	}
}

func reqUpdateSheetProperties(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Properties sheetPropsIn `json:"properties"`
		Fields     string       `json:"fields"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	mask := parseMask(req.Fields)
	if len(mask) == 0 {
		return nil, errorf(ErrInvalidArgument, "At least one field must be updated, but 'fields' is empty.")
	}
	p := req.Properties
	s := b.sheetByID(deref(p.SheetID))
	if s == nil {
		return nil, errorf(ErrInvalidArgument, "No grid with id: %d", deref(p.SheetID))
	}
	return nil, b.updateSheet(s, p, mask)
}

func (b *book) updateSheet(s *sheet, p sheetPropsIn, mask map[string]bool) error {
	has := func(name string, set bool) bool { return mask[name] || (mask["*"] && set) }
	if has("title", p.Title != nil) {
		if err := b.checkTitle(deref(p.Title), s); err != nil {
			return err
		}
		s.Title = deref(p.Title)
	}
	if has("hidden", p.Hidden != nil) {
		if deref(p.Hidden) && b.visibleCount(s) == 0 {
			return errorf(ErrInvalidArgument, "You can't hide all the sheets in a document.")
		}
		s.Hidden = deref(p.Hidden)
	}
	if has("rightToLeft", p.RightToLeft != nil) {
		s.RightToLeft = deref(p.RightToLeft)
	}
	if has("tabColorStyle", p.TabColorStyle != nil) || has("tabColor", p.TabColor != nil) {
		s.TabColor = tabColor(p)
	}
	if err := applyGridProps(b, s, p, mask); err != nil {
		return err
	}
	if has("index", p.Index != nil) {
		b.moveSheet(s, deref(p.Index))
	}
	return nil
}

func tabColor(p sheetPropsIn) json.RawMessage {
	c := p.TabColorStyle
	if len(c) == 0 {
		c = p.TabColor
	}
	if string(c) == "null" || string(c) == "{}" || strings.Contains(string(c), `"rgbColor":null`) {
		return nil
	}
	return append(json.RawMessage(nil), c...)
}

// moveSheet moves s to index (counted before removal, as Google does).
func (b *book) moveSheet(s *sheet, index int) {
	from := b.indexOf(s)
	to := min(max(index, 0), len(b.Sheets))
	if to > from {
		to--
	}
	b.Sheets = append(b.Sheets[:from], b.Sheets[from+1:]...)
	b.Sheets = append(b.Sheets[:to], append([]*sheet{s}, b.Sheets[to:]...)...)
}

func reqUpdateSpreadsheetProperties(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		Properties struct {
			Title      *string `json:"title"`
			Locale     *string `json:"locale"`
			TimeZone   *string `json:"timeZone"`
			AutoRecalc *string `json:"autoRecalc"`
		} `json:"properties"`
		Fields string `json:"fields"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	mask := parseMask(req.Fields)
	p := req.Properties
	for name, dst := range map[string]struct {
		src *string
		dst *string
	}{"title": {p.Title, &b.Title}, "locale": {p.Locale, &b.Locale}, "timeZone": {p.TimeZone, &b.TimeZone}, "autoRecalc": {p.AutoRecalc, &b.AutoRecalc}} {
		if mask[name] || (mask["*"] && dst.src != nil) {
			*dst.dst = deref(dst.src)
		}
	}
	return nil, nil
}

func reqFormattingOnly(b *book, raw json.RawMessage) (any, error) {
	var probe map[string]json.RawMessage
	if err := decodeReq(raw, &probe); err != nil {
		return nil, err
	}
	ids := sheetIDsIn(probe)
	for _, id := range ids {
		if b.sheetByID(id) == nil {
			return nil, errorf(ErrInvalidArgument, "No grid with id: %d", id)
		}
	}
	return nil, nil
}

// sheetIDsIn collects sheetId values one level deep in a request.
func sheetIDsIn(m map[string]json.RawMessage) []int64 {
	var ids []int64
	for _, v := range m {
		var inner map[string]json.RawMessage
		if json.Unmarshal(v, &inner) != nil {
			continue
		}
		var id int64
		if raw, ok := inner["sheetId"]; ok && json.Unmarshal(raw, &id) == nil {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
