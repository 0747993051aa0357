package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
)

const airportSystem = "Airport_System"

// converged syncs n airports and returns the store with its tabs as they
// show canonical state (sorted rows, header first).
func converged(t *testing.T, n int) (*synced, map[string][]string) {
	t.Helper()
	x := openSynced(t, t.TempDir())
	for i := range n {
		commit(t, x.Store, &Airport{ID: fmt.Sprintf("a%02d", i), Name: fmt.Sprintf("Airport %d", i), Altitude: int64(i)})
	}
	x.drain()
	return x, x.tabs()
}

// tabs renders every row tab as sorted lines (order is not identity).
func (x *synced) tabs() map[string][]string {
	out := map[string][]string{}
	for _, tab := range []string{airportSystem, "Airport_Input"} {
		var lines []string
		for _, r := range x.rows(tab) {
			if strings.Join(r, "") != "" {
				lines = append(lines, strings.Join(r, "|"))
			}
		}
		slices.Sort(lines)
		out[tab] = lines
	}
	return out
}

// reconcile runs reconciliation passes (one period each) and drains the
// corrections they queue, n times.
func (x *synced) reconcile(n int) {
	x.t.Helper()
	for range n {
		if _, err := x.h.Reconcile(ctx); err != nil {
			x.t.Fatalf("reconcile: %v", err)
		}
		x.drain()
	}
}

func (x *synced) assertTabs(want map[string][]string) {
	x.t.Helper()
	got := x.tabs()
	for tab, rows := range want {
		if !slices.Equal(got[tab], rows) {
			x.t.Fatalf("%s differs from canonical state:\n got %q\nwant %q", tab, got[tab], rows)
		}
	}
}

func TestI28_AnUndamagedSheetNeedsNoRepair(t *testing.T) {
	x, want := converged(t, 12)
	before := x.head()
	reps, err := x.disp.AntiEntropy(ctx)
	mustT(t, err)
	for tab, r := range reps {
		if r.Diverged() != 0 || r.Queued != 0 {
			t.Fatalf("%s: %+v on an undamaged sheet", tab, r)
		}
	}
	if len(reps) != 2 || x.head() != before {
		t.Fatalf("reports %v, %d new events", reps, x.head()-before)
	}
	x.assertTabs(want)
}

func TestI28_DeletedSystemTabIsCreatedAgainAndRepopulated(t *testing.T) {
	x, want := converged(t, 12)
	mustT(t, x.sheet.Person().DeleteTab(airportSystem))
	x.reconcile(2)
	x.assertTabs(want)
}

func TestI28_DeletedSystemRowsAndEditedSystemCellsAreRepaired(t *testing.T) {
	x, want := converged(t, 12)
	p := x.sheet.Person()
	mustT(t, p.Type(airportSystem, x.cellRef(airportSystem, "a10", "name"), "vandalised"))
	mustT(t, p.DeleteRows(airportSystem, 5, 3))
	reps, err := x.disp.AntiEntropy(ctx)
	mustT(t, err)
	if r := reps[airportSystem]; r.Missing != 3 || r.Drifted != 1 || r.Queued != 4 {
		t.Fatalf("report %+v, want 3 missing and 1 drifted, 4 corrections", r)
	}
	if tab := tabOf(t, x.Health().SyncHealth, airportSystem); tab.State != hikoutei.SyncDiverged || tab.Diverged != 4 {
		t.Fatalf("health while diverged: %+v", tab)
	}
	x.drain()
	x.reconcile(1)
	x.assertTabs(want)
	if tab := tabOf(t, x.Health().SyncHealth, airportSystem); tab.State != hikoutei.SyncOK || tab.Diverged != 0 {
		t.Fatalf("health once repaired: %+v", tab)
	}
}

func TestI28_ASurplusSystemRowIsDeletedByFullRowCAS(t *testing.T) {
	x, want := converged(t, 4)
	p := x.sheet.Person()
	row := len(x.rows(airportSystem)) + 1
	for i, v := range []string{"zz", "ghost"} {
		mustT(t, p.Type(airportSystem, fmt.Sprintf("%c%d", 'A'+i, row), v))
	}
	header := x.rows(airportSystem)[0]
	mustT(t, p.Type(airportSystem, fmt.Sprintf("%c%d", 'A'+len(header)-1, row), "zz"))
	x.reconcile(2)
	x.assertTabs(want)
}

func TestI28_ASpreadsheetReplacedByAnEmptyOneIsRefilled(t *testing.T) {
	x, want := converged(t, 12)
	mustT(t, x.emu.ReplaceSpreadsheet(hikouteitest.SpreadsheetID))
	x.reconcile(2)
	x.assertTabs(want)
}

func TestI28_ASwitchedSpreadsheetIsBackfilledCompletely(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	x := openSyncedOn(t, dir, sheet, nil, airports)
	for i := range 8 {
		commit(t, x.Store, &Airport{ID: fmt.Sprintf("a%d", i), Name: "A"})
	}
	x.drain()
	want := x.tabs()
	commit(t, x.Store, &Airport{ID: "late", Name: "queued for the old spreadsheet"})
	old := x.e.Target()
	mustT(t, x.Close())

	y := openSyncedOn(t, dir, sheet, x.clock, airports, func(o *hikoutei.SyncOptions) { o.SpreadsheetID = "another-spreadsheet" })
	if y.e.Target() == old || strings.Contains(y.e.Target(), "another") {
		t.Fatalf("target %q (old %q): not a digest of the new spreadsheet id", y.e.Target(), old)
	}
	y.reconcile(2)
	rows := y.sheet.Emulator.Person("another-spreadsheet")
	got, err := rows.Displayed(airportSystem)
	mustT(t, err)
	if len(got) != len(want[airportSystem])+1 {
		t.Fatalf("new spreadsheet shows %d rows, want %d and the late one", len(got)-1, len(want[airportSystem])-1)
	}
	var abandoned int
	y.readModel(func(p *projector.Projector) error {
		effs, err := p.UnsettledOf(old)
		abandoned = len(effs)
		return err
	})
	if abandoned != 0 {
		t.Fatalf("%d effects of the old spreadsheet still unsettled", abandoned)
	}
}

func TestI28_ALegacyStoreAdoptsItsEffects(t *testing.T) {
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	// A store of the previous release: effects queued under the fixed
	// target name, no target binding recorded (never provisioned here).
	so := syncOptions(sheet)
	so.Name = engine.LegacySyncName
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1,
		Sync: so, LeaseTTL: testLeaseTTL, Logger: quiet}, airports...)
	mustT(t, err)
	commit(t, s, &Airport{ID: "a1", Name: "queued before the upgrade"})
	mustT(t, s.Close())

	y := openSyncedOn(t, dir, sheet, nil, airports)
	if n := y.eventTypes(0)[events.TypeSyncTargetBound]; n != 1 {
		t.Fatalf("%d target bindings, want 1 (the adoption)", n)
	}
	y.drain()
	if y.rowOf(airportSystem, "a1") == nil {
		t.Fatal("the legacy effect was not dispatched after the upgrade")
	}
	if c := y.outbox(); c[aggregates.EffectSuperseded] != 0 {
		t.Fatalf("legacy effects superseded instead of adopted: %v", c)
	}
}

// A row a person deleted from an Input tab is deletion evidence first: a
// reconciliation before the poll leaves it missing (and reports it);
// once the poll recorded the deletion, the next pass restores the row,
// and the next poll clears the evidence. The entity is never removed.
func TestI28_AnInputRowAPersonDeletedIsEvidenceFirstThenRestored(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 5)
	x.poll()
	mustT(t, x.sheet.Person().DeleteRows(partInput, x.rowNumber("3"), 1))
	reps, err := x.disp.AntiEntropy(ctx)
	mustT(t, err)
	if r := reps[partInput]; r.Missing != 1 || r.Queued != 0 {
		t.Fatalf("before the deletion evidence: %+v, want 1 missing and no correction", r)
	}
	x.poll()
	if !hasReason(x.quarantine(partInput)["3"], aggregates.ReasonRowDeleted) {
		t.Fatalf("no row_deleted evidence: %v", x.quarantine(partInput))
	}
	x.reconcile(1)
	if x.rowOf(partInput, "3") == nil || x.part("3") == nil {
		t.Fatal("the deleted Input row was not restored")
	}
	x.poll()
	if q := x.quarantine(partInput)["3"]; len(q) != 0 {
		t.Fatalf("evidence still active after the restore: %v", q)
	}
	if n := x.eventTypes(0)[events.TypeEntityRemoved]; n != 0 {
		t.Fatalf("%d entities removed by a sheet deletion", n)
	}
}

// An Input tab a person empties is a suspected mass deletion (C04): the
// poll reports it, no row is imported as deleted, and the next pass
// restores every row.
func TestI28_AClearedInputTabIsReportedAndRestoredNotDeleted(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 6)
	x.poll()
	want := x.rows(partInput)
	mustT(t, x.sheet.Person().ClearTab(partInput, 2))
	x.poll()
	if !hasReason(x.quarantine(partInput)[""], aggregates.ReasonMassDeletion) {
		t.Fatalf("no suspected_mass_deletion: %v", x.quarantine(partInput))
	}
	x.reconcile(2)
	got := x.rows(partInput)
	slices.SortFunc(got[1:], func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	slices.SortFunc(want[1:], func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Input tab after the restore:\n got %q\nwant %q", got, want)
	}
	x.poll()
	if q := x.quarantine(partInput)[""]; len(q) != 0 {
		t.Fatalf("mass deletion still active after the restore: %v", q)
	}
}

// A deleted Input tab is created again and repopulated completely.
func TestI28_ADeletedInputTabIsCreatedAgainAndRepopulated(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 6)
	want := x.rows(partInput)
	mustT(t, x.sheet.Person().DeleteTab(partInput))
	x.reconcile(2)
	if len(x.rows(partInput)) != len(want) {
		t.Fatalf("recreated Input tab shows %d rows, want %d", len(x.rows(partInput)), len(want))
	}
}

// A tab deleted while the store was down is created again at the next
// start (provisioning) and then refilled completely: the rows already
// applied before are written again.
func TestI28_ATabDeletedAcrossARestartIsRefilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	x := openSyncedOn(t, dir, sheet, nil, parts)
	seedParts(t, x, 5)
	want := x.rows(partInput)
	mustT(t, x.Close())
	mustT(t, sheet.Person().DeleteTab(partInput))
	mustT(t, sheet.Person().DeleteTab("Part_System"))

	y := openSyncedOn(t, dir, sheet, x.clock, parts)
	y.poll()
	y.reconcile(2)
	if got := y.rows(partInput); len(got) != len(want) {
		t.Fatalf("Input tab after the restart shows %d rows, want %d", len(got), len(want))
	}
	if got := y.rows("Part_System"); len(got) != len(want) {
		t.Fatalf("System tab after the restart shows %d rows, want %d", len(got), len(want))
	}
}

// A tab whose header a person changed is not read, never repaired (the
// header is people's to fix): health reports it blocked with
// sheet_header_drift from the next pass, even when no effect targets it,
// until a pass reads it again.
func TestI28_ADriftedHeaderIsReportedBlockedUntilRepaired(t *testing.T) {
	x, _ := converged(t, 3)
	mustT(t, x.sheet.Person().Type(airportSystem, "B1", "renamed"))
	reps, err := x.disp.AntiEntropy(ctx)
	mustT(t, err)
	if r := reps[airportSystem]; r.Queued != 0 {
		t.Fatalf("a blocked tab was repaired: %+v", r)
	}
	h := x.Health().SyncHealth
	if tab := tabOf(t, h, airportSystem); tab.State != hikoutei.SyncBlocked || tab.Reason != hikoutei.ReasonHeaderDrift {
		t.Fatalf("tab health %+v", tab)
	}
	mustT(t, x.sheet.Person().Type(airportSystem, "B1", "name"))
	_, err = x.disp.AntiEntropy(ctx)
	mustT(t, err)
	if tab := tabOf(t, x.Health().SyncHealth, airportSystem); tab.State == hikoutei.SyncBlocked {
		t.Fatalf("still blocked after the header was repaired: %+v", tab)
	}
}

// A System row a person deleted turns every update queued for it into an
// anchor_not_found failure. The reconciliation pass that supersedes the
// first failure folds the updates pending behind it into its correction
// (one append of canonical state), so the row is back after that one
// pass, not one reconciliation period per update queued behind it. (The
// two commits behind the failure merge into one pending update, I32.)
func TestI28_UpdatesQueuedBehindADeletedSystemRowAreFoldedIntoOneCorrection(t *testing.T) {
	x, _ := converged(t, 4)
	row := 0
	for i, r := range x.rows(airportSystem) {
		if slices.Contains(r, "a02") {
			row = i + 1
		}
	}
	mustT(t, x.sheet.Person().DeleteRows(airportSystem, row, 1))
	commit(t, x.Store, &Airport{ID: "a02", Name: "first", Altitude: 1})
	x.pass()
	if c := x.outbox(); c[aggregates.EffectFailed] != 1 {
		t.Fatalf("outbox %v: the update of the deleted row must fail", c)
	}
	commit(t, x.Store, &Airport{ID: "a02", Name: "second", Altitude: 2})
	commit(t, x.Store, &Airport{ID: "a02", Name: "third", Altitude: 3})
	if _, err := x.h.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	x.pass()
	x.pass()
	got := x.rowOf(airportSystem, "a02")
	if !slices.Contains(got, "third") || !slices.Contains(got, "3") {
		t.Fatalf("after one reconciliation the row shows %q, want canonical state (third, 3)", got)
	}
	if c := x.outbox(); c[aggregates.EffectSuperseded] != 2 || c[aggregates.EffectFailed] != 0 || x.unsettled() != 0 {
		t.Fatalf("outbox %v: the failure and the merged update behind it superseded by one correction", c)
	}
}

// After a switch of spreadsheet, an update committed before the new one
// was backfilled queues only the row it changes (the System row): the
// backfill still queues the entity's Input row, each row tab being
// checked on its own, so the new spreadsheet shows every row.
func TestI28_ASwitchedSpreadsheetGetsEveryRowTabEvenAfterAnUpdateQueuedOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	x := openSyncedOn(t, dir, sheet, nil, parts)
	seedParts(t, x, 3)
	mustT(t, x.Close())
	y := openSyncedOn(t, dir, sheet, x.clock, parts, func(o *hikoutei.SyncOptions) { o.SpreadsheetID = "another-spreadsheet" })
	commit(t, y.Store, &Part{ID: "2", Name: "renamed", SKU: "00002", Qty: 2})
	for range 3 { // the update meets no System row there: superseded by an append
		if _, err := y.h.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		y.pass()
		y.pass()
	}
	rows, err := y.sheet.Emulator.Person("another-spreadsheet").Displayed(partInput)
	mustT(t, err)
	if len(rows) != 4 {
		t.Fatalf("the new spreadsheet's %s shows %q, want the header and 3 rows", partInput, rows)
	}
}

// Pointing a store back at a spreadsheet it synced to earlier never
// imports what that spreadsheet still shows from then as a person's edit:
// the edit accepted on the other spreadsheet stands, and the earlier one
// is projected from canonical state again.
func TestI28_SwitchingBackNeverImportsTheOldSpreadsheetsStaleCells(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	x := openSyncedOn(t, dir, sheet, nil, parts)
	seedParts(t, x, 3)
	x.poll()
	clock := x.clock
	mustT(t, x.Close())

	other := func(o *hikoutei.SyncOptions) { o.SpreadsheetID = "spreadsheet-d" }
	y := openSyncedOn(t, dir, sheet, clock, parts, other)
	y.reconcile(2)
	d := sheet.Emulator.Person("spreadsheet-d")
	rows, err := d.Displayed(partInput)
	mustT(t, err)
	for i, r := range rows {
		if len(r) > 0 && r[len(r)-1] == "2" {
			mustT(t, d.Type(partInput, fmt.Sprintf("D%d", i+1), "edited on D"))
		}
	}
	y.poll()
	if got := y.part("2").Notes; got != "edited on D" {
		t.Fatalf("the edit on the second spreadsheet was not accepted: %q", got)
	}
	mustT(t, y.Close())

	z := openSyncedOn(t, dir, sheet, clock, parts)
	for range 3 {
		z.poll()
		if _, err := z.h.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		for range 5 { // the backfill's append to the existing System row fails terminally; the next pass supersedes it
			z.pass()
		}
	}
	z.fullScan()
	if got := z.part("2").Notes; got != "edited on D" {
		t.Fatalf("switching back imported the old spreadsheet's stale cell: notes %q", got)
	}
	if got := z.cellOf(partInput, "2", "notes"); got != "edited on D" {
		t.Fatalf("the first spreadsheet shows %q, want canonical state", got)
	}
}

// A person typing an existing anchor into another System row (so one
// anchor shows twice and another record vanishes) is repaired: the
// vanished record's row comes back and the differing copy is deleted by
// full-row CAS; no anchor stays duplicated.
func TestI28_AnExistingAnchorTypedIntoAnotherSystemRowIsRepaired(t *testing.T) {
	x, want := converged(t, 6)
	header := x.rows(airportSystem)[0]
	ref := x.cellRef(airportSystem, "a02", header[len(header)-1])
	mustT(t, x.sheet.Person().Type(airportSystem, ref, "a03"))
	x.reconcile(3)
	x.assertTabs(want)
}

// A row without an anchor typed into a System tab cannot be addressed by
// any write: it is reported (health diverged) for an operator, never
// left silent.
func TestI28_AnAnchorlessSystemRowIsReportedNotHidden(t *testing.T) {
	x, _ := converged(t, 3)
	row := len(x.rows(airportSystem)) + 1
	mustT(t, x.sheet.Person().Type(airportSystem, fmt.Sprintf("B%d", row), "junk"))
	reps, err := x.disp.AntiEntropy(ctx)
	mustT(t, err)
	if r := reps[airportSystem]; r.Surplus != 1 || r.Queued != 0 {
		t.Fatalf("report %+v, want one surplus row and no write", r)
	}
	if tab := tabOf(t, x.Health().SyncHealth, airportSystem); tab.State != hikoutei.SyncDiverged || tab.Diverged != 1 {
		t.Fatalf("health %+v", tab)
	}
}

// TestI28_ACommitMadeWhileSyncWasOffReachesTheSheet: a record synced,
// then changed by a run without sync, still shows its old state on both
// tabs; the next reconciliation finds the rows stale against canonical
// state (not against the store's last write) and corrects them.
func TestI28_ACommitMadeWhileSyncWasOffReachesTheSheet(t *testing.T) {
	dir := t.TempDir()
	x := openSynced(t, dir)
	commit(t, x.Store, &Airport{ID: "a1", Name: "before", Altitude: 1})
	x.drain()
	sheet := x.sheet
	mustT(t, x.Close())

	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1,
		LeaseTTL: testLeaseTTL, Logger: quiet}, airports...)
	mustT(t, err)
	commit(t, s, &Airport{ID: "a1", Name: "changed offline", Altitude: 5})
	mustT(t, s.Close())

	y := openSyncedOn(t, dir, sheet, nil, airports)
	y.drain()
	reps, err := y.disp.AntiEntropy(ctx)
	mustT(t, err)
	if r := reps[airportSystem]; r.Stale != 1 || r.Queued != 1 {
		t.Fatalf("System tab %+v: want the row stale and corrected", r)
	}
	y.drain()
	if got := y.cellOf(airportSystem, "a1", "name"); got != "changed offline" {
		t.Fatalf("System row %v after the correction", y.rowOf(airportSystem, "a1"))
	}
	if reps, _ := y.disp.AntiEntropy(ctx); reps[airportSystem].Diverged() != 0 || reps["Airport_Input"].Diverged() != 0 {
		t.Fatalf("after the correction: %+v", reps)
	}
}
