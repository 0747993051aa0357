package gsheets

import (
	"encoding/json"
	"testing"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// TestRowDataWritesEachValueAsItsOwnCell: a row's cells, built in one
// allocation, encode as one CellData per value built alone (text as
// stringValue, numbers, booleans, nil as an empty cell, a Time column's
// number format), and no cell shares another's value.
func TestRowDataWritesEachValueAsItsOwnCell(t *testing.T) {
	text := cell.Column{Kind: cell.String}
	spec := layout.TabSpec{Columns: []cell.Column{text, text, {Kind: cell.Float}, {Kind: cell.Bool}, text, {Kind: cell.Time}, {Kind: cell.Time}}}
	row := []any{"=1+1", "b", 2.5, false, nil, 45000.25, nil}
	s, f, no := "=1+1", 2.5, false
	s2, tm := "b", 45000.25
	format := &sheets.CellFormat{NumberFormat: &sheets.NumberFormat{Type: cell.TimeNumberFormatType, Pattern: cell.TimeNumberFormatPattern}}
	want := &sheets.RowData{Values: []*sheets.CellData{
		{UserEnteredValue: &sheets.ExtendedValue{StringValue: &s}}, {UserEnteredValue: &sheets.ExtendedValue{StringValue: &s2}},
		{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &f}}, {UserEnteredValue: &sheets.ExtendedValue{BoolValue: &no}}, {},
		{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &tm}, UserEnteredFormat: format}, {}}}
	got := rowData(spec, row)
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("row\n%s\nwant\n%s", g, w)
	}
	if *got.Values[0].UserEnteredValue.StringValue = "changed"; *got.Values[1].UserEnteredValue.StringValue != "b" {
		t.Fatal("cells share their values")
	}
	if one, _ := json.Marshal(cellData(text, "x")); string(one) != `{"userEnteredValue":{"stringValue":"x"}}` {
		t.Fatalf("one cell %s", one)
	}
}
