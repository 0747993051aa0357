package gsheets

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"google.golang.org/api/sheets/v4"
)

// The body of a spreadsheets.batchUpdate is encoded here, not by
// sheets/v4: the generated MarshalJSON of each nested type (Request,
// AppendCellsRequest, RowData, CellData, ExtendedValue, …) has
// encoding/json marshal the level below and then validate and compact its
// output again, so each cell's bytes were scanned and copied once per
// level above it, the largest part of the dispatch's own CPU per row
// (bench row 4c). batchBody writes the same JSON in one pass for what a
// dispatch sends (appendCells, updateCells and deleteDimension requests,
// their ranges, rows and plain cells); any other request, and any object
// with ForceSendFields, NullFields or a field set that it does not write,
// it hands to json.Marshal whole. The bytes are sheets/v4's own
// (TestBatchBodyIsSheetsV4JSON, TestBatchBodyCoversEveryField).

// bodyEncoder appends JSON to b; err is the first encoding error; raw
// holds the rows of appendCells requests encoded ahead (rawRows).
type bodyEncoder struct {
	b   []byte
	err error
	raw rawRows
}

// rawRows are appended rows encoded when they were planned (encodeRow), by
// the appendCells request that carries them: the body writes them, in
// order, before the request's own Rows. A dispatch keeps each row as the
// few hundred bytes it sends, not as sheets/v4 structs.
type rawRows map[*sheets.AppendCellsRequest][][]byte

// batchBody encodes req as json.Marshal(req) would; size is a hint of
// its length.
func batchBody(req *sheets.BatchUpdateSpreadsheetRequest, size int) ([]byte, error) {
	return batchBodyRaw(req, nil, size)
}

// batchBodyRaw is batchBody with the rows raw holds written as the first
// rows of their appendCells requests: the bytes json.Marshal gives for req
// once those rows are put in front of the requests' Rows as RowData.
func batchBodyRaw(req *sheets.BatchUpdateSpreadsheetRequest, raw rawRows, size int) ([]byte, error) {
	e := &bodyEncoder{b: make([]byte, 0, size), raw: raw}
	e.batch(req)
	return e.b, e.err
}

// object is a JSON object being written: n members so far.
type object struct {
	e *bodyEncoder
	n int
}

func (e *bodyEncoder) open() *object {
	e.b = append(e.b, '{')
	return &object{e: e}
}

func (o *object) close() { o.e.b = append(o.e.b, '}') }

// key writes the member name (a constant of plain letters) and its colon.
func (o *object) key(name string) *bodyEncoder {
	if o.n > 0 {
		o.e.b = append(o.e.b, ',')
	}
	o.n++
	o.e.b = append(o.e.b, '"')
	o.e.b = append(o.e.b, name...)
	o.e.b = append(o.e.b, '"', ':')
	return o.e
}

// str, integer and flag write an omitempty member unless it is empty.
func (o *object) str(name, v string) {
	if v != "" {
		e := o.key(name)
		e.b = appendString(e.b, v)
	}
}

func (o *object) integer(name string, v int64) {
	if v != 0 {
		e := o.key(name)
		e.b = strconv.AppendInt(e.b, v, 10)
	}
}

func (o *object) flag(name string, v bool) {
	if v {
		e := o.key(name)
		e.b = append(e.b, "true"...)
	}
}

// marshal appends json.Marshal(v): the generated encoding of v.
func (e *bodyEncoder) marshal(v any) {
	js, err := json.Marshal(v)
	if err != nil && e.err == nil {
		e.err = err
	}
	e.b = append(e.b, js...)
}

// list writes xs as a JSON array, a nil element as null.
func list[T any](e *bodyEncoder, xs []*T, enc func(*bodyEncoder, *T)) {
	e.b = append(e.b, '[')
	for i, x := range xs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		if x == nil {
			e.b = append(e.b, "null"...)
		} else {
			enc(e, x)
		}
	}
	e.b = append(e.b, ']')
}

// forced: the generated MarshalJSON would send zero or null fields.
func forced(force, null []string) bool { return len(force) > 0 || len(null) > 0 }

func (e *bodyEncoder) batch(r *sheets.BatchUpdateSpreadsheetRequest) {
	if forced(r.ForceSendFields, r.NullFields) {
		e.marshal(r)
		return
	}
	o := e.open()
	o.str("commentsViewMode", r.CommentsViewMode)
	o.flag("includeSpreadsheetInResponse", r.IncludeSpreadsheetInResponse)
	if len(r.Requests) > 0 {
		list(o.key("requests"), r.Requests, (*bodyEncoder).request)
	}
	o.flag("responseIncludeGridData", r.ResponseIncludeGridData)
	if len(r.ResponseRanges) > 0 {
		e := o.key("responseRanges")
		e.b = append(e.b, '[')
		for i, s := range r.ResponseRanges {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = appendString(e.b, s)
		}
		e.b = append(e.b, ']')
	}
	o.close()
}

// cellRequest reports whether r sets nothing but appendCells,
// deleteDimension and updateCells.
func cellRequest(r *sheets.Request) bool {
	c := *r
	c.AppendCells, c.DeleteDimension, c.UpdateCells = nil, nil, nil
	return reflect.ValueOf(&c).Elem().IsZero()
}

// request writes r; its members in the generated order (alphabetical).
func (e *bodyEncoder) request(r *sheets.Request) {
	if !cellRequest(r) {
		e.marshal(r)
		return
	}
	o := e.open()
	if r.AppendCells != nil {
		o.key("appendCells").appendCells(r.AppendCells)
	}
	if r.DeleteDimension != nil {
		o.key("deleteDimension").deleteDimension(r.DeleteDimension)
	}
	if r.UpdateCells != nil {
		o.key("updateCells").updateCells(r.UpdateCells)
	}
	o.close()
}

func (e *bodyEncoder) appendCells(r *sheets.AppendCellsRequest) {
	raw := e.raw[r]
	if len(raw) == 0 && forced(r.ForceSendFields, r.NullFields) {
		e.marshal(r)
		return
	}
	o := e.open()
	o.str("fields", r.Fields)
	if len(raw) > 0 || len(r.Rows) > 0 {
		o.key("rows").rows(raw, r.Rows)
	}
	o.integer("sheetId", r.SheetId)
	o.str("tableId", r.TableId)
	o.close()
}

// rows writes the array of the rows encoded ahead, then of rs.
func (e *bodyEncoder) rows(raw [][]byte, rs []*sheets.RowData) {
	e.b = append(e.b, '[')
	for i, js := range raw {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, js...)
	}
	for i, r := range rs {
		if i > 0 || len(raw) > 0 {
			e.b = append(e.b, ',')
		}
		if r == nil {
			e.b = append(e.b, "null"...)
		} else {
			e.row(r)
		}
	}
	e.b = append(e.b, ']')
}

func (e *bodyEncoder) updateCells(r *sheets.UpdateCellsRequest) {
	if forced(r.ForceSendFields, r.NullFields) {
		e.marshal(r)
		return
	}
	o := e.open()
	o.str("fields", r.Fields)
	if r.Range != nil {
		o.key("range").gridRange(r.Range)
	}
	if len(r.Rows) > 0 {
		list(o.key("rows"), r.Rows, (*bodyEncoder).row)
	}
	if r.Start != nil {
		o.key("start").gridCoordinate(r.Start)
	}
	o.close()
}

func (e *bodyEncoder) gridRange(r *sheets.GridRange) {
	if forced(r.ForceSendFields, r.NullFields) {
		e.marshal(r)
		return
	}
	o := e.open()
	o.integer("endColumnIndex", r.EndColumnIndex)
	o.integer("endRowIndex", r.EndRowIndex)
	o.integer("sheetId", r.SheetId)
	o.integer("startColumnIndex", r.StartColumnIndex)
	o.integer("startRowIndex", r.StartRowIndex)
	o.close()
}

func (e *bodyEncoder) gridCoordinate(c *sheets.GridCoordinate) {
	if forced(c.ForceSendFields, c.NullFields) {
		e.marshal(c)
		return
	}
	o := e.open()
	o.integer("columnIndex", c.ColumnIndex)
	o.integer("rowIndex", c.RowIndex)
	o.integer("sheetId", c.SheetId)
	o.close()
}

func (e *bodyEncoder) deleteDimension(r *sheets.DeleteDimensionRequest) {
	if forced(r.ForceSendFields, r.NullFields) {
		e.marshal(r)
		return
	}
	o := e.open()
	if r.Range != nil {
		o.key("range").dimensionRange(r.Range)
	}
	o.close()
}

func (e *bodyEncoder) dimensionRange(d *sheets.DimensionRange) {
	if forced(d.ForceSendFields, d.NullFields) {
		e.marshal(d)
		return
	}
	o := e.open()
	o.str("dimension", d.Dimension)
	o.integer("endIndex", d.EndIndex)
	o.integer("sheetId", d.SheetId)
	o.integer("startIndex", d.StartIndex)
	o.close()
}

func (e *bodyEncoder) row(r *sheets.RowData) {
	if forced(r.ForceSendFields, r.NullFields) {
		e.marshal(r)
		return
	}
	o := e.open()
	if len(r.Values) > 0 {
		list(o.key("values"), r.Values, (*bodyEncoder).cell)
	}
	o.close()
}

// plainCell reports whether c sets nothing but a note, a user-entered
// format and a user-entered value.
func plainCell(c *sheets.CellData) bool {
	return len(c.ChipRuns) == 0 && c.DataSourceFormula == nil && c.DataSourceTable == nil && c.DataValidation == nil &&
		c.EffectiveFormat == nil && c.EffectiveValue == nil && c.FormattedValue == "" && c.Hyperlink == "" &&
		c.PivotTable == nil && len(c.TextFormatRuns) == 0 && !forced(c.ForceSendFields, c.NullFields)
}

func (e *bodyEncoder) cell(c *sheets.CellData) {
	if !plainCell(c) {
		e.marshal(c)
		return
	}
	o := e.open()
	o.str("note", c.Note)
	if c.UserEnteredFormat != nil {
		o.key("userEnteredFormat").cellFormat(c.UserEnteredFormat)
	}
	if c.UserEnteredValue != nil {
		o.key("userEnteredValue").value(c.UserEnteredValue)
	}
	o.close()
}

// plainFormat reports whether f sets nothing but a number format.
func plainFormat(f *sheets.CellFormat) bool {
	return f.BackgroundColor == nil && f.BackgroundColorStyle == nil && f.Borders == nil && f.HorizontalAlignment == "" &&
		f.HyperlinkDisplayType == "" && f.Padding == nil && f.TextDirection == "" && f.TextFormat == nil &&
		f.TextRotation == nil && f.VerticalAlignment == "" && f.WrapStrategy == "" && !forced(f.ForceSendFields, f.NullFields)
}

func (e *bodyEncoder) cellFormat(f *sheets.CellFormat) {
	if !plainFormat(f) {
		e.marshal(f)
		return
	}
	o := e.open()
	if f.NumberFormat != nil {
		o.key("numberFormat").numberFormat(f.NumberFormat)
	}
	o.close()
}

func (e *bodyEncoder) numberFormat(n *sheets.NumberFormat) {
	if forced(n.ForceSendFields, n.NullFields) {
		e.marshal(n)
		return
	}
	o := e.open()
	o.str("pattern", n.Pattern)
	o.str("type", n.Type)
	o.close()
}

func (e *bodyEncoder) value(v *sheets.ExtendedValue) {
	if forced(v.ForceSendFields, v.NullFields) {
		e.marshal(v)
		return
	}
	o := e.open()
	if v.BoolValue != nil {
		e := o.key("boolValue")
		e.b = strconv.AppendBool(e.b, *v.BoolValue)
	}
	if v.ErrorValue != nil {
		o.key("errorValue").marshal(v.ErrorValue)
	}
	if v.FormulaValue != nil {
		e := o.key("formulaValue")
		e.b = appendString(e.b, *v.FormulaValue)
	}
	if v.NumberValue != nil {
		o.key("numberValue").number(*v.NumberValue)
	}
	if v.StringValue != nil {
		e := o.key("stringValue")
		e.b = appendString(e.b, *v.StringValue)
	}
	o.close()
}

// number writes f as encoding/json writes a float64 (ES6 style: an
// exponent below 1e-6 and from 1e21, not padded); NaN and ±Inf are
// unsupported values there, and an error here.
func (e *bodyEncoder) number(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if e.err == nil {
			e.err = &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
		}
		e.b = append(e.b, "null"...)
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if n := len(e.b); format == 'e' && n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
		e.b[n-2] = e.b[n-1] // e-09 → e-9
		e.b = e.b[:n-1]
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does
// with HTML escaping (its default): <, > and & as \u00XX, control bytes,
// U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = appendEscape(append(dst, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}

// appendEscape appends the escape of an ASCII byte appendString does not
// copy as it is.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
