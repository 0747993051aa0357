package engine_test

import (
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// An idle store's passes: an unchanged poll is certified from row digests
// (no row decoded), and a full scan, a cleanup and an anti-entropy pass
// that read what the last one read, at the same checkpoint, read no row's
// state; a changed sheet (an edit, a formula showing the expected value,
// a drifted System cell) is still decided through the same passes.

func (x *synced) stats() engine.Stats { return x.e.Stats() }

func TestIdlePassesOverAnUnchangedSheetReadNoRowState(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 5)
	if r := x.poll(); r.Certified != 1 || r.Escalated != 0 {
		t.Fatalf("unchanged poll %+v: want certified from digests", r)
	}
	x.fullScan()
	x.cleanup()
	x.reconcile(1)
	before := x.stats()
	x.poll()
	x.fullScan()
	x.cleanup()
	x.reconcile(1)
	after := x.stats()
	// One full scan, one cleanup (Input), the search for entities never
	// queued and anti-entropy of Part_System and Part_Input.
	if got := after.Unchanged - before.Unchanged; got != 5 {
		t.Fatalf("unchanged passes skipped: %d, want 5 (%+v → %+v)", got, before, after)
	}
	if after.RowStates != before.RowStates {
		t.Fatalf("idle passes read %d row states", after.RowStates-before.RowStates)
	}
	if after.Events != before.Events {
		t.Fatalf("idle passes appended %d events", after.Events-before.Events)
	}
}

func TestIdleFullScanStillDecidesAnEditAndAFormula(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	x.fullScan()
	x.fullScan()
	s := x.stats()
	x.typeIn("2", "notes", "checked by Ana")
	if r := x.fullScan(); r.Stats.Accepted != 1 {
		t.Fatalf("full scan after an edit: %+v", r)
	}
	if got := x.stats(); got.Unchanged != s.Unchanged || got.RowStates == s.RowStates {
		t.Fatalf("the edited tab was skipped: %+v → %+v", s, got)
	}
	x.drain()
	x.fullScan()
	x.fullScan()
	// A formula whose result is the expected value: the values read
	// certifies it, only the grid read (and its digest) shows it.
	mustT(t, x.sheet.Person().TypeFormula(partInput, x.cellRef(partInput, "3", "qty"), `=1+2`))
	if r := x.poll(); r.Escalated != 0 {
		t.Fatalf("the values read saw the formula: %+v", r)
	}
	if r := x.fullScan(); r.Stats.Quarantined != 1 {
		t.Fatalf("full scan after a formula: %+v", r)
	}
}

func TestIdleCleanupAndAntiEntropyStillSeeAChange(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	x.cleanup()
	x.reconcile(1)
	x.cleanup()
	x.reconcile(1)
	s := x.stats()
	mustT(t, x.sheet.Person().Type(partSystem, x.cellRef(partSystem, "2", "qty"), "99"))
	x.reconcile(1)
	if got := x.stats(); got.RowStates-s.RowStates < 3 {
		t.Fatalf("the drifted System tab was skipped: %+v → %+v", s, got)
	}
	x.drain()
	if got := x.cellOf(partSystem, "2", "qty"); got != "2" {
		t.Fatalf("anti-entropy left the drifted cell at %q", got)
	}
	row, err := x.sheet.Person().PasteRow(partInput, x.rowNumber("1"))
	mustT(t, err)
	s = x.stats()
	if n := x.cleanup(); n != 1 {
		t.Fatalf("cleanup of a pasted copy (row %d) queued %d deletes", row, n)
	}
	if got := x.stats(); got.Unchanged != s.Unchanged {
		t.Fatalf("the tab with a pasted copy was skipped: %+v → %+v", s, got)
	}
}

func (x *synced) cleanup() int {
	x.t.Helper()
	n, err := x.h.Cleanup(ctx)
	mustT(x.t, err)
	return n
}

// When the full scan and the cleanup fall due together, Run does both on
// one grid read (Poller.ScanAndCleanup): an edit is still accepted and a
// pasted copy of a row still deleted.
func TestIdleFullScanAndCleanupShareOneGridRead(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	x.emu.ResetCounters()
	x.fullScan()
	alone := x.emu.Counters(sheetID).Reads // the tab listing and the grid read
	x.typeIn("2", "notes", "checked by Ana")
	_, err := x.sheet.Person().PasteRow(partInput, x.rowNumber("1"))
	mustT(t, err)
	_, p, _ := x.e.Workers()
	x.emu.ResetCounters()
	r, n, err := p.ScanAndCleanup(ctx)
	mustT(t, err)
	if c := x.emu.Counters(sheetID); c.Reads != alone || c.Writes != 0 {
		t.Fatalf("full scan and cleanup: %d reads, %d writes, want %d reads as a full scan alone", c.Reads, c.Writes, alone)
	}
	if r.Stats.Accepted != 1 || n != 1 {
		t.Fatalf("full scan %+v, %d deletes: want the edit accepted and the copy deleted", r, n)
	}
	x.drain()
	if got := x.rows(partInput); len(got) != 4 {
		t.Fatalf("Input tab after the cleanup: %q", got)
	}
}

// An idle full scan and cleanup read the same bytes again: once the
// passes found nothing to change, the store knows the read's digest
// (KnownGrid) and the provider decodes nothing (Undecoded). A commit
// moves the checkpoint: the digest is no longer vouched for, and a read
// not decoded against it is refused (ErrReadUndecoded), so the poller
// reads again and decodes.
func TestIdleGridReadIsNotDecodedUntilTheStoreMoves(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	_, base, err := x.e.Expectations(nil)
	mustT(t, err)
	tabs := []string{partInput}
	if k, err := x.e.KnownGrid(base, tabs, true, true); err != nil || !k.IsZero() {
		t.Fatalf("known before any pass: %x, %v", k, err)
	}
	_, p, _ := x.e.Workers()
	for range 2 {
		_, _, err := p.ScanAndCleanup(ctx)
		mustT(t, err)
	}
	known, err := x.e.KnownGrid(base, tabs, true, true)
	if err != nil || known.IsZero() {
		t.Fatalf("known after idle passes: %x, %v", known, err)
	}
	grids, err := x.prov.ReadGridKnown(ctx, x.wb, known, tabs...)
	mustT(t, err)
	if g := grids[partInput]; !g.Undecoded {
		t.Fatalf("idle grid read %+v: want Undecoded", g)
	}
	s := x.stats()
	r, n, err := p.ScanAndCleanup(ctx)
	mustT(t, err)
	if got := x.stats(); got.Unchanged-s.Unchanged != 2 || got.RowStates != s.RowStates || r.Stats.Events != 0 || n != 0 {
		t.Fatalf("idle scan and cleanup: %+v, %d; stats %+v → %+v: want both skipped", r, n, s, got)
	}
	u := x.Begin()
	mustT(t, u.Persist(&Part{ID: "9", Name: "part 9", SKU: "00009", Qty: 9}))
	_, err = u.Commit(ctx)
	mustT(t, err)
	_, moved, err := x.e.Expectations(nil)
	mustT(t, err)
	if k, _ := x.e.KnownGrid(moved, tabs, true, false); !k.IsZero() {
		t.Fatal("the store still vouches for a read after a commit")
	}
	_, err = x.e.Observe(moved, map[string]effects.TabObservation{partInput: {Grid: grids[partInput]}}, true)
	if !errors.Is(err, effects.ErrReadUndecoded) {
		t.Fatalf("an undecoded read after a commit: %v, want ErrReadUndecoded", err)
	}
	if _, err := x.e.Cleanup(moved, grids); !errors.Is(err, effects.ErrReadUndecoded) {
		t.Fatalf("cleanup of an undecoded read after a commit: %v, want ErrReadUndecoded", err)
	}
	if r := x.fullScan(); r.Stats.Events != 0 {
		t.Fatalf("full scan after the commit: %+v", r)
	}
}

// A poll that certified every tab is remembered with its read's digest:
// the next poll at the same checkpoint reads once and, when the read is
// the same bytes, is certified again without an expectation or a row
// digest. A person's edit changes the digest: that poll is decided as
// before (the edit accepted).
func TestQuietPollIsCertifiedFromItsDigest(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	x.poll()
	x.emu.ResetCounters()
	if r := x.poll(); r.Certified != 1 || r.Escalated != 0 {
		t.Fatalf("quiet poll %+v: want certified", r)
	}
	if c := x.emu.Counters(sheetID); c.Reads != 1 || c.Writes != 0 {
		t.Fatalf("quiet poll: %d reads, %d writes, want 1 and 0", c.Reads, c.Writes)
	}
	x.typeIn("2", "notes", "checked by Ana")
	if r := x.poll(); r.Escalated != 1 || r.Stats.Accepted != 1 {
		t.Fatalf("poll after an edit %+v: want it escalated and accepted", r)
	}
	x.drain()
	x.poll()
	if r := x.poll(); r.Certified != 1 || r.Escalated != 0 {
		t.Fatalf("quiet poll after the edit %+v: want certified", r)
	}
}
