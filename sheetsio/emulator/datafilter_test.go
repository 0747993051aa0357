package emulator

import (
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

func TestDataFilterReadWriteFollowsRowMetadata(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	p := emu.Person(id)
	seedIDs(t, p)
	batch(t, svc, id, &sheets.Request{CreateDeveloperMetadata: &sheets.CreateDeveloperMetadataRequest{DeveloperMetadata: &sheets.DeveloperMetadata{
		MetadataKey: "row", MetadataValue: "id-3", Visibility: "DOCUMENT",
		Location: &sheets.DeveloperMetadataLocation{DimensionRange: &sheets.DimensionRange{Dimension: "ROWS", StartIndex: 3, EndIndex: 4}}}}})
	if err := p.InsertRows("Sheet1", 1, 2); err != nil {
		t.Fatal(err)
	}
	lookup := &sheets.DataFilter{DeveloperMetadataLookup: &sheets.DeveloperMetadataLookup{MetadataKey: "row", MetadataValue: "id-3"}}
	up, err := svc.Spreadsheets.Values.BatchUpdateByDataFilter(id, &sheets.BatchUpdateValuesByDataFilterRequest{
		ValueInputOption: "RAW",
		Data:             []*sheets.DataFilterValueRange{{DataFilter: lookup, Values: rows([]any{"3", "updated"})}},
	}).Do()
	if err != nil || up.TotalUpdatedCells != 2 || up.Responses[0].UpdatedRange != "Sheet1!A6:B6" {
		t.Fatalf("update by filter: %+v %v", up, err)
	}
	got, err := svc.Spreadsheets.Values.BatchGetByDataFilter(id, &sheets.BatchGetValuesByDataFilterRequest{DataFilters: []*sheets.DataFilter{lookup}}).Do()
	if err != nil || len(got.ValueRanges) != 1 || got.ValueRanges[0].ValueRange.Range != "Sheet1!A6:Z6" {
		t.Fatalf("get by filter: %+v %v", got, err)
	}
	assertRow(t, got.ValueRanges[0].ValueRange.Values[0], []any{"3", "updated"})
	cleared, err := svc.Spreadsheets.Values.BatchClearByDataFilter(id, &sheets.BatchClearValuesByDataFilterRequest{DataFilters: []*sheets.DataFilter{lookup}}).Do()
	if err != nil || len(cleared.ClearedRanges) != 1 {
		t.Fatalf("clear by filter: %+v %v", cleared, err)
	}
	ss, err := svc.Spreadsheets.GetByDataFilter(id, &sheets.GetSpreadsheetByDataFilterRequest{DataFilters: []*sheets.DataFilter{lookup}, IncludeGridData: true}).Do()
	if err != nil || len(ss.Sheets) != 1 || ss.Sheets[0].Data[0].StartRow != 5 {
		t.Fatalf("getByDataFilter: %+v %v", ss, err)
	}
}
