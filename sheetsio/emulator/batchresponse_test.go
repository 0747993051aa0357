package emulator

import (
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

// seedRows writes rows A1:B3 of Sheet1 (sheetId 0): id, qty.
func seedRows(t *testing.T, svc *sheets.Service, id string) {
	t.Helper()
	vr := &sheets.ValueRange{Values: rows([]any{"id", "qty"}, []any{"a", 1.0}, []any{"b", 2.0})}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
}

func qtyCell(v float64) *sheets.RowData {
	return &sheets.RowData{Values: []*sheets.CellData{{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &v}}}}
}

// The updatedSpreadsheet of a batchUpdate is rendered after every request
// of the batch, in the same atomic step: responseRanges limit it to the
// tabs and rows named (rows as they are after a later deleteDimension of
// the same batch), responseIncludeGridData adds their grid data.
func TestBatchUpdateResponseRangesShowRowsAfterAllRequests(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	seedRows(t, svc, id)
	if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{
		AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Other"}}}}}).Do(); err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{
		Requests: []*sheets.Request{
			{UpdateCells: &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: 0, RowIndex: 2, ColumnIndex: 1},
				Rows: []*sheets.RowData{qtyCell(99)}, Fields: "userEnteredValue"}},
			{DeleteDimension: &sheets.DeleteDimensionRequest{Range: &sheets.DimensionRange{SheetId: 0, Dimension: "ROWS", StartIndex: 1, EndIndex: 2}}},
		},
		IncludeSpreadsheetInResponse: true,
		ResponseRanges:               []string{"Sheet1!A2:B2"},
		ResponseIncludeGridData:      true,
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
	ss := resp.UpdatedSpreadsheet
	if ss == nil || len(ss.Sheets) != 1 || ss.Sheets[0].Properties.Title != "Sheet1" {
		t.Fatalf("updatedSpreadsheet = %+v", ss)
	}
	data := ss.Sheets[0].Data
	if len(data) != 1 || data[0].StartRow != 1 || len(data[0].RowData) != 1 {
		t.Fatalf("grid data = %+v", data)
	}
	cells := data[0].RowData[0].Values
	if len(cells) != 2 || *cells[0].EffectiveValue.StringValue != "b" || *cells[1].EffectiveValue.NumberValue != 99 {
		t.Fatalf("row 2 after the batch = %+v", cells)
	}
}

// Without includeSpreadsheetInResponse the response options are ignored;
// with it but without grid data, the tabs come without data; a field mask
// decides instead of responseIncludeGridData; an unparsable response range
// fails the whole batch and nothing is applied.
func TestBatchUpdateResponseOptionsAsGoogle(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	seedRows(t, svc, id)
	upd := func() []*sheets.Request {
		return []*sheets.Request{{UpdateCells: &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: 0, RowIndex: 1, ColumnIndex: 1},
			Rows: []*sheets.RowData{qtyCell(7)}, Fields: "userEnteredValue"}}}
	}
	resp, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: upd(),
		ResponseRanges: []string{"Sheet1!A2:B2"}, ResponseIncludeGridData: true}).Do()
	if err != nil || resp.UpdatedSpreadsheet != nil {
		t.Fatalf("without includeSpreadsheetInResponse: %v %+v", err, resp)
	}
	resp, err = svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: upd(),
		IncludeSpreadsheetInResponse: true, ResponseRanges: []string{"Sheet1!A2:B2"}}).Do()
	if err != nil || len(resp.UpdatedSpreadsheet.Sheets) != 1 || resp.UpdatedSpreadsheet.Sheets[0].Data != nil {
		t.Fatalf("without grid data: %v %+v", err, resp.UpdatedSpreadsheet)
	}
	resp, err = svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: upd(),
		IncludeSpreadsheetInResponse: true, ResponseRanges: []string{"Sheet1!A2:B2"}}).
		Fields("updatedSpreadsheet(sheets(data(startRow,rowData(values(effectiveValue)))))").Do()
	if err != nil || len(resp.UpdatedSpreadsheet.Sheets) != 1 || len(resp.UpdatedSpreadsheet.Sheets[0].Data) != 1 ||
		resp.UpdatedSpreadsheet.Sheets[0].Properties != nil || resp.Replies != nil {
		t.Fatalf("field mask: %v %+v", err, resp.UpdatedSpreadsheet)
	}
	_, err = svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{
		Requests: []*sheets.Request{{UpdateCells: &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: 0, RowIndex: 1, ColumnIndex: 1},
			Rows: []*sheets.RowData{qtyCell(8)}, Fields: "userEnteredValue"}}},
		IncludeSpreadsheetInResponse: true, ResponseRanges: []string{"Missing!A1"}}).Do()
	if code := apiCode(t, err); code != 400 {
		t.Fatalf("unparsable response range: http %d", code)
	}
	got, err := emu.Person(id).Displayed("Sheet1")
	if err != nil || got[1][1] != "7" {
		t.Fatalf("after the rejected batch: %v %v", got, err)
	}
}

// FaultInterleave runs a person's edit between a write's arrival and its
// application, deterministically.
func TestInterleaveRunsBeforeTheWriteApplies(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	seedRows(t, svc, id)
	emu.ScriptFaults(Fault{Kind: FaultInterleave, Match: MatchWrites, Interleave: func() {
		if err := emu.Person(id).DeleteRows("Sheet1", 2, 1); err != nil {
			t.Error(err)
		}
	}})
	if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{
		UpdateCells: &sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: 0, RowIndex: 2, ColumnIndex: 1},
			Rows: []*sheets.RowData{qtyCell(99)}, Fields: "userEnteredValue"}}}}).Do(); err != nil {
		t.Fatal(err)
	}
	got, err := emu.Person(id).Displayed("Sheet1")
	if err != nil || len(got) < 3 || got[1][0] != "b" || got[2][1] != "99" {
		t.Fatalf("sheet = %v %v", got, err)
	}
}
