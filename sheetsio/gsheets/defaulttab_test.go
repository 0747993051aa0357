package gsheets

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func (h *harness) batch(reqs ...*sheets.Request) {
	h.t.Helper()
	if _, err := h.raw.Spreadsheets.BatchUpdate(testSheetID, &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Do(); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) title() string {
	h.t.Helper()
	ss, err := h.raw.Spreadsheets.Get(testSheetID).Do()
	if err != nil {
		h.t.Fatal(err)
	}
	return ss.Properties.Title
}

// TestProvisionFreshSpreadsheetEndsTitledWithOnlyTheProductTabs: a new
// spreadsheet (one empty "Sheet1", "Untitled spreadsheet") ends with the
// layout's tabs only and the product's title, in the one provisioning
// batchUpdate (two reads: the enumeration and the emptiness check).
func TestProvisionFreshSpreadsheetEndsTitledWithOnlyTheProductTabs(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t, "Part", "Bin")
	if got := h.title(); got != untitledTitle || !slices.Equal(h.tabTitles(), []string{"Sheet1"}) {
		t.Fatalf("precondition: title %q tabs %v", got, h.tabTitles())
	}
	before := h.counters()
	h.provision(s)
	c := h.counters()
	if c.Writes-before.Writes != 1 || c.Reads-before.Reads != 2 {
		t.Fatalf("provision cost %d reads, %d writes; want 2 and 1", c.Reads-before.Reads, c.Writes-before.Writes)
	}
	titles := h.tabTitles()
	slices.Sort(titles)
	if !slices.Equal(titles, s.TabNames()) {
		t.Fatalf("tabs %v, want exactly %v", titles, s.TabNames())
	}
	if got := h.title(); got != "Hikoutei — Part, Bin" {
		t.Fatalf("title %q", got)
	}
	h.provision(s)
	if h.counters().Writes != c.Writes {
		t.Fatal("re-provisioning wrote again")
	}
}

// TestProvisionNeverRemovesADefaultTabThatHoldsAnything: a Sheet1 with
// one value, with only a note, with a frozen row, a renamed empty first
// tab and a second empty tab all survive, and the spreadsheet keeps its
// title (it did not hold nothing).
func TestProvisionNeverRemovesADefaultTabThatHoldsAnything(t *testing.T) {
	note := "keep me"
	cases := map[string]struct {
		setup func(h *harness)
		keep  string
	}{
		"one value": {keep: "Sheet1", setup: func(h *harness) {
			vr := &sheets.ValueRange{Values: [][]any{{"x"}}}
			if _, err := h.raw.Spreadsheets.Values.Update(testSheetID, "Sheet1!C7", vr).ValueInputOption("RAW").Do(); err != nil {
				h.t.Fatal(err)
			}
		}},
		"only a note": {keep: "Sheet1", setup: func(h *harness) {
			h.batch(&sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
				Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 1, EndRowIndex: 2, StartColumnIndex: 1, EndColumnIndex: 2, ForceSendFields: []string{"SheetId"}},
				Rows:  []*sheets.RowData{{Values: []*sheets.CellData{{Note: note}}}}, Fields: "note"}})
		}},
		"a frozen row": {keep: "Sheet1", setup: func(h *harness) {
			h.batch(&sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
				Properties: &sheets.SheetProperties{SheetId: 0, GridProperties: &sheets.GridProperties{FrozenRowCount: 1}, ForceSendFields: []string{"SheetId"}},
				Fields:     "gridProperties.frozenRowCount"}})
		}},
		"a renamed empty tab": {keep: "Inventory", setup: func(h *harness) {
			h.batch(&sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
				Properties: &sheets.SheetProperties{SheetId: 0, Title: "Inventory", ForceSendFields: []string{"SheetId"}}, Fields: "title"}})
		}},
		"a second empty tab": {keep: "Sheet1", setup: func(h *harness) {
			h.batch(&sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Notes"}}})
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, emulator.Options{AutoCreate: true})
			tc.setup(h)
			h.provision(testSchema(t))
			if !slices.Contains(h.tabTitles(), tc.keep) {
				t.Fatalf("tab %s removed: %v", tc.keep, h.tabTitles())
			}
			if got := h.title(); got != untitledTitle {
				t.Fatalf("title changed to %q", got)
			}
		})
	}
}

// TestProvisionKeepsAnEmptyTabAddedAfterProvisioning: once the product's
// tabs exist, an empty tab a person adds (even one called "Sheet1") is
// never a candidate.
func TestProvisionKeepsAnEmptyTabAddedAfterProvisioning(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t)
	w := h.provision(s)
	h.batch(&sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Sheet1"}}})
	if _, err := h.p.Reprovision(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(h.tabTitles(), "Sheet1") {
		t.Fatalf("a person's empty tab was removed: %v", h.tabTitles())
	}
}

// TestBlankTabIsOnlyATabThatHoldsNothing: the emptiness rule on what the
// check reads — any value, note, format, validation, hidden row, merge,
// conditional format or changed grid property makes the tab not blank.
func TestBlankTabIsOnlyATabThatHoldsNothing(t *testing.T) {
	fresh := func() *sheets.Sheet {
		return &sheets.Sheet{Properties: &sheets.SheetProperties{Title: "Sheet1",
			GridProperties: &sheets.GridProperties{RowCount: 1000, ColumnCount: 26}},
			Data: []*sheets.GridData{{RowMetadata: []*sheets.DimensionProperties{{PixelSize: 21}}}}}
	}
	withCell := func(c *sheets.CellData) func(*sheets.Sheet) {
		return func(sh *sheets.Sheet) { sh.Data[0].RowData = []*sheets.RowData{{Values: []*sheets.CellData{{}, c}}} }
	}
	if !blankTab(fresh()) {
		t.Fatal("a new tab is not blank")
	}
	one := 1.0
	for name, change := range map[string]func(*sheets.Sheet){
		"value":      withCell(&sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &one}}),
		"note":       withCell(&sheets.CellData{Note: "n"}),
		"format":     withCell(&sheets.CellData{UserEnteredFormat: &sheets.CellFormat{WrapStrategy: "CLIP"}}),
		"validation": withCell(&sheets.CellData{DataValidation: &sheets.DataValidationRule{}}),
		"hidden row": func(sh *sheets.Sheet) { sh.Data[0].RowMetadata[0].HiddenByUser = true },
		"merge":      func(sh *sheets.Sheet) { sh.Merges = []*sheets.GridRange{{}} },
		"cond. fmt":  func(sh *sheets.Sheet) { sh.ConditionalFormats = []*sheets.ConditionalFormatRule{{}} },
		"rows":       func(sh *sheets.Sheet) { sh.Properties.GridProperties.RowCount = 999 },
		"tab colour": func(sh *sheets.Sheet) { sh.Properties.TabColorStyle = &sheets.ColorStyle{ThemeColor: "ACCENT1"} },
		"metadata":   func(sh *sheets.Sheet) { sh.DeveloperMetadata = []*sheets.DeveloperMetadata{{MetadataKey: "k"}} },
	} {
		sh := fresh()
		change(sh)
		if blankTab(sh) {
			t.Errorf("a tab with a %s is blank", name)
		}
	}
}

// TestSpreadsheetTitleNamesTheEntities: "Hikoutei — " and the entities in
// declaration order, cut to 100 characters.
func TestSpreadsheetTitleNamesTheEntities(t *testing.T) {
	if got := spreadsheetTitle(testSchema(t, "Part", "Bin")); got != "Hikoutei — Part, Bin" {
		t.Fatalf("title %q", got)
	}
	empty, _ := layout.NewSchema()
	if got := spreadsheetTitle(empty); got != "Hikoutei" {
		t.Fatalf("title without entities %q", got)
	}
	var many []string
	for i := range 30 {
		many = append(many, "Entity"+string(rune('A'+i%26))+string(rune('a'+i/26)))
	}
	if got := []rune(spreadsheetTitle(testSchema(t, many...))); len(got) != 100 || got[99] != '…' {
		t.Fatalf("long title %q (%d)", string(got), len(got))
	}
}
