package emulator

import (
	"bytes"
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

func TestPersonSortCarriesRowMetadataAndSurvivesSaveLoad(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	p := emu.Person(id)
	seedIDs(t, p)
	batch(t, svc, id,
		&sheets.Request{CreateDeveloperMetadata: &sheets.CreateDeveloperMetadataRequest{DeveloperMetadata: &sheets.DeveloperMetadata{
			MetadataKey: "anchor", MetadataValue: "id-2", Visibility: "DOCUMENT",
			Location: &sheets.DeveloperMetadataLocation{DimensionRange: &sheets.DimensionRange{Dimension: "ROWS", StartIndex: 2, EndIndex: 3}}}}},
		&sheets.Request{AddNamedRange: &sheets.AddNamedRangeRequest{NamedRange: &sheets.NamedRange{Name: "Ids", Range: &sheets.GridRange{EndColumnIndex: 1}}}},
	)
	if err := p.SortByColumn("Sheet1", "A", true, 1); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := emu.Save(&buf); err != nil {
		t.Fatal(err)
	}
	restored := New(Options{})
	if err := restored.Load(&buf); err != nil {
		t.Fatal(err)
	}
	svc2 := newClient(t, restored)
	found, err := svc2.Spreadsheets.DeveloperMetadata.Search(id, &sheets.SearchDeveloperMetadataRequest{DataFilters: []*sheets.DataFilter{
		{DeveloperMetadataLookup: &sheets.DeveloperMetadataLookup{MetadataKey: "anchor"}}}}).Do()
	if err != nil || len(found.MatchedDeveloperMetadata) != 1 {
		t.Fatalf("search: %+v %v", found, err)
	}
	// ids 5,4,3,2,1 now occupy rows 2..6: id 2 is on row 5 (index 4).
	if got := found.MatchedDeveloperMetadata[0].DeveloperMetadata.Location.DimensionRange.StartIndex; got != 4 {
		t.Fatalf("metadata row index = %d, want 4", got)
	}
	named, err := svc2.Spreadsheets.Values.Get(id, "Ids").Do()
	if err != nil || len(named.Values) != 6 || named.Values[1][0] != "5" {
		t.Fatalf("named range after load: %+v %v", named, err)
	}
}

func TestValuesBatchUpdateUserEnteredWithResponseValues(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	res, err := svc.Spreadsheets.Values.BatchUpdate(id, &sheets.BatchUpdateValuesRequest{
		ValueInputOption:          "USER_ENTERED",
		IncludeValuesInResponse:   true,
		ResponseValueRenderOption: "UNFORMATTED_VALUE",
		Data: []*sheets.ValueRange{
			{Range: "A1", Values: rows([]any{"=2*21", "1,000"})},
			{Range: "Sheet1!C3", Values: rows([]any{"12/31/1999"})},
		},
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalUpdatedCells != 3 || res.TotalUpdatedRows != 2 || res.TotalUpdatedColumns != 3 || res.TotalUpdatedSheets != 1 {
		t.Fatalf("totals: %+v", res)
	}
	first := res.Responses[0].UpdatedData
	if first.Range != "Sheet1!A1:B1" || first.Values[0][0] != 42.0 || first.Values[0][1] != 1000.0 {
		t.Fatalf("updatedData: %+v", first)
	}
	shown, _ := svc.Spreadsheets.Values.Get(id, "A1:C3").Do()
	assertRow(t, shown.Values[0], []any{"42", "1,000"})
	assertRow(t, shown.Values[2], []any{"", "", "12/31/1999"})
}

func TestCellLimitOnGridGrowth(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 0, Dimension: "ROWS", Length: 400000}},
	}}).Do()
	if apiCode(t, err) != 400 {
		t.Fatalf("want 400 over 10,000,000 cells, got %v", err)
	}
	batch(t, svc, id, &sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 0, Dimension: "ROWS", Length: 1000}})
	ss, _ := svc.Spreadsheets.Get(id).Do()
	if ss.Sheets[0].Properties.GridProperties.RowCount != 2000 {
		t.Fatalf("rows = %d", ss.Sheets[0].Properties.GridProperties.RowCount)
	}
}
