package engine_test

import (
	"testing"
)

// An observation decides a tab a window of rows a writer turn: between
// two turns the writer serves others (here the application's commit, made
// while the observation is under way), and each window's rows are decided
// against their state as its own turn reads it: a row the application
// changed after the read is in transition (deferred), not a person's edit
// of what the row showed before.
func TestObservationDecidesEachWindowOfRowsInAWriterTurnOfItsOwn(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 30)
	for _, id := range []string{"3", "17", "28"} {
		x.typeIn(id, "notes", "edited "+id)
	}
	turns := 0
	mustT(t, x.e.ObserveInTurnsOf(4, func() {
		if turns++; turns == 1 { // rows 1–4 decided and committed
			commit(t, x.Store, &Part{ID: "28", Name: "part 28", SKU: "00028", Qty: 280})
		}
	}))
	r := x.fullScan()
	if turns != 7 {
		t.Fatalf("30 rows in windows of 4: %d pauses between turns, want 7", turns)
	}
	if r.Stats.Rows != 30 || r.Stats.Accepted != 2 || r.Stats.Deferred != 1 || r.Stats.Quarantined != 0 || r.Stats.Candidates != 0 {
		t.Fatalf("full scan: %+v", r.Stats)
	}
	for id, notes := range map[string]string{"3": "edited 3", "17": "edited 17", "28": ""} {
		if p := x.part(id); p.Notes != notes {
			t.Errorf("part %s after the scan: %+v, want notes %q", id, p, notes)
		}
	}
	if p := x.part("28"); p.Qty != 280 {
		t.Errorf("part 28 after the scan: %+v, want the application's qty", p)
	}
}

// The unchanged mark of an observation decided in turns is remembered
// only when no turn decided anything and the read model did not move from
// the first turn to the last: a commit landing between two turns means
// the next pass decides again.
func TestObservationInTurnsIsRememberedUnchangedOnlyWhenNothingMovedBetweenThem(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 10)
	skipped := func() bool {
		t.Helper()
		u := x.e.Stats().Unchanged
		if r := x.fullScan(); r.Stats.Rows != 10 || r.Stats.Accepted+r.Stats.Quarantined+r.Stats.Deferred != 0 {
			t.Fatalf("full scan of 10 unchanged rows: %+v", r.Stats)
		}
		return x.e.Stats().Unchanged > u
	}
	commits := 0
	mustT(t, x.e.ObserveInTurnsOf(3, func() {
		if commits++; commits == 2 {
			commit(t, x.Store, &Part{ID: "new", Name: "committed between two turns"})
		}
	}))
	if skipped() {
		t.Fatal("the first full scan was skipped")
	}
	if commits != 3 {
		t.Fatalf("10 rows in windows of 3: %d pauses between turns, want 3", commits)
	}
	if skipped() {
		t.Fatal("a full scan was skipped after one whose turns a commit separated")
	}
	if !skipped() {
		t.Fatal("a full scan was decided again after one that changed nothing with nothing between its turns")
	}
}
