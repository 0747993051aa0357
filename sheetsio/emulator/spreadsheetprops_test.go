package emulator

import (
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"
)

func sendBatch(svc *sheets.Service, id string, reqs ...*sheets.Request) error {
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Do()
	return err
}

// TestDeletingTheLastTabIsRefusedLikeGoogle: Google refuses to remove a
// document's last tab (400, nothing applied); removing it after adding
// another in the same batchUpdate works.
func TestDeletingTheLastTabIsRefusedLikeGoogle(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	del := &sheets.Request{DeleteSheet: &sheets.DeleteSheetRequest{SheetId: 0, ForceSendFields: []string{"SheetId"}}}
	err := sendBatch(svc, id, del)
	if apiCode(t, err) != 400 || !strings.Contains(err.(*googleapi.Error).Message, "You can't remove all the sheets in a document.") {
		t.Fatalf("deleting the last tab: %v", err)
	}
	add := &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Kept"}}}
	if err := sendBatch(svc, id, add, del); err != nil {
		t.Fatalf("add then delete: %v", err)
	}
	ss, err := svc.Spreadsheets.Get(id).Do()
	if err != nil || len(ss.Sheets) != 1 || ss.Sheets[0].Properties.Title != "Kept" {
		t.Fatalf("tabs after add+delete: %+v %v", ss, err)
	}
}

// TestUpdateSpreadsheetPropertiesTitleRenamesTheSpreadsheet: the title
// mask changes the title only.
func TestUpdateSpreadsheetPropertiesTitleRenamesTheSpreadsheet(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	before, err := svc.Spreadsheets.Get(id).Do()
	if err != nil {
		t.Fatal(err)
	}
	req := &sheets.Request{UpdateSpreadsheetProperties: &sheets.UpdateSpreadsheetPropertiesRequest{
		Properties: &sheets.SpreadsheetProperties{Title: "Hikoutei — Part", TimeZone: "Asia/Tokyo"}, Fields: "title"}}
	if err := sendBatch(svc, id, req); err != nil {
		t.Fatal(err)
	}
	after, err := svc.Spreadsheets.Get(id).Do()
	if err != nil || after.Properties.Title != "Hikoutei — Part" || after.Properties.TimeZone != before.Properties.TimeZone {
		t.Fatalf("properties after: %+v %v", after.Properties, err)
	}
}
