package engine

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/echo"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// adoptColumn is one declared field of an adopted tab: where its column
// is (index -1: no column holds it) and how its cells decode.
type adoptColumn struct {
	field    string
	letter   string
	index    int
	col      cell.Column
	nullable bool
	text     bool // numbers adopted as their decimal text
}

// decode maps the tab's header onto the entity and decodes every data
// row (row 2 on); rows no mapped cell fills are counted as Blank.
func (a *adoption) decode() ([]aggregates.AdoptRow, error) {
	rows, shape := a.tab.Rows, a.src.shape
	var header []string
	if len(rows) > 0 {
		header = headerTexts(rows[0])
	}
	names := make([]string, len(shape.Fields))
	for i, f := range shape.Fields {
		names[i] = f.Name
	}
	hm, err := layout.MapHeader(header, shape.PK, names, a.req.Map)
	if err != nil {
		return nil, err
	}
	a.report.Columns, a.report.Missing = hm.Columns, hm.Missing
	cols, err := adoptColumns(shape, hm, a.req.NumbersAsText)
	if err != nil {
		return nil, err
	}
	var out []aggregates.AdoptRow
	for i := 1; i < len(rows); i++ {
		if blankRow(cols, rows[i]) {
			a.report.Blank++
			continue
		}
		out = append(out, decodeAdoptRow(cols, rows[i], i+1))
	}
	return out, nil
}

// adoptColumns lays out the key (first) and every field. numbersAsText
// must name text fields (or the key).
func adoptColumns(shape events.EntityShape, hm layout.HeaderMap, numbersAsText []string) ([]adoptColumn, error) {
	key := adoptColumn{field: shape.PK, col: cell.Column{Name: shape.PK, Kind: cell.String, Key: true}}
	cols := []adoptColumn{key}
	for _, f := range shape.Fields {
		cols = append(cols, adoptColumn{field: f.Name, col: cell.Column{Name: f.Name, Kind: f.Kind}, nullable: f.Nullable})
	}
	for i := range cols {
		cols[i].index = -1
		if j, ok := hm.Field[cols[i].field]; ok {
			cols[i].index, cols[i].letter = j, hm.Columns[j].Letter
		}
		cols[i].text = slices.Contains(numbersAsText, cols[i].field)
	}
	for _, f := range numbersAsText {
		if !slices.ContainsFunc(cols, func(c adoptColumn) bool { return c.field == f && c.col.Kind == cell.String }) {
			return nil, fmt.Errorf("%w: numbers can be adopted as text only in a text field; %s is not one of %s", layout.ErrAdoptMapInvalid, echo.Quote(f), shape.Name)
		}
	}
	return cols, nil
}

// headerTexts is the text of each header cell ("" when blank). A formula
// or an error value names no column: its result is never a header (the
// column is unnamed, never matched to a field, as a formula's result is
// never a value).
func headerTexts(row []cell.Observed) []string {
	out := make([]string, len(row))
	for i, o := range row {
		if o.Formula == "" && o.ErrorType == "" {
			out[i] = cellText(o.Value)
		}
	}
	return out
}

// cellText is a cell's value as text: a string as it is, a number in its
// shortest decimal form, a boolean as Sheets shows it.
func cellText(v any) string {
	switch x := v.(type) {
	case string:
		return norm.NFC.String(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	}
	return ""
}

// blankRow reports whether no mapped cell of raw holds anything.
func blankRow(cols []adoptColumn, raw []cell.Observed) bool {
	for _, c := range cols {
		if c.index < 0 || c.index >= len(raw) {
			continue
		}
		if o := raw[c.index]; o.Formula != "" || o.ErrorType != "" || o.Value != nil && o.Value != "" {
			return false
		}
	}
	return true
}

// decodeAdoptRow decodes one data row: the key, then every field.
func decodeAdoptRow(cols []adoptColumn, raw []cell.Observed, sheetRow int) aggregates.AdoptRow {
	r := aggregates.AdoptRow{SheetRow: sheetRow, Hash: rowHash(trimRow(raw)), Values: make(map[string]any, len(cols)-1)}
	for i, c := range cols {
		v, err := c.decode(raw)
		if err != nil {
			r.Issues = append(r.Issues, aggregates.AdoptIssue{Field: c.field, Column: c.letter, Reason: reasonOf(err)})
			if i == 0 {
				r.Key = shownKey(c.cell(raw))
			}
			continue
		}
		if i == 0 {
			r.Key, _ = v.(string)
			continue
		}
		r.Values[c.field] = v
	}
	if len(r.Issues) > 0 {
		r.Values = nil
	}
	return r
}

// decode decodes c's cell of raw: a blank cell of a field that is not
// nullable, or a field no column holds, takes the zero value the
// application's own struct would hold.
func (c adoptColumn) decode(raw []cell.Observed) (any, error) {
	v, err := cell.DecodeAdopted(c.col, c.cell(raw), c.text)
	if err != nil || v != nil || c.nullable || c.col.Key {
		return v, err
	}
	return zeroValue(c.col.Kind), nil
}

// cell is c's cell of raw (blank when the row is shorter, or no column
// holds c).
func (c adoptColumn) cell(raw []cell.Observed) cell.Observed {
	if c.index >= 0 && c.index < len(raw) {
		return raw[c.index]
	}
	return cell.Observed{}
}

// zeroValue is the canonical value of a Go zero value of kind k.
func zeroValue(k events.Kind) any {
	switch k {
	case events.KindString:
		return ""
	case events.KindInt:
		return int64(0)
	case events.KindFloat:
		return float64(0)
	case events.KindBool:
		return false
	case events.KindTime:
		t, _ := events.CanonicalTime(time.Time{})
		return t
	}
	return nil
}

// shownKey is the text of a key cell that did not decode, for the report
// and the quarantine record's anchor: a formula's result never.
func shownKey(o cell.Observed) string {
	if o.Formula != "" || o.ErrorType != "" {
		return ""
	}
	return cellText(o.Value)
}

// trimRow drops a row's trailing empty cells, so its hash does not depend
// on how wide a read returned it.
func trimRow(raw []cell.Observed) []cell.Observed {
	n := len(raw)
	for n > 0 && raw[n-1].Formula == "" && raw[n-1].ErrorType == "" && (raw[n-1].Value == nil || raw[n-1].Value == "") {
		n--
	}
	return raw[:n]
}
