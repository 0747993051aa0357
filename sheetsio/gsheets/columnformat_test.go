package gsheets

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

var dateTimeText = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$`)

// timeCells lists, per tab, the Time columns of the layout.
func timeCells(s *layout.Schema) map[string][]int {
	out := map[string][]int{}
	for _, t := range s.Tabs() {
		for i, c := range t.Columns {
			if c.Kind == cell.Time {
				out[t.Name] = append(out[t.Name], i)
			}
		}
	}
	return out
}

// formatted reads a tab as a person sees it (FORMATTED_VALUE).
func (h *harness) formatted(title string) [][]any {
	h.t.Helper()
	vr, err := h.raw.Spreadsheets.Values.Get(testSheetID, a1.QuoteSheet(title)).ValueRenderOption("FORMATTED_VALUE").Do()
	if err != nil {
		h.t.Fatal(err)
	}
	return vr.Values
}

// seedTimes writes one row with a time into every tab that has a Time
// column: an entity row, a conflict row, and (fenced) the authority and a
// receipt.
func seedTimes(h *harness, w *sheetsio.Workbook) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h.dispatch(w, sheetsio.Batch{Fence: &sheetsio.Fence{StoreID: "store-1", Epoch: 1, Token: "tok"}, Ops: []sheetsio.Op{
		appendOp("Part_System", "r1", partValues("1", 5)),
		appendOp(layout.ConflictsTab, "c1", map[string]any{layout.ConflictID: "c1", layout.ConflictStatus: "RESOLVED",
			layout.ConflictOpenedAt: at, layout.ConflictResolvedAt: at.Add(time.Hour)}),
	}})
}

// wantDateTimes fails unless every Time cell of every data row reads as
// date-time text.
func wantDateTimes(h *harness, s *layout.Schema) {
	h.t.Helper()
	for tab, cols := range timeCells(s) {
		rows := h.formatted(tab)
		if len(rows) < 2 {
			h.t.Fatalf("%s has no data row: %v", tab, rows)
		}
		for _, r := range rows[1:] {
			for _, c := range cols {
				if c >= len(r) || !dateTimeText.MatchString(r[c].(string)) {
					h.t.Fatalf("%s column %d shows %v, want a date-time", tab, c, r)
				}
			}
		}
	}
}

// TestProvisionFormatsTimeColumnsOfAnOlderSpreadsheetInPlace: a
// spreadsheet written by an earlier version (time cells without a
// date-time format, tabs without the formats marker) gets the formats at
// the next start, in one batchUpdate; every value stays as it was, and a
// further start writes nothing.
func TestProvisionFormatsTimeColumnsOfAnOlderSpreadsheetInPlace(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t)
	w := h.provision(s)
	seedTimes(h, w)
	var unformat []*sheets.Request
	for tab := range timeCells(s) {
		id, _ := w.SheetID(tab)
		unformat = append(unformat, &sheets.Request{RepeatCell: &sheets.RepeatCellRequest{
			Range: &sheets.GridRange{SheetId: id, ForceSendFields: []string{"SheetId"}}, Cell: &sheets.CellData{}, Fields: formatFields}})
	}
	unformat = append(unformat, &sheets.Request{DeleteDeveloperMetadata: &sheets.DeleteDeveloperMetadataRequest{
		DataFilter: &sheets.DataFilter{DeveloperMetadataLookup: &sheets.DeveloperMetadataLookup{MetadataKey: formatsMarkerKey}}}})
	h.batch(unformat...)
	for tab, cols := range timeCells(s) {
		if got := h.formatted(tab)[1][cols[0]]; dateTimeText.MatchString(got.(string)) {
			t.Fatalf("precondition: the older %s shows %v", tab, got)
		}
	}
	before := map[string][][]any{}
	for _, n := range s.TabNames() {
		before[n] = h.values(n)
	}
	writes := h.counters().Writes
	h.provision(s)
	if got := h.counters().Writes - writes; got != 1 {
		t.Fatalf("formatting in place cost %d writes, want 1", got)
	}
	wantDateTimes(h, s)
	for _, n := range s.TabNames() {
		if got := h.values(n); !sameRows(got, before[n]) {
			t.Fatalf("%s rows changed:\n%v\n%v", n, before[n], got)
		}
	}
	writes = h.counters().Writes
	h.provision(s)
	if h.counters().Writes != writes {
		t.Fatal("a start after formatting wrote again")
	}
}

func sameRows(a, b [][]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestFreshSpreadsheetShowsEveryTimeCellAsADateTime: after provisioning
// and a fenced dispatch, the time cells of the entity, Sync_Conflicts,
// receipts and authority tabs all read as date-time text with
// FORMATTED_VALUE.
func TestFreshSpreadsheetShowsEveryTimeCellAsADateTime(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t)
	seedTimes(h, h.provision(s))
	wantDateTimes(h, s)
}

// batchRecorder keeps the bodies of the batchUpdates an emulator served.
type batchRecorder struct {
	mu     sync.Mutex
	bodies []sheets.BatchUpdateSpreadsheetRequest
}

func (r *batchRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, ":batchUpdate") && !strings.Contains(req.URL.Path, "/values") {
			body, _ := io.ReadAll(req.Body)
			var b sheets.BatchUpdateSpreadsheetRequest
			if json.Unmarshal(body, &b) == nil {
				r.mu.Lock()
				r.bodies = append(r.bodies, b)
				r.mu.Unlock()
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, req)
	})
}

// TestProvisionSendsTheColumnFormatsInItsOneBatchUpdate: the provisioning
// batchUpdate (as the client sent it over HTTP) gives every Time column a
// DATE_TIME format from row 2 down, clips the receipts tab's cells (the
// emulator does not model wrapping, so the request itself is checked) and
// marks every tab.
func TestProvisionSendsTheColumnFormatsInItsOneBatchUpdate(t *testing.T) {
	rec := &batchRecorder{}
	srv := httptest.NewServer(rec.wrap(emulator.New(emulator.Options{AutoCreate: true}).Handler()))
	t.Cleanup(srv.Close)
	p, err := New(context.Background(), Config{Endpoint: srv.URL, Pacing: Pacing{ReadInterval: -1, WriteInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	s := testSchema(t)
	w, err := p.Provision(context.Background(), testSheetID, s)
	if err != nil || len(rec.bodies) != 1 {
		t.Fatalf("provision: %v, %d batchUpdates", err, len(rec.bodies))
	}
	dateCols, clipped, marked := map[int64][]int64{}, map[int64]bool{}, map[int64]bool{}
	for _, r := range rec.bodies[0].Requests {
		switch {
		case r.RepeatCell != nil && r.RepeatCell.Fields == formatFields:
			nf := r.RepeatCell.Cell.UserEnteredFormat.NumberFormat
			if nf.Type != "DATE_TIME" || r.RepeatCell.Range.StartRowIndex != 1 || r.RepeatCell.Range.EndRowIndex != 0 {
				t.Fatalf("time column format %+v on %+v", nf, r.RepeatCell.Range)
			}
			dateCols[r.RepeatCell.Range.SheetId] = append(dateCols[r.RepeatCell.Range.SheetId], r.RepeatCell.Range.StartColumnIndex)
		case r.RepeatCell != nil && r.RepeatCell.Fields == clipFields:
			clipped[r.RepeatCell.Range.SheetId] = r.RepeatCell.Cell.UserEnteredFormat.WrapStrategy == "CLIP"
		case r.CreateDeveloperMetadata != nil:
			marked[r.CreateDeveloperMetadata.DeveloperMetadata.Location.SheetId] = true
		}
	}
	for _, tab := range s.Tabs() {
		id, _ := w.SheetID(tab.Name)
		if want := timeCells(s)[tab.Name]; len(dateCols[id]) != len(want) {
			t.Errorf("%s: date-time columns %v, want %v", tab.Name, dateCols[id], want)
		}
		if clipped[id] != (tab.Role == layout.RoleReceipts) || !marked[id] {
			t.Errorf("%s: clipped %v marked %v", tab.Name, clipped[id], marked[id])
		}
	}
}
