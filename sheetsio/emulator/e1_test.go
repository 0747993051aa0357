package emulator

import (
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

// E1: a sparse values.update (A1:D6 with only A1 and D6 set) reports the
// rows and columns that hold an updated cell, as Google does (2 and 2,
// not the box's 6 and 4), and as the batch totals already count them.
func TestE1_SparseValuesUpdateCountsRowsAndColumnsWithAnUpdatedCell(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	sparse := [][]any{{"a", nil, nil, nil}, {}, {}, {}, {}, {nil, nil, nil, "d"}}
	res, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1:D6", &sheets.ValueRange{Values: sparse}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.UpdatedRows != 2 || res.UpdatedColumns != 2 || res.UpdatedCells != 2 || res.UpdatedRange != "Sheet1!A1:D6" {
		t.Fatalf("update: rows %d columns %d cells %d range %s, want 2 2 2 Sheet1!A1:D6", res.UpdatedRows, res.UpdatedColumns,
			res.UpdatedCells, res.UpdatedRange)
	}
	batch, err := svc.Spreadsheets.Values.BatchUpdate(id, &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW",
		Data: []*sheets.ValueRange{{Range: "Sheet1!A1:D6", Values: sparse}}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	r := batch.Responses[0]
	if batch.TotalUpdatedRows != 2 || batch.TotalUpdatedColumns != 2 || r.UpdatedRows != 2 || r.UpdatedColumns != 2 {
		t.Fatalf("batch: totals %d×%d, response %d×%d, want 2×2 both", batch.TotalUpdatedRows, batch.TotalUpdatedColumns,
			r.UpdatedRows, r.UpdatedColumns)
	}
}
