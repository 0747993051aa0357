package gsheets

import (
	"encoding/json"
	"testing"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// BenchmarkAppendCellsJSON measures what the cells of 100 new rows of
// seven columns cost the dispatch before the request leaves: building
// their RowData and the JSON encoding sheets/v4 gives the batchUpdate body
// (issue 30: CPU per synced row).
func BenchmarkAppendCellsJSON(b *testing.B) {
	text, num := cell.Column{Kind: cell.String}, cell.Column{Kind: cell.Float}
	spec := layout.TabSpec{Columns: []cell.Column{text, text, text, num, num, text, {Kind: cell.Bool}}}
	row := []any{"k1", "Goroka", "PG", 5282.0, -6.08, "Pacific/Port_Moresby", true}
	rows := make([]*sheets.RowData, 100)
	for b.Loop() {
		for i := range rows {
			rows[i] = rowData(spec, row)
		}
		if _, err := json.Marshal(&sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{appendCellsRequest(1, rows)}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendCellsBody is BenchmarkAppendCellsJSON with the body
// encoded as the dispatch sends it (batchBody, one pass).
func BenchmarkAppendCellsBody(b *testing.B) {
	text, num := cell.Column{Kind: cell.String}, cell.Column{Kind: cell.Float}
	spec := layout.TabSpec{Columns: []cell.Column{text, text, text, num, num, text, {Kind: cell.Bool}}}
	row := []any{"k1", "Goroka", "PG", 5282.0, -6.08, "Pacific/Port_Moresby", true}
	rows := make([]*sheets.RowData, 100)
	for b.Loop() {
		for i := range rows {
			rows[i] = rowData(spec, row)
		}
		if _, err := batchBody(&sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{appendCellsRequest(1, rows)}}, 0); err != nil {
			b.Fatal(err)
		}
	}
}
