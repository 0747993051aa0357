package emulator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	sheets "google.golang.org/api/sheets/v4"
)

// fakeClock is a settable Clock for quota tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestQuotaPerUserWritesWithInjectedClock(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, svc, id := newBookClient(t, Options{Quota: GoogleQuota(), Clock: clock})
	vr := &sheets.ValueRange{Values: rows([]any{"x"})}
	for i := 0; i < 60; i++ {
		if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		clock.Advance(100 * time.Millisecond)
	}
	_, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 429 {
		t.Fatalf("61st write: want 429, got %v", err)
	}
	want := "Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user' of service 'sheets.googleapis.com'"
	if !strings.HasPrefix(gerr.Message, want) || gerr.Header.Get("Retry-After") == "" {
		t.Fatalf("429 body/header: %q %q", gerr.Message, gerr.Header.Get("Retry-After"))
	}
	var ae *apierror.APIError
	if !errors.As(err, &ae) || ae.Reason() != "RATE_LIMIT_EXCEEDED" {
		t.Fatalf("want ErrorInfo reason RATE_LIMIT_EXCEEDED, got %v", err)
	}
	if _, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1").Do(); err != nil {
		t.Fatalf("reads have their own quota: %v", err)
	}
	clock.Advance(time.Minute)
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatalf("after a minute writes work again: %v", err)
	}
}

func TestQuotaPerProjectAcrossUsers(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	q := &Quota{ReadsPerUser: 5, ReadsPerProject: 8}
	emu := New(Options{Quota: q, Clock: clock})
	_ = emu.CreateSpreadsheet("b", "")
	svc := newClient(t, emu)
	for i := 0; i < 8; i++ {
		user := []string{"u1", "u2"}[i%2]
		if _, err := svc.Spreadsheets.Values.Get("b", "A1").Do(googleapi.QuotaUser(user)); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	_, err := svc.Spreadsheets.Values.Get("b", "A1").Do(googleapi.QuotaUser("u3"))
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 429 || !strings.Contains(gerr.Message, "'Read requests per minute'") {
		t.Fatalf("want project read quota 429, got %v", err)
	}
}

func TestBatchUpdateIsAtomicAndRepliesMapOneToOne(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "New"}}},
		{DeleteSheet: &sheets.DeleteSheetRequest{SheetId: 999}},
	}}).Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 400 || !strings.HasPrefix(gerr.Message, "Invalid requests[1].deleteSheet:") {
		t.Fatalf("want 400 on requests[1], got %v", err)
	}
	ss, _ := svc.Spreadsheets.Get(id).Do()
	if len(ss.Sheets) != 1 {
		t.Fatalf("nothing may be applied, got %d tabs", len(ss.Sheets))
	}
	resp, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "New"}}},
		{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{Properties: &sheets.SheetProperties{SheetId: 0, Title: "Renamed"}, Fields: "title"}},
	}}).Do()
	if err != nil || len(resp.Replies) != 2 || resp.Replies[0].AddSheet == nil || resp.Replies[0].AddSheet.Properties.Index != 1 {
		t.Fatalf("replies: %+v %v", resp, err)
	}
}

func TestUnknownRequestKindIs400(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddChart: &sheets.AddChartRequest{Chart: &sheets.EmbeddedChart{}}},
	}}).Do()
	if apiCode(t, err) != 400 {
		t.Fatalf("want 400, got %v", err)
	}
}

func TestMissingValueInputOptionIs400(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	_, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: rows([]any{"x"})}).Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 400 {
		t.Fatalf("want 400, got %v", err)
	}
	var ae *apierror.APIError
	if !errors.As(err, &ae) || ae.GRPCStatus().Code().String() != "InvalidArgument" {
		t.Fatalf("want INVALID_ARGUMENT status, got %v", err)
	}
}

func TestRangeErrorsMatchGoogle(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	_, err := svc.Spreadsheets.Values.Get(id, "Nope!A1").Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 400 || gerr.Message != "Unable to parse range: Nope!A1" {
		t.Fatalf("unknown tab: %v", err)
	}
	_, err = svc.Spreadsheets.Values.Get(id, "Sheet1!A1:Z2000").Do()
	if !errors.As(err, &gerr) || gerr.Message != "Range (Sheet1!A1:Z2000) exceeds grid limits. Max rows: 1000, max columns: 26" {
		t.Fatalf("grid limits: %v", err)
	}
	_, err = svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Huge", GridProperties: &sheets.GridProperties{RowCount: 10000, ColumnCount: 1000}}}},
	}}).Do()
	if !errors.As(err, &gerr) || gerr.Code != 400 || !strings.Contains(gerr.Message, "10000000") {
		t.Fatalf("cell limit: %v", err)
	}
}

func TestQuotedTabNamesAndEcho(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Bob's Sheet"}}},
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Spreadsheets.Values.Update(id, "'Bob''s Sheet'!A2:F", &sheets.ValueRange{Values: rows([]any{"a", "b"})}).ValueInputOption("RAW").Do()
	if err != nil || res.UpdatedRange != "'Bob''s Sheet'!A2:B2" {
		t.Fatalf("update: %+v %v", res, err)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "'Bob''s Sheet'!A2:F").Do()
	if err != nil || got.Range != "'Bob''s Sheet'!A2:F1000" {
		t.Fatalf("get: %+v %v", got, err)
	}
}

func TestCreateAndGetSpreadsheet(t *testing.T) {
	emu := New(Options{})
	svc := newClient(t, emu)
	ss, err := svc.Spreadsheets.Create(&sheets.Spreadsheet{Properties: &sheets.SpreadsheetProperties{Title: "Made"}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if ss.SpreadsheetId == "" || ss.Properties.Locale != "en_US" || ss.Properties.TimeZone == "" || ss.Sheets[0].Properties.Title != "Sheet1" ||
		ss.Sheets[0].Properties.GridProperties.RowCount != 1000 || ss.Sheets[0].Properties.GridProperties.ColumnCount != 26 {
		t.Fatalf("create: %+v", ss)
	}
	if _, err := svc.Spreadsheets.Get("missing").Do(); apiCode(t, err) != 404 {
		t.Fatalf("unknown id without AutoCreate must be 404, got %v", err)
	}
}

func TestGridDataFormulasErrorsNotesAndMerges(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows([]any{"=1/0", "=4/2", "=IMPORTDATA(\"x\")", "=A2*3"}, []any{5})}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{MergeCells: &sheets.MergeCellsRequest{Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 2, EndRowIndex: 3, StartColumnIndex: 0, EndColumnIndex: 2}, MergeType: "MERGE_ALL"}},
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := svc.Spreadsheets.Get(id).Ranges("Sheet1!A1:D3").IncludeGridData(true).Do()
	if err != nil {
		t.Fatal(err)
	}
	row := ss.Sheets[0].Data[0].RowData[0].Values
	if row[0].EffectiveValue.ErrorValue == nil || row[0].EffectiveValue.ErrorValue.Type != "DIVIDE_BY_ZERO" || row[0].FormattedValue != "#DIV/0!" {
		t.Fatalf("A1: %+v", row[0].EffectiveValue)
	}
	if *row[1].UserEnteredValue.FormulaValue != "=4/2" || *row[1].EffectiveValue.NumberValue != 2 {
		t.Fatalf("B1: %+v", row[1])
	}
	if row[2].EffectiveValue.ErrorValue == nil {
		t.Fatalf("unsupported functions must be errors, got %+v", row[2].EffectiveValue)
	}
	if *row[3].EffectiveValue.NumberValue != 15 {
		t.Fatalf("cell references evaluate: %+v", row[3].EffectiveValue)
	}
	if len(ss.Sheets[0].Merges) != 1 || ss.Sheets[0].Merges[0].EndColumnIndex != 2 {
		t.Fatalf("merges: %+v", ss.Sheets[0].Merges)
	}
}

func TestDeveloperMetadataFollowsRows(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	create := &sheets.Request{CreateDeveloperMetadata: &sheets.CreateDeveloperMetadataRequest{DeveloperMetadata: &sheets.DeveloperMetadata{
		MetadataKey: "row_id", MetadataValue: "id-5", Visibility: "DOCUMENT",
		Location: &sheets.DeveloperMetadataLocation{DimensionRange: &sheets.DimensionRange{SheetId: 0, Dimension: "ROWS", StartIndex: 4, EndIndex: 5}},
	}}}
	resp, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{create}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	metaID := resp.Replies[0].CreateDeveloperMetadata.DeveloperMetadata.MetadataId
	insert := &sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: &sheets.DimensionRange{SheetId: 0, Dimension: "ROWS", StartIndex: 1, EndIndex: 2}}}
	if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{insert}}).Do(); err != nil {
		t.Fatal(err)
	}
	m, err := svc.Spreadsheets.DeveloperMetadata.Get(id, metaID).Do()
	if err != nil || m.Location.DimensionRange.StartIndex != 5 || m.Location.LocationType != "ROW" {
		t.Fatalf("after insert above, metadata must be on row index 5: %+v %v", m, err)
	}
	search := &sheets.SearchDeveloperMetadataRequest{DataFilters: []*sheets.DataFilter{{DeveloperMetadataLookup: &sheets.DeveloperMetadataLookup{MetadataKey: "row_id"}}}}
	found, err := svc.Spreadsheets.DeveloperMetadata.Search(id, search).Do()
	if err != nil || len(found.MatchedDeveloperMetadata) != 1 || found.MatchedDeveloperMetadata[0].DeveloperMetadata.MetadataValue != "id-5" {
		t.Fatalf("search: %+v %v", found, err)
	}
	del := &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: &sheets.DimensionRange{SheetId: 0, Dimension: "ROWS", StartIndex: 5, EndIndex: 6}}}
	if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{del}}).Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.DeveloperMetadata.Get(id, metaID).Do(); apiCode(t, err) != 404 {
		t.Fatalf("deleting the row deletes its metadata, got %v", err)
	}
}

func TestSortRangeMovesRowsAndMetadata(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows([]any{"id"}, []any{1}, []any{3}, []any{2})}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	meta := &sheets.Request{CreateDeveloperMetadata: &sheets.CreateDeveloperMetadataRequest{DeveloperMetadata: &sheets.DeveloperMetadata{
		MetadataKey: "anchor", MetadataValue: "three", Visibility: "DOCUMENT",
		Location: &sheets.DeveloperMetadataLocation{DimensionRange: &sheets.DimensionRange{Dimension: "ROWS", StartIndex: 2, EndIndex: 3}},
	}}}
	sortReq := &sheets.Request{SortRange: &sheets.SortRangeRequest{Range: &sheets.GridRange{StartRowIndex: 1, EndRowIndex: 4},
		SortSpecs: []*sheets.SortSpec{{DimensionIndex: 0, SortOrder: "DESCENDING"}}}}
	if _, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{meta, sortReq}}).Do(); err != nil {
		t.Fatal(err)
	}
	shown, _ := emu.Person(id).Displayed("Sheet1")
	if len(shown) != 4 || shown[1][0] != "3" || shown[2][0] != "2" || shown[3][0] != "1" {
		t.Fatalf("sorted: %v", shown)
	}
	found, _ := svc.Spreadsheets.DeveloperMetadata.Search(id, &sheets.SearchDeveloperMetadataRequest{DataFilters: []*sheets.DataFilter{{A1Range: "Sheet1!A2"}}}).Do()
	if len(found.MatchedDeveloperMetadata) != 1 || found.MatchedDeveloperMetadata[0].DeveloperMetadata.MetadataValue != "three" {
		t.Fatalf("metadata must move with its row: %+v", found)
	}
}

func TestCountersReadsAndWrites(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	_, _ = svc.Spreadsheets.Get(id).Do()
	_, _ = svc.Spreadsheets.Values.BatchGet(id).Ranges("A1", "B2").Do()
	_, _ = svc.Spreadsheets.Values.Update(id, "A1", &sheets.ValueRange{Values: rows([]any{1})}).ValueInputOption("RAW").Do()
	_ = emu.Person(id).Type("Sheet1", "C3", "person edits are not counted")
	if c := emu.Counters(id); c.Reads != 2 || c.Writes != 1 {
		t.Fatalf("counters = %+v", c)
	}
	emu.ResetCounters()
	if c := emu.Counters(id); c != (Counters{}) {
		t.Fatalf("after reset: %+v", c)
	}
}

func TestLatencyModelChargesRequestAndCells(t *testing.T) {
	var mu sync.Mutex
	var slept []time.Duration
	sleep := func(_ context.Context, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		slept = append(slept, d)
	}
	_, svc, id := newBookClient(t, Options{Latency: GoogleLatency(), Sleep: sleep})
	vr := &sheets.ValueRange{Values: rows([]any{1, 2, 3}, []any{4, 5, 6})}
	if _, err := svc.Spreadsheets.Values.Update(id, "A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(slept) != 1 || slept[0] != 150*time.Millisecond+6*20*time.Microsecond {
		t.Fatalf("slept %v", slept)
	}
}

func TestHTML502AndPlain503Faults(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	emu.ScriptFaults(Fault{Kind: FaultHTML502, Match: MatchReads}, Fault{Kind: Fault503})
	_, err := svc.Spreadsheets.Values.Get(id, "A1").Do()
	if apiCode(t, err) != 502 {
		t.Fatalf("want 502, got %v", err)
	}
	_, err = svc.Spreadsheets.Values.Update(id, "A1", &sheets.ValueRange{Values: rows([]any{"x"})}).ValueInputOption("RAW").Do()
	if apiCode(t, err) != 503 {
		t.Fatalf("want 503, got %v", err)
	}
	got, _ := svc.Spreadsheets.Values.Get(id, "A1").Do()
	if got.Values != nil || emu.PendingFaults() != 0 {
		t.Fatalf("a plain 503 applies nothing: %v", got.Values)
	}
}

func TestRandomFaultCampaignIsSeeded(t *testing.T) {
	outcomes := func() []int {
		emu, svc, id := newBookClient(t, Options{Seed: 42})
		emu.SetFaultRates(FaultRates{P503: 0.3, P500: 0.2})
		var codes []int
		for i := 0; i < 30; i++ {
			_, err := svc.Spreadsheets.Values.Get(id, "A1").Do()
			code := 200
			if err != nil {
				code = apiCode(t, err)
			}
			codes = append(codes, code)
		}
		return codes
	}
	a, b := outcomes(), outcomes()
	faults := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed must give the same campaign: %v vs %v", a, b)
		}
		if a[i] != 200 {
			faults++
		}
	}
	if faults == 0 || faults == len(a) {
		t.Fatalf("campaign should mix faults and successes: %v", a)
	}
}

// TestARandomFaultCampaignsQuotaErrorsCarryItsRetryAfter: a campaign's
// 429s say Retry-After: 60 unless the campaign sets its own (whole
// seconds, at least one).
func TestARandomFaultCampaignsQuotaErrorsCarryItsRetryAfter(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		want  string
	}{{0, "60"}, {3 * time.Second, "3"}, {200 * time.Millisecond, "1"}} {
		emu, svc, id := newBookClient(t, Options{Seed: 7})
		emu.SetFaultRates(FaultRates{P429: 1, RetryAfter: c.after})
		_, err := svc.Spreadsheets.Values.Get(id, "A1").Do()
		var gerr *googleapi.Error
		if !errors.As(err, &gerr) || gerr.Code != 429 {
			t.Fatalf("RetryAfter %v: want a 429, got %v", c.after, err)
		}
		if got := gerr.Header.Get("Retry-After"); got != c.want {
			t.Errorf("RetryAfter %v: Retry-After %q, want %q", c.after, got, c.want)
		}
	}
}
