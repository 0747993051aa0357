package hikoutei_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"
	"zombiezen.com/go/sqlite"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/sheetcheck"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// Place is the entity of the adoption tests: every kind of field, one of
// them nullable, one people edit.
type Place struct {
	Code   string     `hikoutei:"code,pk"`
	Name   string     `hikoutei:"name"`
	Alt    int64      `hikoutei:"alt"`
	Lat    float64    `hikoutei:"lat"`
	Opened *time.Time `hikoutei:"opened"`
	Active bool       `hikoutei:"active"`
	Notes  string     `hikoutei:"notes,user"`
}

const placesTab = "Places"

// placesRows is the tab as people keep it: no anchors, a header with an
// unknown column, dates as text and as typed dates, duplicate, broken and
// blank rows, a formula, a merged cell. Cells are typed as the UI takes
// them: "'…" is text, "=…" a formula, "TRUE" a boolean, "125" a number,
// "2024-03-02" a date.
var placesRows = [][]string{
	{"Code", "Name", "Altitude", "lat", "Opened", "Active", "Notes", "Comments"},
	{"LAX", "Los Angeles", "125", "33.94", "'2024-03-01", "TRUE", "gate B", "ok"},     // 2 create (date as text)
	{"'00123", "Leading zeros", "5", "1.5", "2024-03-02", "FALSE"},                    // 3 create (C01, a typed date)
	{"SFO", "San Francisco", "13", "37.6", "'2024-03-03 10:00", "TRUE"},               // 4 duplicate
	{"SFO", "San Francisco (2)", "13", "37.6", "", "TRUE"},                            // 5 duplicate
	{"", "Nowhere", "1", "0", "", "FALSE"},                                            // 6 key_empty
	{"ORD", "Chicago", "=1+1", "41.9", "", "TRUE"},                                    // 7 formula
	{"JFK", "New York", "13", "40.6", "'01/03/2024", "TRUE"},                          // 8 ambiguous date text
	{"' NRT", "Narita", "141", "35.7", "", "TRUE"},                                    // 9 edge space in the key (C11)
	{"BOS", "Boston", "'twenty", "42.3", "", "TRUE"},                                  // 10 text in a number field
	{"DEN", "Denver", "5431", "39.8", "", "TRUE"},                                     // 11 merged (B11:B12)
	{"SEA", "", "433", "47.4", "", "TRUE"},                                            // 12 merged
	{"", "", "", "", "", "", "", "a person's note"},                                   // 13 blank for the store
	{"HND", "Haneda", "21", "35.5", "", "TRUE"},                                       // 14 create (opened null)
	{"4711", "A number", "1", "1", "", "TRUE"},                                        // 15 a number as the key
	{"CDG", "Cafe\u0301 de Paris", "392", "49", "'2024-03-05T08:00:00+01:00", "TRUE"}, // 16 create (NFD → NFC)
	{"PDX", "Portland", "9", "45.6", "", "TRUE"},                                      // 17 unchanged (in the store already)
	{"MIA", "Miami (sheet)", "2", "25.8", "", "TRUE"},                                 // 18 key_exists (other values)
}

// adoptSheet is an emulated spreadsheet holding only the Places tab
// people kept (the first tab, renamed), a store syncing Place to it with
// PDX and MIA in it already, its harness and a sheets client.
type adoptSheet struct {
	sheet *hikouteitest.Sheet
	s     *hikoutei.Store
	h     *hikouteitest.Harness
	svc   *sheets.Service
	dir   string
}

func newAdoptSheet(t *testing.T) *adoptSheet {
	t.Helper()
	ctx := context.Background()
	a := &adoptSheet{sheet: hikouteitest.NewSheet(t), dir: t.TempDir()}
	writePlainTab(t, a.sheet, placesTab, placesRows)
	mustDo(t, a.sheet.Person().Merge(placesTab, "B11:B12"))
	svc, err := sheets.NewService(ctx, option.WithEndpoint(a.sheet.URL), option.WithoutAuthentication())
	mustDo(t, err)
	a.svc = svc
	a.open(t)
	u := a.s.Begin()
	mustDo(t, u.Persist(&Place{Code: "PDX", Name: "Portland", Alt: 9, Lat: 45.6, Active: true}))
	mustDo(t, u.Persist(&Place{Code: "MIA", Name: "Miami", Alt: 2, Lat: 25.8, Active: true}))
	_, err = u.Commit(ctx)
	mustDo(t, err)
	a.h.Drain(ctx)
	return a
}

func (a *adoptSheet) open(t *testing.T) {
	t.Helper()
	s, err := hikoutei.Open(context.Background(), a.dir, hikoutei.Options{Sync: a.sheet.SyncOptions(), NoAdmin: true, HeartbeatInterval: -1},
		hikoutei.Entity[Place]("Place"))
	mustDo(t, err)
	t.Cleanup(func() { s.Close() })
	a.s, a.h = s, hikouteitest.New(t, s)
}

// writePlainTab renames the spreadsheet's first tab to title and types
// rows into it as a person would.
func writePlainTab(t *testing.T, sheet *hikouteitest.Sheet, title string, rows [][]string) {
	t.Helper()
	p := sheet.Person()
	if _, err := p.Displayed("Sheet1"); err != nil { // the first call creates the spreadsheet
		t.Fatal(err)
	}
	mustDo(t, p.RenameTab("Sheet1", title))
	for r, row := range rows {
		for c, text := range row {
			if text != "" {
				mustDo(t, p.Type(title, a1.CellLabel(r, c), text))
			}
		}
	}
}

func mustDo(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// rowSummary is one report row as the tests compare it.
func rowSummary(r hikoutei.AdoptRow) string {
	s := fmt.Sprintf("%d %q %s", r.SheetRow, r.Key, r.Outcome)
	if r.Reason != "" {
		s += fmt.Sprintf(" %s %s %s", r.Reason, r.Field, r.Column)
	}
	return strings.TrimSpace(s)
}

var wantPlacesReport = []string{
	`2 "LAX" create`,
	`3 "00123" create`,
	`4 "SFO" skip duplicate_key`,
	`5 "SFO" skip duplicate_key`,
	`6 "" skip key_empty code`,
	`7 "ORD" skip cell_formula alt C`,
	`8 "JFK" skip cell_date_text opened E`,
	`9 " NRT" skip cell_edge_whitespace code A`,
	`10 "BOS" skip cell_type_mismatch alt C`,
	`11 "DEN" skip cell_merged name B`,
	`12 "SEA" skip cell_merged name B`,
	`14 "HND" create`,
	`15 "4711" skip cell_type_mismatch code A`,
	`16 "CDG" create`,
	`17 "PDX" unchanged`,
	`18 "MIA" skip key_exists name`,
}

// adoptOptions maps the Altitude column, which no field is named after.
var adoptOptions = hikoutei.AdoptOptions{Tab: placesTab, Entity: "Place", Map: map[string]string{"Altitude": "alt"}, UnitSize: 2}

// TestAdoptDryRunReportsEveryRowAndWritesNothing: the dry run maps the
// columns (by header, by rule, unknown), decides every row with its
// reason and row number, reads the tab once (one enumeration and one
// grid read) and writes nothing: no record, no cell.
func TestAdoptDryRunReportsEveryRowAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	a := newAdoptSheet(t)
	before := stats(t, a.s)
	a.sheet.Emulator.ResetCounters()
	o := adoptOptions
	o.DryRun = true
	rep, err := a.s.Adopt(ctx, o)
	mustDo(t, err)
	var got []string
	for _, r := range rep.Rows {
		got = append(got, rowSummary(r))
	}
	if !reflect.DeepEqual(got, wantPlacesReport) {
		t.Fatalf("dry run rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantPlacesReport, "\n"))
	}
	var cols []string
	for _, c := range rep.Columns {
		cols = append(cols, c.Letter+":"+c.Field+":"+c.How)
	}
	wantCols := []string{"A:code:header", "B:name:header", "C:alt:map", "D:lat:header", "E:opened:header", "F:active:header",
		"G:notes:header", "H::unknown"}
	if !reflect.DeepEqual(cols, wantCols) || len(rep.Missing) != 0 {
		t.Fatalf("columns %v missing %v", cols, rep.Missing)
	}
	if rep.Created != 4 || rep.Unchanged != 1 || rep.Skipped != 11 || rep.Blank != 1 || rep.KeptAs != "Places (before hikoutei)" || rep.Renamed {
		t.Fatalf("totals %+v", rep)
	}
	if c := a.sheet.Emulator.Counters(hikouteitest.SpreadsheetID); c.Reads != 2 || c.Writes != 0 {
		t.Fatalf("the dry run made %d reads and %d writes, want 2 and 0", c.Reads, c.Writes)
	}
	if after := stats(t, a.s); after.LogHead != before.LogHead {
		t.Fatalf("the dry run appended: log head %d → %d", before.LogHead, after.LogHead)
	}
	if _, err := hikoutei.Get[Place](ctx, a.s, "LAX"); !errors.Is(err, hikoutei.ErrNotFound) {
		t.Fatalf("the dry run imported LAX: %v", err)
	}
}

func stats(t *testing.T, s *hikoutei.Store) hikoutei.Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	mustDo(t, err)
	return st
}

// TestAdoptImportsQuarantinesAndKeepsTheTab: the real run imports the
// rows that decode (actor adopt), leaves the store's records alone,
// quarantines every other row with its reason on the kept tab, renames
// the tab without changing any of its cells, and the System and Input
// tabs then show canonical state. A second adoption of the tab is a
// typed error.
func TestAdoptImportsQuarantinesAndKeepsTheTab(t *testing.T) {
	ctx := context.Background()
	a := newAdoptSheet(t)
	original := tabGrid(t, a.svc, placesTab)
	rep, err := a.s.Adopt(ctx, adoptOptions)
	mustDo(t, err)
	if rep.Created != 4 || rep.Skipped != 11 || rep.Quarantined != 11 || rep.Units != 2 || !rep.Renamed {
		t.Fatalf("report %+v", rep)
	}
	checkImported(t, a.s)
	if kept := tabGrid(t, a.svc, "Places (before hikoutei)"); kept != original {
		t.Fatalf("the kept tab differs from the original:\n%s\nwant\n%s", kept, original)
	}
	want := map[string]int{"duplicate_key": 2, "key_empty": 1, "cell_formula": 1, "cell_date_text": 1, "cell_edge_whitespace": 1,
		"cell_type_mismatch": 2, "cell_merged": 2, "key_exists": 1}
	if got := activeQuarantine(t, a.s, "Places (before hikoutei)"); !reflect.DeepEqual(got, want) {
		t.Fatalf("quarantine %v, want %v", got, want)
	}
	a.h.Drain(ctx)
	checkTabsCanonical(t, a)
	if err := a.s.DismissQuarantine(ctx, firstQuarantineID(t, a.s)); !errors.Is(err, hikoutei.ErrQuarantineNotDismissable) ||
		!strings.Contains(err.Error(), "adopt that tab again") {
		t.Fatalf("dismissing an adopted row's record: %v", err)
	}
	_, err = a.s.Adopt(ctx, adoptOptions)
	if !errors.Is(err, hikoutei.ErrAdoptTabAdopted) || !strings.Contains(err.Error(), "Places (before hikoutei)") {
		t.Fatalf("a second adoption: %v", err)
	}
}

// TestAdoptTheKeptTabImportsRowsFixedThere: after a person fixes a row in
// the kept tab, adopting that tab imports it and clears its quarantine
// record; the other rows stay as they were; nothing is renamed.
func TestAdoptTheKeptTabImportsRowsFixedThere(t *testing.T) {
	ctx := context.Background()
	a := newAdoptSheet(t)
	_, err := a.s.Adopt(ctx, adoptOptions)
	mustDo(t, err)
	kept := "Places (before hikoutei)"
	mustDo(t, a.sheet.Person().Type(kept, "C7", "42")) // ORD's formula replaced by a number
	o := adoptOptions
	o.Tab = kept
	rep, err := a.s.Adopt(ctx, o)
	mustDo(t, err)
	if rep.Created != 1 || rep.Unchanged != 5 || rep.Quarantined != 0 || rep.Cleared != 1 || rep.Renamed || rep.KeptAs != kept {
		t.Fatalf("report %+v", rep)
	}
	if p, err := hikoutei.Get[Place](ctx, a.s, "ORD"); err != nil || p.Alt != 42 {
		t.Fatalf("ORD: %+v %v", p, err)
	}
	if got := activeQuarantine(t, a.s, kept); got["cell_formula"] != 0 || len(got) != 7 {
		t.Fatalf("quarantine after the fix: %v", got)
	}
}

// TestAdoptRefusesWhatItCannotAdopt: no such tab, one of the store's own
// tabs, an undeclared entity, a duplicated header (C05), no key column:
// typed errors, nothing written.
func TestAdoptRefusesWhatItCannotAdopt(t *testing.T) {
	ctx := context.Background()
	a := newAdoptSheet(t)
	head := stats(t, a.s).LogHead
	cases := map[string]struct {
		o    hikoutei.AdoptOptions
		want error
	}{
		"no such tab":        {hikoutei.AdoptOptions{Tab: "Nope", Entity: "Place"}, hikoutei.ErrAdoptTabNotFound},
		"a tab of the store": {hikoutei.AdoptOptions{Tab: "Place_System", Entity: "Place"}, hikoutei.ErrAdoptTabReserved},
		"undeclared entity":  {hikoutei.AdoptOptions{Tab: placesTab, Entity: "Airport"}, hikoutei.ErrAdoptEntityNotDeclared},
		"two columns, one field": {hikoutei.AdoptOptions{Tab: placesTab, Entity: "Place", Map: map[string]string{"Altitude": "alt", "lat": "alt"}},
			hikoutei.ErrAdoptMapInvalid},
		"no key column": {hikoutei.AdoptOptions{Tab: placesTab, Entity: "Place", Map: map[string]string{"Code": "-"}}, hikoutei.ErrAdoptKeyColumnMissing},
		"numbers as text in a number field": {hikoutei.AdoptOptions{Tab: placesTab, Entity: "Place", NumbersAsText: []string{"alt"}},
			hikoutei.ErrAdoptMapInvalid},
	}
	for name, c := range cases {
		if _, err := a.s.Adopt(ctx, c.o); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	mustDo(t, a.sheet.Person().Type(placesTab, "H1", "name"))
	if _, err := a.s.Adopt(ctx, adoptOptions); !errors.Is(err, hikoutei.ErrAdoptHeaderDuplicate) {
		t.Errorf("duplicated header: %v", err)
	}
	if err := a.sheet.Person().Type(placesTab, "H1", "Comments"); err != nil {
		t.Fatal(err)
	}
	local, err := hikoutei.Open(ctx, t.TempDir(), hikoutei.Options{NoAdmin: true}, hikoutei.Entity[Place]("Place"))
	mustDo(t, err)
	defer local.Close()
	if _, err := local.Adopt(ctx, adoptOptions); !errors.Is(err, hikoutei.ErrAdoptNeedsSync) {
		t.Errorf("without sync: %v", err)
	}
	if h := stats(t, a.s).LogHead; h != head {
		t.Fatalf("refusals appended: %d → %d", head, h)
	}
}

// checkImported: the created records hold the decoded values; PDX and
// MIA kept the store's own; every adopted record was committed by actor
// adopt.
func checkImported(t *testing.T, s *hikoutei.Store) {
	t.Helper()
	ctx := context.Background()
	day := func(d, h int) *time.Time { v := time.Date(2024, 3, d, h, 0, 0, 0, time.UTC); return &v }
	want := map[string]Place{
		"LAX":   {Code: "LAX", Name: "Los Angeles", Alt: 125, Lat: 33.94, Opened: day(1, 0), Active: true, Notes: "gate B"},
		"00123": {Code: "00123", Name: "Leading zeros", Alt: 5, Lat: 1.5, Opened: day(2, 0)},
		"HND":   {Code: "HND", Name: "Haneda", Alt: 21, Lat: 35.5, Active: true},
		"CDG":   {Code: "CDG", Name: "Café de Paris", Alt: 392, Lat: 49, Opened: day(5, 7), Active: true},
		"PDX":   {Code: "PDX", Name: "Portland", Alt: 9, Lat: 45.6, Active: true},
		"MIA":   {Code: "MIA", Name: "Miami", Alt: 2, Lat: 25.8, Active: true},
	}
	all, err := hikoutei.Find[Place](ctx, s)
	mustDo(t, err)
	if len(all) != len(want) {
		t.Fatalf("%d records, want %d", len(all), len(want))
	}
	for _, p := range all {
		w := want[p.Code]
		if p.Name != w.Name || p.Alt != w.Alt || p.Lat != w.Lat || p.Active != w.Active || p.Notes != w.Notes ||
			(p.Opened == nil) != (w.Opened == nil) || p.Opened != nil && !p.Opened.Equal(*w.Opened) {
			t.Errorf("%s = %+v, want %+v", p.Code, p, w)
		}
	}
	actors := persistActors(t, s)
	for _, k := range []string{"LAX", "00123", "HND", "CDG"} {
		if !reflect.DeepEqual(actors[k], []string{"adopt"}) {
			t.Errorf("%s was persisted by %v, want once by adopt", k, actors[k])
		}
	}
	for _, k := range []string{"PDX", "MIA"} {
		if !reflect.DeepEqual(actors[k], []string{""}) {
			t.Errorf("%s was persisted by %v, want once by the application", k, actors[k])
		}
	}
}

// persistActors lists, per Place key, the actor of each entity.persisted
// in the log.
func persistActors(t *testing.T, s *hikoutei.Store) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for ev, err := range s.Events(context.Background(), 1) {
		mustDo(t, err)
		if p, ok := ev.Payload.(events.EntityPersisted); ok && p.Entity == "Place" {
			out[p.ID] = append(out[p.ID], string(p.Actor))
		}
	}
	return out
}

// activeQuarantine counts a tab's active quarantine records by reason.
func activeQuarantine(t *testing.T, s *hikoutei.Store, tab string) map[string]int {
	t.Helper()
	conn, err := sqlite.OpenConn(s.ReadModelPath(), sqlite.OpenReadOnly)
	mustDo(t, err)
	defer conn.Close()
	list, _, err := projector.ListQuarantine(conn, projector.QuarantineFilter{Tab: tab})
	mustDo(t, err)
	out := map[string]int{}
	for _, q := range list {
		out[q.Reason]++
	}
	return out
}

// firstQuarantineID is the id of an active quarantine record.
func firstQuarantineID(t *testing.T, s *hikoutei.Store) string {
	t.Helper()
	conn, err := sqlite.OpenConn(s.ReadModelPath(), sqlite.OpenReadOnly)
	mustDo(t, err)
	defer conn.Close()
	list, _, err := projector.ListQuarantine(conn, projector.QuarantineFilter{Limit: 1})
	mustDo(t, err)
	if len(list) == 0 {
		t.Fatal("no quarantine record")
	}
	return list[0].ID
}

// tabGrid is everything a person wrote in a tab (values, formulas,
// formats, notes, merges, grid size), as JSON, the title left out.
func tabGrid(t *testing.T, svc *sheets.Service, title string) string {
	t.Helper()
	ss, err := svc.Spreadsheets.Get(hikouteitest.SpreadsheetID).Ranges(a1.QuoteSheet(title)).IncludeGridData(true).
		Fields("sheets(properties(sheetId,gridProperties),merges,data)").Do()
	mustDo(t, err)
	b, err := json.Marshal(ss.Sheets)
	mustDo(t, err)
	return string(b)
}

// checkTabsCanonical: Place_System and Place_Input show exactly the
// store's records.
func checkTabsCanonical(t *testing.T, a *adoptSheet) {
	t.Helper()
	ctx := context.Background()
	_, _, wb := engine.Of(a.s).Workers()
	snaps, err := a.sheet.Provider.SnapshotKnown(ctx, wb, "Place_System", "Place_Input")
	mustDo(t, err)
	all, err := hikoutei.Find[Place](ctx, a.s)
	mustDo(t, err)
	want := map[string]map[string]any{}
	for _, p := range all {
		v := map[string]any{"code": p.Code, "name": p.Name, "alt": p.Alt, "lat": p.Lat, "active": p.Active, "notes": p.Notes, "opened": nil}
		if p.Opened != nil {
			v["opened"] = *p.Opened
		}
		want[p.Code] = v
	}
	for _, tab := range []string{"Place_System", "Place_Input"} {
		spec, _ := wb.Schema().Tab(tab)
		rep, err := sheetcheck.Tab(snaps[tab], spec, want, nil)
		mustDo(t, err)
		if !rep.Clean() || len(snaps[tab].Rows) != len(want) {
			t.Errorf("%s differs from canonical state: %+v (%d rows for %d records)", tab, rep, len(snaps[tab].Rows), len(want))
		}
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("canonical records: %v", keys)
}
