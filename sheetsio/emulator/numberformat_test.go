package emulator

import (
	"testing"

	"google.golang.org/api/sheets/v4"
)

func TestUpdateCellsDateTimeNumberFormatRendersAsADateTime(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	serial := 46356.5 // 2026-11-30 12:00 UTC
	write := func(f *sheets.CellFormat, fields string) {
		t.Helper()
		req := &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
			Range:  &sheets.GridRange{SheetId: 0, StartRowIndex: 0, EndRowIndex: 1, StartColumnIndex: 0, EndColumnIndex: 1},
			Rows:   []*sheets.RowData{{Values: []*sheets.CellData{{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &serial}, UserEnteredFormat: f}}}},
			Fields: fields}}
		if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{req}}).Do(); err != nil {
			t.Fatal(err)
		}
	}
	shown := func() string {
		t.Helper()
		rows, err := emu.Person(id).Displayed("Sheet1")
		if err != nil || len(rows) == 0 || len(rows[0]) == 0 {
			t.Fatalf("displayed %v %v", rows, err)
		}
		return rows[0][0]
	}
	dt := &sheets.CellFormat{NumberFormat: &sheets.NumberFormat{Type: "DATE_TIME", Pattern: "yyyy-mm-dd hh:mm:ss"}}
	write(dt, "userEnteredValue,userEnteredFormat.numberFormat")
	if got := shown(); got != "2026-11-30 12:00:00" {
		t.Fatalf("DATE_TIME cell shows %q", got)
	}
	v, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1").ValueRenderOption("UNFORMATTED_VALUE").DateTimeRenderOption("SERIAL_NUMBER").Do()
	if err != nil || v.Values[0][0] != serial {
		t.Fatalf("unformatted read %+v %v", v, err)
	}
	write(nil, "userEnteredValue,userEnteredFormat.numberFormat") // a masked, absent format clears it
	if got := shown(); got != "46356.5" {
		t.Fatalf("cleared format shows %q", got)
	}
}

// TestRepeatCellNumberFormatOnlyFormatsValuesInPlace: a repeatCell whose
// mask is only userEnteredFormat.numberFormat (how provisioning formats a
// Time column) changes how existing numbers show, never their values.
func TestRepeatCellNumberFormatOnlyFormatsValuesInPlace(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: [][]any{{"at"}, {46356.5}, {"text stays"}}}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	req := &sheets.Request{RepeatCell: &sheets.RepeatCellRequest{
		Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 1, StartColumnIndex: 0, EndColumnIndex: 1, ForceSendFields: []string{"SheetId"}},
		Cell: &sheets.CellData{UserEnteredFormat: &sheets.CellFormat{
			NumberFormat: &sheets.NumberFormat{Type: "DATE_TIME", Pattern: "yyyy-mm-dd hh:mm:ss"}, WrapStrategy: "CLIP"}},
		Fields: "userEnteredFormat.numberFormat"}}
	if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{req}}).Do(); err != nil {
		t.Fatal(err)
	}
	shown, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:A3").ValueRenderOption("FORMATTED_VALUE").Do()
	if err != nil || len(shown.Values) != 3 || shown.Values[0][0] != "at" || shown.Values[1][0] != "2026-11-30 12:00:00" || shown.Values[2][0] != "text stays" {
		t.Fatalf("formatted read %+v %v", shown, err)
	}
	raw, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A2").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil || raw.Values[0][0] != 46356.5 {
		t.Fatalf("unformatted read %+v %v", raw, err)
	}
}
