package engine_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// noRowDeleted fails when the poll recorded a row of tab as deleted by a
// person (row_deleted evidence) or removed an entity.
func (x *synced) noRowDeleted(tab string) {
	x.t.Helper()
	for anchor, reasons := range x.quarantine(tab) {
		if hasReason(reasons, aggregates.ReasonRowDeleted) {
			x.t.Fatalf("row %q of %s recorded as deleted: %v", anchor, tab, x.quarantine(tab))
		}
	}
	if k := x.eventTypes(0)[events.TypeEntityRemoved]; k != 0 {
		x.t.Fatalf("%d entities removed", k)
	}
}

// An Input tab deleted and created again empty, without its header row
// (or cleared completely), is a tab that suddenly reads empty (C04): from
// the first poll that reads it, sync health reports it blocked with
// suspected_mass_deletion, not ok, and no row is recorded as deleted by a
// person. Anti-entropy's next pass writes the header and restores every
// row, an edit accepted before included; the next poll sees them back and
// health is ok again by itself.
func TestAnInputTabRecreatedEmptyAndHeaderlessIsNotOKUntilRebuilt(t *testing.T) {
	x := openSyncedOn(t, t.TempDir(), serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil), nil, parts)
	seedParts(t, x, 6)
	x.typeIn("2", "notes", "typed before")
	if r := x.poll(); r.Stats.Accepted != 1 {
		t.Fatalf("the poll of the edit: %+v", r.Stats)
	}
	x.drain()
	want := x.sortedRows(partInput)
	if h := x.syncHealth(); h.State != hikoutei.SyncOK {
		t.Fatalf("sync health before the damage: %+v", h)
	}

	x.recreate(partInput)
	if rows := x.rows(partInput); len(rows) != 0 {
		t.Fatalf("the recreated tab shows %q, want nothing (no header)", rows)
	}
	x.poll()
	wantBlocked(t, x, partInput, hikoutei.ReasonMassDeletion)
	x.noRowDeleted(partInput)
	x.poll() // the same empty tab polled again, then read by a safety full scan
	x.fullScan()
	wantBlocked(t, x, partInput, hikoutei.ReasonMassDeletion)
	x.noRowDeleted(partInput)

	x.reconcile(2)
	x.poll()
	if got := x.sortedRows(partInput); got != want {
		t.Fatalf("%s after the rebuild:\n got %s\nwant %s", partInput, got, want)
	}
	for i := 1; i <= 6; i++ {
		id := fmt.Sprint(i)
		if p := x.part(id); p == nil || p.Name != "part "+id || p.Qty != int64(i) {
			t.Fatalf("part %d after the rebuild: %+v", i, p)
		}
	}
	if p := x.part("2"); p.Notes != "typed before" {
		t.Fatalf("part 2 after the rebuild: %+v, want the accepted edit", p)
	}
	x.noRowDeleted(partInput)
	if q := x.quarantine(partInput); len(q) != 0 {
		t.Fatalf("evidence still active after the rebuild: %v", q)
	}
	if h := x.syncHealth(); h.State != hikoutei.SyncOK || h.Failing() {
		t.Fatalf("sync health after the rebuild: %+v", h)
	}
}

// An Input tab deleted (and not created again) is reported by the first
// poll that misses it: sync health says the tab is blocked with
// sheet_tab_missing, not ok, while anti-entropy has not run; no row is
// recorded as deleted by a person. The pass that recreates the tab
// clears it, and health is ok again.
func TestAnInputTabDeletedIsBlockedFromTheFirstPollThatMissesIt(t *testing.T) {
	x := openSyncedOn(t, t.TempDir(), serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil), nil, parts)
	seedParts(t, x, 4)
	x.poll()
	if h := x.syncHealth(); h.State != hikoutei.SyncOK {
		t.Fatalf("sync health before the deletion: %+v", h)
	}
	mustT(t, x.sheet.Person().DeleteTab(partInput))
	x.poll()
	wantBlocked(t, x, partInput, hikoutei.ReasonTabMissing)
	x.noRowDeleted(partInput)
	x.poll() // the same read again: still blocked
	wantBlocked(t, x, partInput, hikoutei.ReasonTabMissing)

	x.reconcile(2)
	if h := x.syncHealth(); h.State != hikoutei.SyncOK || h.Failing() { // the pass read the tab: no poll needed
		t.Fatalf("sync health after the pass that recreated the tab: %+v", h)
	}
	x.poll()
	if n := len(x.rows(partInput)); n != 5 {
		t.Fatalf("%s after the rebuild: %q", partInput, x.rows(partInput))
	}
	x.noRowDeleted(partInput)
	if h := x.syncHealth(); h.State != hikoutei.SyncOK || h.Failing() {
		t.Fatalf("sync health after the rebuild: %+v", h)
	}
}

// A System tab deleted and created again empty and headerless is read by
// nothing between anti-entropy passes but a write to it: the write waits
// and health reports the tab blocked (sheet_header_drift, not ok) until
// the pass, which writes the header and refills the tab; health is then
// ok again.
func TestASystemTabRecreatedEmptyAndHeaderlessBlocksItsWriteUntilRebuilt(t *testing.T) {
	const partSystem = "Part_System"
	x := openSyncedOn(t, t.TempDir(), serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil), nil, parts)
	seedParts(t, x, 4)
	x.recreate(partSystem)
	commit(t, x.Store, &Part{ID: "1", Name: "part 1 renamed", SKU: "00001", Qty: 1})
	x.pass()
	th := tabOf(t, x.syncHealth(), partSystem)
	if th.State != hikoutei.SyncBlocked || th.Reason != hikoutei.ReasonHeaderDrift {
		t.Fatalf("System tab health after the write met it empty: %+v, want blocked, sheet_header_drift", th)
	}
	for range 2 {
		// The write held row 1 while the pass refilled the others; it
		// then fails anchor_not_found (terminal) and the next pass
		// supersedes it with the append of the row.
		if _, err := x.h.Reconcile(ctx); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		x.clock.Advance(time.Minute)
		x.pass()
	}
	x.drain()
	if got := x.rowOf(partSystem, "1"); got == nil || !slices.Contains(got, "part 1 renamed") {
		t.Fatalf("System row 1 after the rebuild: %q", got)
	}
	if n := len(x.rows(partSystem)); n != 5 {
		t.Fatalf("System tab after the rebuild: %q", x.rows(partSystem))
	}
	if h := x.syncHealth(); h.State != hikoutei.SyncOK || h.Failing() {
		t.Fatalf("sync health after the rebuild: %+v", h)
	}
}

// Tabs deleted while the store was down are created again, empty, by
// the next start's provisioning: health reports each blocked with
// sheet_tab_missing from that start (it reported ok until a poll read
// the Input tab empty, and never anything for the System tab), and ok
// again once the reconciliation pass has refilled them.
func TestATabDeletedAcrossARestartIsReportedMissingUntilRefilled(t *testing.T) {
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	x := openSyncedOn(t, dir, sheet, nil, parts)
	seedParts(t, x, 5)
	mustT(t, x.Close())
	mustT(t, sheet.Person().DeleteTab(partInput))
	mustT(t, sheet.Person().DeleteTab("Part_System"))

	y := openSyncedOn(t, dir, sheet, x.clock, parts)
	wantBlocked(t, y, partInput, hikoutei.ReasonTabMissing)
	wantBlocked(t, y, "Part_System", hikoutei.ReasonTabMissing)
	y.poll() // reads the Input tab empty: suspected_mass_deletion, never ok
	h := y.syncHealth()
	if in, sys := tabOf(t, h, partInput), tabOf(t, h, "Part_System"); in.State != hikoutei.SyncBlocked ||
		sys.State != hikoutei.SyncBlocked || sys.Reason != hikoutei.ReasonTabMissing {
		t.Fatalf("after the first poll: Input %s %q, System %s %q", in.State, in.Reason, sys.State, sys.Reason)
	}
	y.reconcile(2)
	y.poll()
	for _, tab := range []string{partInput, "Part_System"} {
		if got := len(y.rows(tab)); got != 6 {
			t.Fatalf("%s after the pass shows %d rows, want the header and 5", tab, got)
		}
	}
	if h = y.syncHealth(); h.State != hikoutei.SyncOK || h.Failing() {
		t.Fatalf("sync health after the pass: %+v", h)
	}
}
