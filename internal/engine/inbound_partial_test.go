package engine_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// gridSpy stands between the provider and the emulator: it records the
// data filters of every spreadsheets.getByDataFilter, counts whole grid
// reads (spreadsheets.get with includeGridData), and runs `before` once,
// just ahead of the next getByDataFilter reaching the emulator: a person's
// edit landing between a poll's values read and its grid read.
type gridSpy struct {
	mu        sync.Mutex
	filters   [][]*sheets.DataFilter
	wholeGets int
	before    func()
}

func (s *gridSpy) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var hook func()
		if strings.HasSuffix(r.URL.Path, ":getByDataFilter") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req sheets.GetSpreadsheetByDataFilterRequest
			_ = json.Unmarshal(body, &req)
			s.mu.Lock()
			s.filters, hook, s.before = append(s.filters, req.DataFilters), s.before, nil
			s.mu.Unlock()
		}
		if r.Method == http.MethodGet && r.URL.Query().Get("includeGridData") == "true" {
			s.mu.Lock()
			s.wholeGets++
			s.mu.Unlock()
		}
		if hook != nil {
			hook()
		}
		h.ServeHTTP(w, r)
	})
}

// reset forgets what was recorded.
func (s *gridSpy) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filters, s.wholeGets = nil, 0
}

// gridRows returns, per getByDataFilter request, the 1-based sheet rows
// its grid ranges cover, ascending.
func (s *gridSpy) gridRows() [][]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]int
	for _, fs := range s.filters {
		var rows []int
		for _, f := range fs {
			if g := f.GridRange; g != nil {
				for r := g.StartRowIndex; r < g.EndRowIndex; r++ {
					rows = append(rows, int(r)+1)
				}
			}
		}
		slices.Sort(rows)
		out = append(out, rows)
	}
	return out
}

// openSpied is openInbound with a gridSpy in front of the emulator.
func openSpied(t *testing.T) (*synced, *gridSpy) {
	t.Helper()
	spy := &gridSpy{}
	sheet := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), spy.wrap)
	return openSyncedOn(t, t.TempDir(), sheet, nil, parts), spy
}

func TestInboundEscalatedPassReadsGridDataOnlyForTheEditedRows(t *testing.T) {
	x, spy := openSpied(t)
	seedParts(t, x, 30)
	want := []int{1} // the header, validated in the same read
	for _, id := range []string{"3", "17", "18"} {
		want = append(want, x.rowNumber(id))
		x.typeIn(id, "notes", "edited "+id)
	}
	slices.Sort(want)
	x.emu.ResetCounters()
	spy.reset()
	r := x.poll()
	if r.Escalated != 1 || r.Stats.Accepted != 3 || r.Stats.Deferred != 0 {
		t.Fatalf("poll over 3 edited rows: %+v", r)
	}
	got := spy.gridRows()
	if len(got) != 1 || !slices.Equal(got[0], want) || spy.wholeGets != 0 {
		t.Fatalf("grid reads cover rows %v (want one request for rows %v), %d whole-tab grid reads", got, want, spy.wholeGets)
	}
	if c := x.emu.Counters(sheetID); c.Reads != 2 || c.Writes != 0 {
		t.Fatalf("escalated pass: %d reads, %d writes; want the values read and one grid read", c.Reads, c.Writes)
	}
	for _, id := range []string{"3", "17", "18"} {
		if p := x.part(id); p.Notes != "edited "+id {
			t.Fatalf("part %s after the pass: %+v", id, p)
		}
	}
}

func TestInboundPartialGridReadKeepsTheEvidenceOfRowsItLeavesOut(t *testing.T) {
	x, spy := openSpied(t)
	seedParts(t, x, 10)
	x.typeIn("2", "sku", "123") // a number in a text column: quarantined
	x.poll()
	if q := x.quarantine(partInput); !hasReason(q["2"], "cell_type_mismatch") {
		t.Fatalf("quarantine %v", q)
	}
	x.typeIn("7", "notes", "later edit")
	spy.reset()
	r := x.poll()
	got := spy.gridRows()
	if r.Stats.Accepted != 1 || len(got) != 1 || slices.Contains(got[0], x.rowNumber("2")) {
		t.Fatalf("poll %+v read rows %v; want only the header and row %d", r, got, x.rowNumber("7"))
	}
	if q := x.quarantine(partInput); !hasReason(q["2"], "cell_type_mismatch") || x.part("2").SKU != "00002" {
		t.Fatalf("the evidence of a row the grid read left out changed: %v, %+v", q, x.part("2"))
	}
}

func TestInboundRowShiftBetweenTheValuesAndTheGridReadIsNeverImported(t *testing.T) {
	x, spy := openSpied(t)
	seedParts(t, x, 20)
	x.typeIn("5", "notes", "five")
	x.typeIn("6", "notes", "six")
	row4 := x.rowNumber("4")
	person := x.sheet.Person()
	// The person deletes row 4 after the values read: the rows where 5 and
	// 6 were now show 6 and 7.
	spy.before = func() { mustT(t, person.DeleteRows(partInput, row4, 1)) }
	before := x.head()
	r := x.poll()
	types := x.eventTypes(before)
	if r.Stats.Accepted != 0 || r.Stats.Deferred != 2 || types[events.TypeEntityPersisted]+types[events.TypeObservationAccepted] != 0 {
		t.Fatalf("shifted pass: %+v, events %v", r, types)
	}
	for _, id := range []string{"5", "6", "7"} {
		if p := x.part(id); p.Notes != "" || len(x.quarantine(partInput)[id]) != 0 {
			t.Fatalf("part %s took a shifted row: %+v, quarantine %v", id, p, x.quarantine(partInput))
		}
	}
	r = x.poll() // rows stand still now: the edits land on their own keys
	q := x.quarantine(partInput)
	if r.Stats.Accepted != 2 || x.part("5").Notes != "five" || x.part("6").Notes != "six" || x.part("7").Notes != "" || !hasReason(q["4"], aggregates.ReasonRowDeleted) {
		t.Fatalf("next pass: %+v, parts 5/6/7 %q/%q/%q, quarantine %v", r, x.part("5").Notes, x.part("6").Notes, x.part("7").Notes, q)
	}
	x.drain()
	// A sort between the two reads moves every row.
	x.typeIn("10", "notes", "ten")
	row10 := x.rowNumber("10")
	spy.before = func() { mustT(t, person.SortByColumn(partInput, "A", true, 1)) }
	r = x.poll()
	if moved := x.rowNumber("10"); moved == row10 || r.Stats.Accepted != 0 || r.Stats.Deferred != 1 || x.part("10").Notes != "" {
		t.Fatalf("sorted between the reads (row %d → %d): %+v, part 10 %+v", row10, moved, r, x.part("10"))
	}
	if r = x.poll(); r.Stats.Accepted != 1 || x.part("10").Notes != "ten" {
		t.Fatalf("after the sort: %+v, part 10 %+v", r, x.part("10"))
	}
}
