package emulator

import (
	"testing"

	"google.golang.org/api/sheets/v4"
)

// noteOf reads the note of Sheet1's cell (row, col) (0-based) through grid
// data with the field mask a caller that wants notes only passes.
func noteOf(t *testing.T, svc *sheets.Service, id string, row, col int) string {
	t.Helper()
	ss, err := svc.Spreadsheets.Get(id).Ranges("Sheet1!A1:C3").IncludeGridData(true).Fields("sheets.data.rowData.values.note").Do()
	if err != nil {
		t.Fatal(err)
	}
	data := ss.Sheets[0].Data[0].RowData
	if row >= len(data) || col >= len(data[row].Values) {
		return ""
	}
	c := data[row].Values[col]
	if c.UserEnteredValue != nil || c.FormattedValue != "" {
		t.Fatalf("a notes-only mask returned values: %+v", c)
	}
	return c.Note
}

func setNote(t *testing.T, svc *sheets.Service, id string, row, col int, text string) {
	t.Helper()
	req := &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
		Range: &sheets.GridRange{SheetId: 0, StartRowIndex: int64(row), EndRowIndex: int64(row + 1), StartColumnIndex: int64(col), EndColumnIndex: int64(col + 1)},
		Rows:  []*sheets.RowData{{Values: []*sheets.CellData{{Note: text, ForceSendFields: []string{"Note"}}}}}, Fields: "note"}}
	if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{req}}).Do(); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateCellsWithNoteMaskSetsAndClearsTheNoteKeepingTheValue(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows([]any{"a", 5282})}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	setNote(t, svc, id, 0, 1, "not a number: kept 5282")
	if got := noteOf(t, svc, id, 0, 1); got != "not a number: kept 5282" {
		t.Fatalf("note %q", got)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:B1").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil || len(got.Values) != 1 || got.Values[0][1] != float64(5282) {
		t.Fatalf("a note changed the value: %+v %v", got, err)
	}
	setNote(t, svc, id, 0, 1, "")
	if got := noteOf(t, svc, id, 0, 1); got != "" {
		t.Fatalf("an empty note must remove it, got %q", got)
	}
	setNote(t, svc, id, 2, 2, "on an empty cell")
	if got := noteOf(t, svc, id, 2, 2); got != "on an empty cell" {
		t.Fatalf("note on an empty cell %q", got)
	}
	if v, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:C3").Do(); err != nil || len(v.Values) != 1 {
		t.Fatalf("a note is not a value: rows %+v %v", v, err)
	}
}

func TestRepeatCellWithNoteMaskAndNoEndRowClearsNotesBelowTheStartKeepingValues(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows([]any{"h", "h2"}, []any{"a", 1}, []any{"b", 2})}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	setNote(t, svc, id, 0, 1, "header")
	setNote(t, svc, id, 1, 1, "one")
	setNote(t, svc, id, 2, 1, "two")
	setNote(t, svc, id, 2, 0, "first column")
	req := &sheets.Request{RepeatCell: &sheets.RepeatCellRequest{Fields: "note", Cell: &sheets.CellData{},
		Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 1, StartColumnIndex: 1, EndColumnIndex: 2}}}
	if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{req}}).Do(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		row, col int
		want     string
	}{{0, 1, "header"}, {1, 1, ""}, {2, 1, ""}, {2, 0, "first column"}} {
		if got := noteOf(t, svc, id, c.row, c.col); got != c.want {
			t.Fatalf("note at (%d,%d) %q, want %q", c.row, c.col, got, c.want)
		}
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:B3").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil || len(got.Values) != 3 || got.Values[2][1] != float64(2) {
		t.Fatalf("clearing notes changed values: %+v %v", got, err)
	}
}
