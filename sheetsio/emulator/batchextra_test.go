package emulator

import (
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

func batch(t *testing.T, svc *sheets.Service, id string, reqs ...*sheets.Request) *sheets.BatchUpdateSpreadsheetResponse {
	t.Helper()
	resp, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Do()
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestNamedRangeFindReplaceAndCopyPaste(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows([]any{"apple", "pear"}, []any{"apple pie", 3})}
	if _, err := svc.Spreadsheets.Values.Update(id, "A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	resp := batch(t, svc, id,
		&sheets.Request{AddNamedRange: &sheets.AddNamedRangeRequest{NamedRange: &sheets.NamedRange{Name: "Fruit", Range: &sheets.GridRange{EndRowIndex: 2, EndColumnIndex: 2}}}},
		&sheets.Request{FindReplace: &sheets.FindReplaceRequest{Find: "apple", Replacement: "plum", AllSheets: true}},
		&sheets.Request{CopyPaste: &sheets.CopyPasteRequest{Source: &sheets.GridRange{EndRowIndex: 2, EndColumnIndex: 2},
			Destination: &sheets.GridRange{StartRowIndex: 4, EndRowIndex: 5, StartColumnIndex: 0, EndColumnIndex: 1}, PasteType: "PASTE_VALUES"}},
	)
	if resp.Replies[0].AddNamedRange == nil || resp.Replies[1].FindReplace.OccurrencesChanged != 2 {
		t.Fatalf("replies: %+v", resp.Replies)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Fruit").Do()
	if err != nil || got.Range != "Sheet1!A1:B2" {
		t.Fatalf("named range read: %+v %v", got, err)
	}
	assertRow(t, got.Values[0], []any{"plum", "pear"})
	pasted, _ := svc.Spreadsheets.Values.Get(id, "A5:B6").Do()
	assertRow(t, pasted.Values[1], []any{"plum pie", "3"})
}

func TestAppendFindsTableAndInsertsRows(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows([]any{"id", "name"}, []any{1, "a"}, []any{2, "b"}, []any{}, []any{"tail"})}
	if _, err := svc.Spreadsheets.Values.Update(id, "A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Spreadsheets.Values.Append(id, "Sheet1!A1", &sheets.ValueRange{Values: rows([]any{3, "c"})}).
		ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Do()
	if err != nil || res.TableRange != "Sheet1!A1:B3" || res.Updates.UpdatedRange != "Sheet1!A4:B4" {
		t.Fatalf("append into first table: %+v %v", res, err)
	}
	all, _ := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:A6").Do()
	if len(all.Values) != 6 || all.Values[5][0] != "tail" {
		t.Fatalf("INSERT_ROWS must push rows down: %v", all.Values)
	}
	ss, _ := svc.Spreadsheets.Get(id).Do()
	if ss.Sheets[0].Properties.GridProperties.RowCount != 1001 {
		t.Fatalf("INSERT_ROWS grows the grid: %d", ss.Sheets[0].Properties.GridProperties.RowCount)
	}
}

func TestAppendOverwriteGrowsFullGrid(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	batch(t, svc, id, &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: 0, GridProperties: &sheets.GridProperties{RowCount: 2, ColumnCount: 2}},
		Fields:     "gridProperties.rowCount,gridProperties.columnCount"}})
	for i := 0; i < 3; i++ {
		_, err := svc.Spreadsheets.Values.Append(id, "Sheet1", &sheets.ValueRange{Values: rows([]any{i, "x", "overflow"})}).
			ValueInputOption("RAW").InsertDataOption("OVERWRITE").Do()
		if err != nil {
			t.Fatal(err)
		}
	}
	ss, _ := svc.Spreadsheets.Get(id).Do()
	gp := ss.Sheets[0].Properties.GridProperties
	if gp.RowCount != 3 || gp.ColumnCount != 3 {
		t.Fatalf("grid after appends: %d × %d", gp.RowCount, gp.ColumnCount)
	}
}

func TestBatchClearAndColumnsMajor(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{MajorDimension: "COLUMNS", Values: rows([]any{"a1", "a2"}, []any{"b1", "b2"})}
	if _, err := svc.Spreadsheets.Values.Update(id, "A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	cols, _ := svc.Spreadsheets.Values.BatchGet(id).Ranges("A1:B2").MajorDimension("COLUMNS").Do()
	assertRow(t, cols.ValueRanges[0].Values[1], []any{"b1", "b2"})
	res, err := svc.Spreadsheets.Values.BatchClear(id, &sheets.BatchClearValuesRequest{Ranges: []string{"A1:A2", "B:B"}}).Do()
	if err != nil || len(res.ClearedRanges) != 2 || res.ClearedRanges[1] != "Sheet1!B1:B1000" {
		t.Fatalf("batchClear: %+v %v", res, err)
	}
	left, _ := svc.Spreadsheets.Values.Get(id, "A1:B2").Do()
	if left.Values != nil {
		t.Fatalf("cleared: %v", left.Values)
	}
}

func TestCopyToAndDimensionGroups(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	_ = emu.CreateSpreadsheet("other", "Other")
	_ = emu.Person(id).Type("Sheet1", "A1", "hello")
	props, err := svc.Spreadsheets.Sheets.CopyTo(id, 0, &sheets.CopySheetToAnotherSpreadsheetRequest{DestinationSpreadsheetId: "other"}).Do()
	if err != nil || props.Title != "Copy of Sheet1" || props.Index != 1 {
		t.Fatalf("copyTo: %+v %v", props, err)
	}
	got, _ := svc.Spreadsheets.Values.Get("other", "'Copy of Sheet1'!A1").Do()
	assertRow(t, got.Values[0], []any{"hello"})
	resp := batch(t, svc, id, &sheets.Request{AddDimensionGroup: &sheets.AddDimensionGroupRequest{
		Range: &sheets.DimensionRange{Dimension: "ROWS", StartIndex: 1, EndIndex: 4}}})
	if g := resp.Replies[0].AddDimensionGroup; g == nil || len(g.DimensionGroups) != 1 || g.DimensionGroups[0].Depth != 1 {
		t.Fatalf("group reply: %+v", resp.Replies[0])
	}
}
