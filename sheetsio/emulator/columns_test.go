package emulator

import (
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

// columnsBook is a sheet whose row 1 reads A..E and row 2 a1..e1, a note on
// C2, a dropdown on D2 and developer metadata on column C.
func columnsBook(t *testing.T) (*sheets.Service, string) {
	t.Helper()
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows([]any{"A", "B", "C", "D", "E"}, []any{"a1", "b1", "c1", "d1", "e1"})}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	note := "about c1"
	batch(t, svc, id,
		&sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 1, EndRowIndex: 2,
			StartColumnIndex: 2, EndColumnIndex: 3}, Rows: []*sheets.RowData{{Values: []*sheets.CellData{{Note: note}}}}, Fields: "note"}},
		&sheets.Request{SetDataValidation: &sheets.SetDataValidationRequest{Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 1,
			EndRowIndex: 2, StartColumnIndex: 3, EndColumnIndex: 4}, Rule: dropdown("yes", "no")}},
		&sheets.Request{CreateDeveloperMetadata: &sheets.CreateDeveloperMetadataRequest{DeveloperMetadata: &sheets.DeveloperMetadata{
			MetadataKey: "col", MetadataValue: "C", Visibility: "DOCUMENT", Location: &sheets.DeveloperMetadataLocation{
				DimensionRange: &sheets.DimensionRange{SheetId: 0, Dimension: "COLUMNS", StartIndex: 2, EndIndex: 3}}}}},
	)
	return svc, id
}

func dropdown(choices ...string) *sheets.DataValidationRule {
	vals := make([]*sheets.ConditionValue, len(choices))
	for i, c := range choices {
		vals[i] = &sheets.ConditionValue{UserEnteredValue: c}
	}
	return &sheets.DataValidationRule{Condition: &sheets.BooleanCondition{Type: "ONE_OF_LIST", Values: vals}, ShowCustomUi: true}
}

// gridRow2 reads row 2 with grid data: each cell's value, note and
// whether it carries a dropdown.
func gridRow2(t *testing.T, svc *sheets.Service, id string) (vals []any, notes []string, rules []bool) {
	t.Helper()
	ss, err := svc.Spreadsheets.Get(id).Ranges("Sheet1!A2:H2").IncludeGridData(true).Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ss.Sheets[0].Data {
		for _, rd := range d.RowData {
			for _, c := range rd.Values {
				var v any
				if c.UserEnteredValue != nil && c.UserEnteredValue.StringValue != nil {
					v = *c.UserEnteredValue.StringValue
				}
				vals, notes, rules = append(vals, v), append(notes, c.Note), append(rules, c.DataValidation != nil)
			}
		}
	}
	return vals, notes, rules
}

// metaColumn is the column the "col" developer metadata sits on (-1: gone).
func metaColumn(t *testing.T, svc *sheets.Service, id string) int64 {
	t.Helper()
	res, err := svc.Spreadsheets.DeveloperMetadata.Search(id, &sheets.SearchDeveloperMetadataRequest{DataFilters: []*sheets.DataFilter{{
		DeveloperMetadataLookup: &sheets.DeveloperMetadataLookup{MetadataKey: "col"}}}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.MatchedDeveloperMetadata) == 0 {
		return -1
	}
	return res.MatchedDeveloperMetadata[0].DeveloperMetadata.Location.DimensionRange.StartIndex
}

func assertColumns(t *testing.T, svc *sheets.Service, id string, header []any, noteAt, ruleAt int, meta int64) {
	t.Helper()
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:H1").Do()
	if err != nil {
		t.Fatal(err)
	}
	assertRow(t, got.Values[0], header)
	_, notes, rules := gridRow2(t, svc, id)
	for i := range notes {
		if (notes[i] != "") != (i == noteAt) || rules[i] != (i == ruleAt) {
			t.Fatalf("row 2 notes %q rules %v, want the note at %d and the rule at %d", notes, rules, noteAt, ruleAt)
		}
	}
	if m := metaColumn(t, svc, id); m != meta {
		t.Fatalf("column metadata at %d, want %d", m, meta)
	}
}

// Inserting columns (COLUMNS insertDimension) shifts every cell at or
// after the insertion point right, with its note, its validation and the
// developer metadata of its column; the new columns are blank.
func TestInsertColumnsMovesValuesNotesValidationAndMetadata(t *testing.T) {
	svc, id := columnsBook(t)
	batch(t, svc, id, &sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{
		Range: &sheets.DimensionRange{SheetId: 0, Dimension: "COLUMNS", StartIndex: 1, EndIndex: 3}}})
	assertColumns(t, svc, id, []any{"A", "", "", "B", "C", "D", "E"}, 4, 5, 4)
	ss, _ := svc.Spreadsheets.Get(id).Do()
	if n := ss.Sheets[0].Properties.GridProperties.ColumnCount; n != 28 {
		t.Fatalf("column count %d, want 28", n)
	}
}

// Deleting columns removes their cells, notes, validation and the
// developer metadata on them; the columns after shift left.
func TestDeleteColumnsTakesTheirNotesValidationAndMetadata(t *testing.T) {
	svc, id := columnsBook(t)
	batch(t, svc, id, &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{
		Range: &sheets.DimensionRange{SheetId: 0, Dimension: "COLUMNS", StartIndex: 1, EndIndex: 2}}})
	assertColumns(t, svc, id, []any{"A", "C", "D", "E"}, 1, 2, 1)
	batch(t, svc, id, &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{
		Range: &sheets.DimensionRange{SheetId: 0, Dimension: "COLUMNS", StartIndex: 1, EndIndex: 3}}})
	assertColumns(t, svc, id, []any{"A", "E"}, -1, -1, -1)
}

// moveDimension counts its destination before the source is taken out:
// B:C moved to 4 lands between D and E; moved to 0 they lead. Notes,
// validation and column metadata travel with their columns.
func TestMoveColumnsCarriesNotesValidationAndMetadata(t *testing.T) {
	svc, id := columnsBook(t)
	move := func(start, end, dest int64) {
		batch(t, svc, id, &sheets.Request{MoveDimension: &sheets.MoveDimensionRequest{
			Source: &sheets.DimensionRange{SheetId: 0, Dimension: "COLUMNS", StartIndex: start, EndIndex: end}, DestinationIndex: dest}})
	}
	move(1, 3, 4)
	assertColumns(t, svc, id, []any{"A", "D", "B", "C", "E"}, 3, 1, 3)
	move(2, 4, 0)
	assertColumns(t, svc, id, []any{"B", "C", "A", "D", "E"}, 1, 3, 1)
	move(4, 5, 1)
	assertColumns(t, svc, id, []any{"B", "E", "C", "A", "D"}, 2, 4, 2)
	vals, _, _ := gridRow2(t, svc, id)
	assertRow(t, vals, []any{"b1", "e1", "c1", "a1", "d1"})
	move(1, 2, 2) // into itself: nothing moves
	assertColumns(t, svc, id, []any{"B", "E", "C", "A", "D"}, 2, 4, 2)
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{MoveDimension: &sheets.MoveDimensionRequest{
		Source: &sheets.DimensionRange{SheetId: 0, Dimension: "COLUMNS", StartIndex: 1, EndIndex: 2}, DestinationIndex: 27}}}}).Do()
	if apiCode(t, err) != 400 {
		t.Fatalf("a destination beyond the grid: %v", err)
	}
}

// Moving rows works the same way (a sort-free reorder).
func TestMoveRowsCarriesCells(t *testing.T) {
	svc, id := columnsBook(t)
	batch(t, svc, id, &sheets.Request{MoveDimension: &sheets.MoveDimensionRequest{
		Source: &sheets.DimensionRange{SheetId: 0, Dimension: "ROWS", StartIndex: 1, EndIndex: 2}, DestinationIndex: 0}})
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:B2").Do()
	if err != nil {
		t.Fatal(err)
	}
	assertRow(t, got.Values[0], []any{"a1", "b1"})
	assertRow(t, got.Values[1], []any{"A", "B"})
}

// A value written over a cell keeps its note and validation; updateCells
// with the dataValidation mask sets or clears the rule and nothing else.
func TestUpdateCellsKeepsOrSetsValidation(t *testing.T) {
	svc, id := columnsBook(t)
	x := "typed"
	batch(t, svc, id, &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
		Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 1, EndRowIndex: 2, StartColumnIndex: 2, EndColumnIndex: 4},
		Rows: []*sheets.RowData{{Values: []*sheets.CellData{{UserEnteredValue: &sheets.ExtendedValue{StringValue: &x}},
			{UserEnteredValue: &sheets.ExtendedValue{StringValue: &x}}}}},
		Fields: "userEnteredValue"}})
	vals, notes, rules := gridRow2(t, svc, id)
	if vals[2] != x || notes[2] == "" || !rules[3] {
		t.Fatalf("a value write dropped the note or the rule: %v %q %v", vals, notes, rules)
	}
	batch(t, svc, id, &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
		Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 1, EndRowIndex: 2, StartColumnIndex: 3, EndColumnIndex: 5},
		Rows:  []*sheets.RowData{{Values: []*sheets.CellData{{}, {DataValidation: dropdown("a")}}}}, Fields: "dataValidation"}})
	vals, _, rules = gridRow2(t, svc, id)
	if rules[3] || !rules[4] || vals[3] != x || vals[4] != "e1" {
		t.Fatalf("dataValidation mask: rules %v values %v", rules, vals)
	}
	if _, err := svc.Spreadsheets.Values.Clear(id, "Sheet1!E2", &sheets.ClearValuesRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	if _, _, rules = gridRow2(t, svc, id); !rules[4] {
		t.Fatal("values.clear removed the validation")
	}
}
