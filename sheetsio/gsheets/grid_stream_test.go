package gsheets

import (
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// The streamed grid decode reads a response in any key order (Google
// sends startRow before rowData, Go's encoder after), skips what it does
// not use, ignores null rows, keeps formulas and error values, and marks
// merges once the whole sheet is read.
func TestDecodeGridStreamsAnyKeyOrder(t *testing.T) {
	body := `{"spreadsheetId":"x","sheets":[
	 {"data":[{"rowData":[{"values":[{"effectiveValue":{"stringValue":"c"}}]}],"startRow":3,"rowMetadata":[{}]}],
	  "merges":[{"sheetId":7,"startRowIndex":0,"endRowIndex":1,"startColumnIndex":1,"endColumnIndex":2}],
	  "properties":{"sheetId":7,"title":"T"}},
	 {"properties":{"sheetId":9},"data":[{"startRow":1,"rowData":[
	   {"values":[{"userEnteredValue":{"formulaValue":"=1+1"},"effectiveValue":{"numberValue":2}},{"effectiveValue":{"errorValue":{"type":"REF"}}}]},
	   null,
	   {"values":[{"effectiveValue":{"boolValue":true}}]}]}]}]}`
	got, err := decodeGrid(strings.NewReader(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].id != 7 || got[1].id != 9 {
		t.Fatalf("sheets %+v", got)
	}
	a := got[0].observed()
	if len(a) != 4 || a[3][0].Value != "c" || len(a[0]) != 2 || !a[0][1].Merged {
		t.Fatalf("sheet 7 rows %+v", a)
	}
	b := got[1].observed()
	want := cell.Observed{Formula: "=1+1", Value: 2.0}
	if len(b) != 4 || b[1][0] != want || b[1][1].ErrorType != "REF" || b[2] != nil || b[3][0].Value != true {
		t.Fatalf("sheet 9 rows %+v", b)
	}
	keep, err := decodeGrid(strings.NewReader(body), func(id int64, at int) bool { return id != 9 || at == 3 })
	if err != nil || len(keep[1].rows) != 4 || keep[1].rows[1] != nil || keep[1].rows[3] == nil {
		t.Fatalf("filtered: %+v %v", keep, err)
	}
	if _, err := decodeGrid(strings.NewReader(`{"sheets":[{"data":[{"rowData":[{"values":[1]}]}]}]}`), nil); err == nil {
		t.Fatal("a malformed cell decoded")
	}
}
