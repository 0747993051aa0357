package engine_test

import (
	"testing"

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
