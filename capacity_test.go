package hikoutei_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/observe"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// Gauge and Valve are two entities of their own tabs, for the capacity
// tests.
type Gauge struct {
	ID   string `hikoutei:"id,pk"`
	Note string `hikoutei:"note"`
}

type Valve struct {
	ID   string `hikoutei:"id,pk"`
	Note string `hikoutei:"note"`
}

// capacityStore opens a store syncing Gauge and Valve to an emulated
// spreadsheet, the store and the client on one manual clock, and
// provisions it.
func capacityStore(t *testing.T) (*hikoutei.Store, *hikouteitest.Harness, *hikouteitest.Sheet, *events.ManualClock) {
	t.Helper()
	clock := events.NewManualClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	sheet := hikouteitest.NewSheet(t, func(c *gsheets.Config) { c.Now = clock.Now })
	so := sheet.SyncOptions()
	so.LaneLoad = 1 // a pass of a few rows may go out in lanes: the capacity gate must see them together
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Clock: clock, Sync: so, NoAdmin: true,
		HeartbeatInterval: -1, AcquireWait: -1, LeaseTTL: 365 * 24 * time.Hour}, hikoutei.Entity[Gauge]("Gauge"), hikoutei.Entity[Valve]("Valve"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, hikouteitest.New(t, s), sheet, clock
}

func gridCells(t *testing.T, sheet *hikouteitest.Sheet) int {
	t.Helper()
	n, err := sheet.Person().GridCells()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func capacityWarning(h *hikoutei.SyncHealth) (hikoutei.SyncWarning, bool) {
	for _, w := range h.Warnings {
		if w.Reason == hikoutei.ReasonSpreadsheetCapacity {
			return w, true
		}
	}
	return hikoutei.SyncWarning{}, false
}

// Once a spreadsheet's grid (a person's large empty tab counts) reaches
// 80 % of its 10,000,000 cells, sync health warns spreadsheet_capacity
// with the date it fills at the growth the store's reads measured, in
// health, its JSON and the metrics; under 80 % it does not, and sync
// health does not fail for it.
func TestSpreadsheetCapacityWarnsFrom80PercentWithTheDateItFills(t *testing.T) {
	ctx := t.Context()
	s, h, sheet, clock := capacityStore(t)
	own := gridCells(t, sheet)
	c := s.Health().SyncHealth.Capacity
	if c == nil || c.Cells != int64(own) || c.Limit != sheetsio.MaxSpreadsheetCells || c.GrowthKnown {
		t.Fatalf("capacity after provisioning: %+v, want %d cells of %d, growth unknown", c, own, sheetsio.MaxSpreadsheetCells)
	}
	if _, err := sheet.Person().AddTab("Archive", 600_000, 10); err != nil { // 6,000,000 empty cells
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour)
	if _, err := h.Reconcile(ctx); err != nil { // reads the tabs' sizes
		t.Fatal(err)
	}
	sh := s.Health().SyncHealth
	if w, ok := capacityWarning(sh); ok || sh.Capacity.Cells != int64(gridCells(t, sheet)) {
		t.Fatalf("at %d of 10,000,000 cells: warning %+v (want none), capacity %+v", gridCells(t, sheet), w, sh.Capacity)
	}
	if err := sheet.Person().ResizeTab("Archive", 820_000, 10); err != nil { // 8,200,000 cells
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour)
	if _, err := h.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	sh = s.Health().SyncHealth
	cells := int64(gridCells(t, sheet))
	w, ok := capacityWarning(sh)
	c = sh.Capacity
	if !ok || c.Cells != cells || !c.GrowthKnown || c.At != clock.Now() {
		t.Fatalf("at %d cells: warning %+v (%v), capacity %+v", cells, w, ok, c)
	}
	perDay := float64(cells-int64(own)) / 2 // two days of reads
	want := c.At.Add(time.Duration(float64(sheetsio.MaxSpreadsheetCells-cells) / perDay * float64(24*time.Hour))).Truncate(time.Second)
	if c.PerDay != perDay || !c.FullAt.Equal(want) || !strings.Contains(w.Detail, want.Format(time.DateOnly)) {
		t.Fatalf("growth %.0f cells a day, full at %v (detail %q); want %.0f and %v", c.PerDay, c.FullAt, w.Detail, perDay, want)
	}
	if sh.Failing() || sh.Err() != nil {
		t.Fatalf("a capacity warning fails sync health: %+v", sh)
	}
	report, err := json.Marshal(observe.Report(s.Health()))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"reason":"spreadsheet_capacity"`, fmt.Sprintf(`"cells":%d`, cells), `"limit":10000000`, `"full_at":"` + want.UTC().Format(time.RFC3339)} {
		if !strings.Contains(string(report), part) {
			t.Fatalf("health JSON lacks %s: %s", part, report)
		}
	}
	got := gauges(t, s)
	wantGauges := map[string]float64{"hikoutei_sheet_cells": float64(cells), "hikoutei_sheet_cells_limit": sheetsio.MaxSpreadsheetCells,
		"hikoutei_sheet_cells_full_timestamp_seconds": float64(want.Unix())}
	for name, v := range wantGauges {
		if got[name] != v {
			t.Fatalf("metric %s = %v, want %v", name, got[name], v)
		}
	}
}

// gauges scrapes the store's metrics and returns the unlabelled gauges.
func gauges(t *testing.T, s *hikoutei.Store) map[string]float64 {
	t.Helper()
	m := observe.New()
	m.Watch(s)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, x := range f.GetMetric() {
			if x.GetGauge() != nil && len(x.GetLabel()) == 0 {
				out[f.GetName()] = x.GetGauge().GetValue()
			}
		}
	}
	return out
}

// A tab whose rows would pass the spreadsheet's 10,000,000 cells is
// blocked with spreadsheet_capacity: its effects wait (nothing is lost,
// commits go on) while a tab whose rows fit is written, the grid never
// passes the limit, and once a person frees space the tab catches up.
func TestSpreadsheetCapacityBlocksTheTabThatWouldPassTheLimitUntilSpaceIsFreed(t *testing.T) {
	ctx := t.Context()
	s, h, sheet, clock := capacityStore(t)
	// A person trims the gauges' tab to its header (no blank rows left to
	// fill), then a tab of theirs fills the spreadsheet but 1,000 cells.
	if err := sheet.Person().ResizeTab("Gauge_System", 1, 26); err != nil {
		t.Fatal(err)
	}
	if _, err := sheet.Person().AddTab("Archive", sheetsio.MaxSpreadsheetCells-gridCells(t, sheet)-1_000, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(gsheets.GridRefresh)
	if _, err := h.Reconcile(ctx); err != nil { // reads the tabs' sizes
		t.Fatal(err)
	}
	commitCapacityRows(ctx, t, s, "g", 40, 1) // 40 new gauge rows of 26 cells do not fit in 1,000 cells, one valve row does
	if _, err := h.Dispatch(ctx); err != nil {
		t.Fatal(err)
	}
	sh := s.Health().SyncHealth
	gauge, valve := tabHealth(sh, "Gauge_System"), tabHealth(sh, "Valve_System")
	if gauge.State != hikoutei.SyncBlocked || gauge.Reason != hikoutei.ReasonSpreadsheetCapacity || gauge.Pending != 40 {
		t.Fatalf("the tab whose rows would pass the limit: %+v", gauge)
	}
	if valve.State != hikoutei.SyncOK || shownRows(t, sheet, "Valve_System") != 1 || shownRows(t, sheet, "Gauge_System") != 0 {
		t.Fatalf("the tab whose row fits: %+v; rows shown: valve %d, gauge %d", valve, shownRows(t, sheet, "Valve_System"), shownRows(t, sheet, "Gauge_System"))
	}
	if n := gridCells(t, sheet); n > sheetsio.MaxSpreadsheetCells {
		t.Fatalf("grid at %d cells", n)
	}
	commitCapacityRows(ctx, t, s, "h", 5, 0) // commits go on
	retry := func() { clock.Advance(time.Hour) }
	retry()
	if _, err := h.Dispatch(ctx); err != nil {
		t.Fatal(err)
	}
	if g := tabHealth(s.Health().SyncHealth, "Gauge_System"); g.Reason != hikoutei.ReasonSpreadsheetCapacity || g.Pending != 45 || shownRows(t, sheet, "Gauge_System") != 0 {
		t.Fatalf("still full, after a retry: %+v, %d rows shown", g, shownRows(t, sheet, "Gauge_System"))
	}
	if err := sheet.Person().DeleteTab("Archive"); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx, retry)
	if got := s.Health().SyncHealth; !got.Settled() || shownRows(t, sheet, "Gauge_System") != 45 {
		t.Fatalf("after space was freed: %+v, %d gauge rows shown", got, shownRows(t, sheet, "Gauge_System"))
	}
}

// commitCapacityRows commits gauges and valves with ids prefixed by p.
func commitCapacityRows(ctx context.Context, t *testing.T, s *hikoutei.Store, p string, gauges, valves int) {
	t.Helper()
	u := s.Begin()
	for i := range gauges {
		if err := u.Persist(&Gauge{ID: fmt.Sprintf("%s%03d", p, i), Note: "reading"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range valves {
		if err := u.Persist(&Valve{ID: fmt.Sprintf("%s%03d", p, i), Note: "open"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func tabHealth(h *hikoutei.SyncHealth, tab string) hikoutei.TabHealth {
	for _, t := range h.Tabs {
		if t.Tab == tab {
			return t
		}
	}
	return hikoutei.TabHealth{Tab: tab}
}

// shownRows counts the data rows a tab shows under its header.
func shownRows(t *testing.T, sheet *hikouteitest.Sheet, tab string) int {
	t.Helper()
	rows, err := sheet.Person().Displayed(tab)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows[min(len(rows), 1):] {
		if strings.Join(r, "") != "" {
			n++
		}
	}
	return n
}

// Parallel lanes never pass the limit together: with room for either
// tab's new rows but not for both, the pass's two tabs could go out in two
// lanes that each fit alone; the grid must still stay within 10,000,000
// cells, one tab held blocked until a person frees space.
func TestSpreadsheetCapacityHoldsWhenTwoTabsFitOnlyOneAtATime(t *testing.T) {
	ctx := t.Context()
	s, h, sheet, clock := capacityStore(t)
	for _, tab := range []string{"Gauge_System", "Valve_System"} {
		if err := sheet.Person().ResizeTab(tab, 1, 26); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sheet.Person().AddTab("Archive", sheetsio.MaxSpreadsheetCells-gridCells(t, sheet)-800, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(gsheets.GridRefresh)
	if _, err := h.Reconcile(ctx); err != nil { // reads the tabs' sizes
		t.Fatal(err)
	}
	commitCapacityRows(ctx, t, s, "g", 20, 20) // 20 rows of 26 cells fit in 800 cells; 40 do not
	if _, err := h.Dispatch(ctx); err != nil {
		t.Fatal(err)
	}
	if n := gridCells(t, sheet); n > sheetsio.MaxSpreadsheetCells {
		t.Fatalf("grid at %d cells, %d past the limit", n, n-sheetsio.MaxSpreadsheetCells)
	}
	sh := s.Health().SyncHealth
	gauge, valve := tabHealth(sh, "Gauge_System"), tabHealth(sh, "Valve_System")
	if gauge.Reason != hikoutei.ReasonSpreadsheetCapacity && valve.Reason != hikoutei.ReasonSpreadsheetCapacity {
		t.Fatalf("neither tab held: gauge %+v, valve %+v", gauge, valve)
	}
	if err := sheet.Person().DeleteTab("Archive"); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx, func() { clock.Advance(time.Hour) })
	if got := s.Health().SyncHealth; !got.Settled() || shownRows(t, sheet, "Gauge_System") != 20 || shownRows(t, sheet, "Valve_System") != 20 {
		t.Fatalf("after space was freed: %+v", got)
	}
}
