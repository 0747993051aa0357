package engine_test

import (
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// notesBySystem is keyByID whose notes people no longer edit.
type notesBySystem struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes"`
}

// I35 (the sequence of the evolution campaign's seed 103 run 1): a
// person's value of notes meets the application's and a conflict opens;
// notes stops being editable (the conflict ends, shape_changed) and is
// editable again before the Input tab was migrated, so the tab already
// shows the current layout and its migration is recovered. The row still
// shows the person's value, which the store never took: health is not ok
// from the recovered migration on, and the next poll decides the value
// again (a conflict opens on it).
func TestI35_ARecoveredMigrationLeavesAValueNeverTakenDivergedUntilThePollDecidesIt(t *testing.T) {
	t.Parallel()
	r := newLayoutRig(t)
	r.open(nil, hikoutei.Entity[keyByID]("Rec"))
	commit(t, r.s, &keyByID{ID: "a", Name: "A", Notes: "first"})
	r.passes(3)
	r.typeInto("Rec_Input", "B2", "typed")                        // notes of a
	commit(t, r.s, &keyByID{ID: "a", Name: "A", Notes: "second"}) // meets the person's value
	r.passes(3)
	r.poll()
	r.passes(3)
	r.openConflicts(1)
	r.close()
	r.open(nil, hikoutei.Entity[notesBySystem]("Rec"))
	r.openConflicts(0)
	r.close()
	r.open(nil, hikoutei.Entity[keyByID]("Rec"))
	r.passes(3)
	if row := r.row("Rec_Input", []string{"id", "notes", anchorHeader}, "a"); row[1] != "typed" {
		t.Fatalf("a's Input row after the shape changes: %q", row)
	}
	if th := r.state("Rec_Input"); th.State != hikoutei.SyncDiverged || th.Diverged != 1 {
		t.Fatalf("Rec_Input shows a value of a the store never took, and health says %+v", th)
	}
	r.poll()
	r.passes(3)
	if cs := r.openConflicts(1); cs[0].EntityID != "a" || cs[0].Field != "notes" {
		t.Fatalf("open conflicts after the poll: %+v", cs)
	}
}

// openConflicts checks that n conflicts are open and returns them.
func (r *layoutRig) openConflicts(n int) []hikoutei.Conflict {
	r.t.Helper()
	cs, err := r.s.Conflicts(r.t.Context(), hikoutei.ConflictOpen)
	mustT(r.t, err)
	if len(cs) != n {
		r.t.Fatalf("%d open conflicts, want %d: %+v", len(cs), n, cs)
	}
	return cs
}
