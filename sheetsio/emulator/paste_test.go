package emulator

import (
	"reflect"
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

func pasteReq(row, col int64, data string) *sheets.Request {
	return &sheets.Request{PasteData: &sheets.PasteDataRequest{Coordinate: &sheets.GridCoordinate{RowIndex: row, ColumnIndex: col},
		Data: data, Delimiter: "\t", Type: "PASTE_VALUES"}}
}

func setLocale(t *testing.T, svc *sheets.Service, id, locale string) {
	t.Helper()
	batch(t, svc, id, &sheets.Request{UpdateSpreadsheetProperties: &sheets.UpdateSpreadsheetPropertiesRequest{
		Properties: &sheets.SpreadsheetProperties{Locale: locale}, Fields: "locale"}})
}

// pasteData parses each cell like text a person pastes, in the
// spreadsheet's locale: numbers with the locale's separators, day-first
// dates, the locale's boolean words, formulas; text stays text.
func TestPasteDataParsesInTheLocale(t *testing.T) {
	cases := map[string][]any{
		"en_US": {"Vila", 1.5, float64(50), true, false, float64(43831), "1,5", "=1+1", "quoted", "x1"},
		"de_DE": {"Vila", "1.5", float64(50), true, false, float64(43831), 1.5, "=1+1", "quoted", "x1"},
		"fr_FR": {"Vila", "1.5", float64(50), true, false, float64(43831), 1.5, "=1+1", "quoted", "x1"},
		"en_GB": {"Vila", 1.5, float64(50), true, false, float64(43831), "1,5", "=1+1", "quoted", "x1"},
	}
	bools := map[string][2]string{"en_US": {"TRUE", "false"}, "en_GB": {"true", "FALSE"}, "de_DE": {"wahr", "FALSCH"}, "fr_FR": {"Vrai", "faux"}}
	dates := map[string]string{"en_US": "1/1/2020", "en_GB": "01/01/2020", "de_DE": "1.1.2020", "fr_FR": "01/01/2020"}
	for locale, want := range cases {
		t.Run(locale, func(t *testing.T) {
			_, svc, id := newBookClient(t, Options{})
			setLocale(t, svc, id, locale)
			line := "Vila\t1.5\t0050\t" + bools[locale][0] + "\t" + bools[locale][1] + "\t" + dates[locale] + "\t1,5\t=1+1\t'quoted\tx1"
			batch(t, svc, id, pasteReq(1, 0, line))
			got, err := svc.Spreadsheets.Values.Get(id, "A2:J2").ValueRenderOption("FORMULA").Do()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Values[0], want) {
				t.Fatalf("pasted %#v\nwant %#v", got.Values[0], want)
			}
		})
	}
}

// pasteData refuses what the emulator does not model and a paste past
// the grid; nothing of the batchUpdate is applied. Its cells count as
// written for the latency model.
func TestPasteDataRefusals(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	bad := []*sheets.Request{
		{PasteData: &sheets.PasteDataRequest{Coordinate: &sheets.GridCoordinate{}, Data: "<b>x</b>", Html: true}},
		{PasteData: &sheets.PasteDataRequest{Coordinate: &sheets.GridCoordinate{}, Data: "x"}},
		{PasteData: &sheets.PasteDataRequest{Data: "x", Delimiter: ","}},
		pasteReq(999, 0, "a\nb"),
		pasteReq(0, 25, "a\tb"),
	}
	for i, r := range bad {
		_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
			pasteReq(0, 0, "kept out"), r}}).Do()
		if apiCode(t, err) != 400 {
			t.Fatalf("request %d: %v, want 400", i, err)
		}
	}
	got, _ := svc.Spreadsheets.Values.Get(id, "A1").Do()
	if len(got.Values) != 0 {
		t.Fatalf("a refused batch applied: %v", got.Values)
	}
	if n := pastedCells([]byte(`{"data":"a\tb\nc","delimiter":"\t"}`)); n != 3 {
		t.Fatalf("pastedCells = %d, want 3", n)
	}
}
