package hikoutei_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/observe"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Pump and Tank are two entities people edit, for the routing tests.
type Pump struct {
	ID   string `hikoutei:"id,pk"`
	Note string `hikoutei:"note,user"`
}

type Tank struct {
	ID   string `hikoutei:"id,pk"`
	Note string `hikoutei:"note,user"`
}

// tankSheet is the spreadsheet the routing tests send Tank to.
const tankSheet = "hikouteitest-tanks"

// routedStore opens a store syncing Pump to the default emulated
// spreadsheet and Tank, by a route, to tankSheet, and provisions both.
func routedStore(t *testing.T) (*hikoutei.Store, *hikouteitest.Harness, *hikouteitest.Sheet) {
	t.Helper()
	sheet := hikouteitest.NewSheet(t)
	so := sheet.SyncOptions()
	so.Routes = []hikoutei.SyncRoute{{SpreadsheetID: tankSheet, Entities: []string{"Tank"}}}
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Sync: so, NoAdmin: true},
		hikoutei.Entity[Pump]("Pump"), hikoutei.Entity[Tank]("Tank"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, hikouteitest.New(t, s), sheet
}

func commitPumpAndTank(t *testing.T, s *hikoutei.Store, id, note string) {
	t.Helper()
	u := s.Begin()
	u.Persist(&Pump{ID: id, Note: note})
	u.Persist(&Tank{ID: id, Note: note})
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// shown is what tab of spreadsheet id displays ("" rows: the tab is
// missing).
func shown(t *testing.T, sheet *hikouteitest.Sheet, id, tab string) ([][]string, bool) {
	t.Helper()
	rows, err := sheet.PersonOf(id).Displayed(tab)
	if err != nil {
		return nil, false
	}
	return rows, true
}

// columnOf is the A1 cell of column name at row on tab.
func columnOf(t *testing.T, rows [][]string, name string, row int) string {
	t.Helper()
	i := slices.Index(rows[0], name)
	if i < 0 {
		t.Fatalf("no column %s in %v", name, rows[0])
	}
	return string(rune('A'+i)) + string(rune('0'+row))
}

// Two entities routed to two spreadsheets converge both: each
// spreadsheet holds its entity's tabs only and an authority tab of its
// own naming the store; health shows each spreadsheet's tabs under its
// own target (never the id); a person's edit of the routed spreadsheet's
// Input tab is accepted.
func TestRoutesSendTwoEntitiesToTwoSpreadsheetsAndConvergeBoth(t *testing.T) {
	ctx := t.Context()
	s, h, sheet := routedStore(t)
	commitPumpAndTank(t, s, "P1", "first")
	h.Drain(ctx)
	for _, c := range []struct {
		id, own, other string
	}{{hikouteitest.SpreadsheetID, "Pump", "Tank"}, {tankSheet, "Tank", "Pump"}} {
		for _, tab := range []string{layout.SystemTabName(c.own), layout.InputTabName(c.own)} {
			if rows, ok := shown(t, sheet, c.id, tab); !ok || len(rows) != 2 || !slices.Contains(rows[1], "first") {
				t.Fatalf("%s of %s shows %v (present %v), want its row", tab, c.id, rows, ok)
			}
		}
		for _, tab := range []string{layout.SystemTabName(c.other), layout.InputTabName(c.other)} {
			if _, ok := shown(t, sheet, c.id, tab); ok {
				t.Fatalf("%s holds %s, another spreadsheet's tab", c.id, tab)
			}
		}
		if rows, ok := shown(t, sheet, c.id, layout.AuthorityTab); !ok || len(rows) < 2 {
			t.Fatalf("%s has no authority row: %v", c.id, rows)
		}
	}
	hl := s.Health()
	if hl.Sync != nil || hl.SyncHealth == nil || len(hl.SyncRoutes) != 1 {
		t.Fatalf("health: sync %v, default %v, routes %d", hl.Sync, hl.SyncHealth, len(hl.SyncRoutes))
	}
	def, route := hl.SyncHealth, hl.SyncRoutes[0]
	if route.Spreadsheet != engine.TargetKey(tankSheet) || def.Spreadsheet == route.Spreadsheet ||
		strings.Contains(route.Spreadsheet, tankSheet) {
		t.Fatalf("targets %q and %q", def.Spreadsheet, route.Spreadsheet)
	}
	if tabsOf(def) != "Pump_Input Pump_System" || tabsOf(route) != "Tank_Input Tank_System" {
		t.Fatalf("default tabs %q, routed tabs %q", tabsOf(def), tabsOf(route))
	}

	checkRouteReports(t, s, route.Spreadsheet)

	rows, _ := shown(t, sheet, tankSheet, "Tank_Input")
	if err := sheet.PersonOf(tankSheet).Type("Tank_Input", columnOf(t, rows, "note", 2), "from a person"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Route(tankSheet).Poll(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := hikoutei.Get[Tank](ctx, s, "P1")
	if err != nil || got.Note != "from a person" {
		t.Fatalf("Tank P1 after the poll: %+v, %v", got, err)
	}
	h.Drain(ctx)
	if rows, _ := shown(t, sheet, tankSheet, "Tank_System"); !slices.Contains(rows[1], "from a person") {
		t.Fatalf("Tank_System after the edit: %v", rows)
	}
	if rows, _ := shown(t, sheet, hikouteitest.SpreadsheetID, "Pump_System"); !slices.Contains(rows[1], "first") {
		t.Fatalf("Pump_System after the edit: %v", rows)
	}
}

// tabsOf lists the tabs of h, sorted and space-separated.
func tabsOf(h *hikoutei.SyncHealth) string {
	var out []string
	for _, t := range h.Tabs {
		out = append(out, t.Tab)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// A route that cannot apply fails Open with sync_startup_failed and its
// own code, and the store stays closed.
func TestRoutesRefuseRoutesThatCannotApply(t *testing.T) {
	for _, c := range []struct {
		name   string
		routes []hikoutei.SyncRoute
		want   error
	}{
		{"no spreadsheet", []hikoutei.SyncRoute{{Entities: []string{"Tank"}}}, hikoutei.ErrSyncRouteEmpty},
		{"no entity", []hikoutei.SyncRoute{{SpreadsheetID: tankSheet}}, hikoutei.ErrSyncRouteEmpty},
		{"the default spreadsheet", []hikoutei.SyncRoute{{SpreadsheetID: hikouteitest.SpreadsheetID, Entities: []string{"Tank"}}},
			hikoutei.ErrSyncRouteSpreadsheetTwice},
		{"one spreadsheet twice", []hikoutei.SyncRoute{{SpreadsheetID: tankSheet, Entities: []string{"Tank"}},
			{SpreadsheetID: tankSheet, Entities: []string{"Pump"}}}, hikoutei.ErrSyncRouteSpreadsheetTwice},
		{"an entity twice", []hikoutei.SyncRoute{{SpreadsheetID: tankSheet, Entities: []string{"Tank"}},
			{SpreadsheetID: "other", Entities: []string{"Tank"}}}, hikoutei.ErrSyncRouteEntityTwice},
		{"an undeclared entity", []hikoutei.SyncRoute{{SpreadsheetID: tankSheet, Entities: []string{"Valve"}}},
			hikoutei.ErrSyncRouteEntityUnknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			sheet := hikouteitest.NewSheet(t)
			so := sheet.SyncOptions()
			so.Routes = c.routes
			s, err := hikoutei.Open(context.Background(), t.TempDir(), hikoutei.Options{Sync: so, NoAdmin: true},
				hikoutei.Entity[Pump]("Pump"), hikoutei.Entity[Tank]("Tank"))
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, hikoutei.ErrSyncStartup) || !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v in %v", err, c.want, hikoutei.ErrSyncStartup)
			}
		})
	}
}

// checkRouteReports checks that /healthz's report lists the routed
// spreadsheet by its target, never its id, and that the metrics carry its
// tabs' gauges (a pedantic registry refuses a series twice).
func checkRouteReports(t *testing.T, s *hikoutei.Store, target string) {
	t.Helper()
	b, err := json.Marshal(observe.Report(s.Health()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"sync_routes":[{"spreadsheet":"`+target+`"`) || strings.Contains(string(b), tankSheet) {
		t.Fatalf("health report: %s", b)
	}
	m := observe.New()
	m.Watch(s)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	tabs := map[string]bool{}
	for _, f := range families {
		for _, x := range f.GetMetric() {
			for _, l := range x.GetLabel() {
				if l.GetName() == "tab" {
					tabs[l.GetValue()] = true
				}
			}
		}
	}
	if !tabs["Tank_System"] || !tabs["Pump_System"] {
		t.Fatalf("metrics name the tabs %v", tabs)
	}
}

// With the workers running (no harness), the store provisions both
// spreadsheets, wakes both dispatchers after a commit, and WaitSynced
// waits for both; Close stops both.
func TestRoutesConvergeWithTheWorkersRunning(t *testing.T) {
	ctx := t.Context()
	sheet := hikouteitest.NewSheet(t)
	so := sheet.SyncOptions()
	so.Manual = false
	so.Routes = []hikoutei.SyncRoute{{SpreadsheetID: tankSheet, Entities: []string{"Tank"}}}
	s, err := hikoutei.Open(ctx, t.TempDir(), hikoutei.Options{Sync: so, NoAdmin: true},
		hikoutei.Entity[Pump]("Pump"), hikoutei.Entity[Tank]("Tank"))
	if err != nil {
		t.Fatal(err)
	}
	commitPumpAndTank(t, s, "P1", "running")
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.WaitSynced(wctx); err != nil {
		t.Fatal(err)
	}
	for id, tab := range map[string]string{hikouteitest.SpreadsheetID: "Pump_System", tankSheet: "Tank_System"} {
		if rows, ok := shown(t, sheet, id, tab); !ok || len(rows) != 2 || !slices.Contains(rows[1], "running") {
			t.Fatalf("%s shows %v", tab, rows)
		}
	}
	if err := s.Reconcile(ctx); err != nil { // both spreadsheets'
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Routing an entity that was synced to the default spreadsheet moves it:
// its unsent effects there are superseded (nothing more is written to the
// old tab), the new spreadsheet is backfilled with its rows at their
// current values, and a person's edit there is accepted; the old tab's
// stale rows are never read as edits.
func TestRoutesMoveAnEntityToAnotherSpreadsheetAndBackfillIt(t *testing.T) {
	ctx := t.Context()
	sheet := hikouteitest.NewSheet(t)
	dir := t.TempDir()
	open := func(routes ...hikoutei.SyncRoute) *hikoutei.Store {
		so := sheet.SyncOptions()
		so.Routes = routes
		s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: so, NoAdmin: true}, hikoutei.Entity[Pump]("Pump"), hikoutei.Entity[Tank]("Tank"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	h := hikouteitest.New(t, s)
	commitPumpAndTank(t, s, "P1", "before")
	h.Drain(ctx)
	commitPumpAndTank(t, s, "P1", "unsent") // queued for the default spreadsheet, never sent
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(hikoutei.SyncRoute{SpreadsheetID: tankSheet, Entities: []string{"Tank"}})
	defer s.Close()
	h = hikouteitest.New(t, s)
	if _, err := h.Route(tankSheet).Reconcile(ctx); err != nil { // queues the rows the new spreadsheet never received
		t.Fatal(err)
	}
	h.Drain(ctx)
	if out := h.Outbox(); out["failed"] != 0 {
		t.Fatalf("outbox after the move: %v", out)
	}
	for _, tab := range []string{"Tank_System", "Tank_Input"} {
		if rows, ok := shown(t, sheet, tankSheet, tab); !ok || len(rows) != 2 || !slices.Contains(rows[1], "unsent") {
			t.Fatalf("%s of the routed spreadsheet: %v", tab, rows)
		}
		if rows, _ := shown(t, sheet, hikouteitest.SpreadsheetID, tab); len(rows) != 2 || !slices.Contains(rows[1], "before") {
			t.Fatalf("%s of the default spreadsheet changed after the move: %v", tab, rows)
		}
	}
	if rows, _ := shown(t, sheet, hikouteitest.SpreadsheetID, "Pump_System"); !slices.Contains(rows[1], "unsent") {
		t.Fatalf("Pump_System: %v", rows)
	}
	rows, _ := shown(t, sheet, tankSheet, "Tank_Input")
	if err := sheet.PersonOf(tankSheet).Type("Tank_Input", columnOf(t, rows, "note", 2), "edited after the move"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Route(tankSheet).Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := hikoutei.Get[Tank](ctx, s, "P1"); err != nil || got.Note != "edited after the move" {
		t.Fatalf("Tank P1: %+v, %v", got, err)
	}
}

// Removing a route moves the entity back to the default spreadsheet,
// whose tabs still show the rows from before the route: they are
// brought to the current values, recognised by anchor (never
// duplicated), and what a person typed in them meanwhile is not imported.
func TestRoutesRemovedMoveTheEntityBackWithoutDuplicates(t *testing.T) {
	ctx := t.Context()
	clock := events.NewManualClock(time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
	sheet := hikouteitest.NewSheet(t, func(c *gsheets.Config) { c.Now = clock.Now })
	dir := t.TempDir()
	open := func(routes ...hikoutei.SyncRoute) (*hikoutei.Store, *hikouteitest.Harness) {
		so := sheet.SyncOptions()
		so.Routes = routes
		s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: so, NoAdmin: true, Clock: clock, HeartbeatInterval: -1, AcquireWait: -1,
			LeaseTTL: 365 * 24 * time.Hour}, hikoutei.Entity[Pump]("Pump"), hikoutei.Entity[Tank]("Tank"))
		if err != nil {
			t.Fatal(err)
		}
		return s, hikouteitest.New(t, s)
	}
	settle := func(h *hikouteitest.Harness, polls ...*hikouteitest.Harness) {
		t.Helper()
		// reconciliation backfills and supersedes a failed append
		// (anchor_exists) by a correction; retries come due on the clock
		for range 4 {
			if _, err := h.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			for range 4 {
				if _, err := h.Dispatch(ctx); err != nil {
					t.Fatal(err)
				}
				clock.Advance(time.Minute)
			}
			for _, p := range polls {
				if _, err := p.Poll(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := h.Unsettled(); n != 0 {
			t.Fatalf("%d effects unsettled: %v", n, h.Outbox())
		}
	}
	s, h := open()
	commitPumpAndTank(t, s, "P1", "at first")
	h.Drain(ctx)
	s.Close()
	s, h = open(hikoutei.SyncRoute{SpreadsheetID: tankSheet, Entities: []string{"Tank"}})
	settle(h.Route(tankSheet))
	commitPumpAndTank(t, s, "P1", "while routed")
	h.Drain(ctx)
	s.Close()
	rows, _ := shown(t, sheet, hikouteitest.SpreadsheetID, "Tank_Input")
	if err := sheet.Person().Type("Tank_Input", columnOf(t, rows, "note", 2), "typed in the old tab"); err != nil {
		t.Fatal(err)
	}

	s, h = open()
	defer s.Close()
	settle(h, h)
	for _, tab := range []string{"Tank_System", "Tank_Input"} {
		if rows, _ := shown(t, sheet, hikouteitest.SpreadsheetID, tab); len(rows) != 2 || !slices.Contains(rows[1], "while routed") {
			t.Fatalf("%s of the default spreadsheet: %v", tab, rows)
		}
	}
	if got, err := hikoutei.Get[Tank](ctx, s, "P1"); err != nil || got.Note != "while routed" {
		t.Fatalf("Tank P1: %+v, %v", got, err)
	}
}

// A conflict on a routed entity's Input tab is listed in the default
// spreadsheet's Sync_Conflicts (the routed one's stays empty) and a
// person's choice there resolves it.
func TestRoutesListARoutedEntitysConflictInTheDefaultSpreadsheet(t *testing.T) {
	ctx := t.Context()
	s, h, sheet := routedStore(t)
	commitPumpAndTank(t, s, "P1", "a")
	h.Drain(ctx)
	rows, _ := shown(t, sheet, tankSheet, "Tank_Input")
	if err := sheet.PersonOf(tankSheet).Type("Tank_Input", columnOf(t, rows, "note", 2), "person"); err != nil {
		t.Fatal(err)
	}
	commitPumpAndTank(t, s, "P1", "system")
	h.Drain(ctx)
	if _, err := h.Route(tankSheet).Poll(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	open, err := s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 {
		t.Fatalf("open conflicts: %v, %v", open, err)
	}
	main, _ := shown(t, sheet, hikouteitest.SpreadsheetID, layout.ConflictsTab)
	routed, _ := shown(t, sheet, tankSheet, layout.ConflictsTab)
	if len(main) != 2 || !slices.Contains(main[1], "Tank") || len(routed) > 1 {
		t.Fatalf("Sync_Conflicts: default %v, routed %v", main, routed)
	}
	if err := sheet.Person().Type(layout.ConflictsTab, columnOf(t, main, layout.ConflictResolution, 2), layout.ChoiceUseSheet); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	if got, err := hikoutei.Get[Tank](ctx, s, "P1"); err != nil || got.Note != "person" {
		t.Fatalf("Tank P1 after the choice: %+v, %v", got, err)
	}
	if rows, _ := shown(t, sheet, tankSheet, "Tank_System"); !slices.Contains(rows[1], "person") {
		t.Fatalf("Tank_System after the choice: %v", rows)
	}
}
