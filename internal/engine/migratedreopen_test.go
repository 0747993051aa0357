package engine_test

import (
	"slices"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// I28 (the evolution campaign, seed 103 run 1): a person's value stays on
// an Input row after its conflict ended with the change that made notes
// the application's (shape_changed); notes is editable again before the
// tab followed, so its migration is recovered and leaves the row showing
// the person's value. Health says diverged — and, after the store is
// closed and opened again, still says so before any reconciliation pass
// (the count was in memory only: health said ok while the row showed the
// value), until the row converges.
func TestI28_HealthStaysDivergedAcrossAReopenWhileARowAMigrationLeftDiffers(t *testing.T) {
	t.Parallel()
	r := newLayoutRig(t)
	r.open(nil, hikoutei.Entity[notesUser]("Rec"))
	commit(t, r.s, &notesUser{ID: "a", Name: "A", Notes: "first"})
	r.passes(3)
	commit(t, r.s, &notesUser{ID: "a", Name: "A", Notes: "system"})
	r.typeInto("Rec_Input", "B2", "person") // notes of a
	r.passes(3)
	r.poll()
	r.passes(3)
	open, err := r.s.Conflicts(r.t.Context(), hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].Field != "notes" {
		t.Fatalf("open conflicts %+v %v", open, err)
	}
	r.close()
	r.open(nil, hikoutei.Entity[notesSystem]("Rec")) // the conflict ends (shape_changed); the tab does not follow
	r.close()
	r.open(nil, hikoutei.Entity[notesUser]("Rec"))
	r.passes(10)
	header := []string{"id", "notes", "tag", anchorHeader}
	if row := r.row("Rec_Input", header, "a"); row[1] != "person" {
		t.Fatalf("a's Input row after the recovered migration: %q", row)
	}
	if th := r.state("Rec_Input"); th.State != hikoutei.SyncDiverged || th.Diverged != 1 {
		t.Fatalf("Rec_Input shows a value canonical state does not hold, and health says %+v", th)
	}
	r.close()
	r.open(nil, hikoutei.Entity[notesUser]("Rec"))
	if th := r.state("Rec_Input"); th.State != hikoutei.SyncDiverged || th.Diverged != 1 {
		t.Fatalf("after a reopen, Rec_Input still shows a value canonical state does not hold, and health says %+v", th)
	}
	r.poll() // the person's value meets canonical state again: a conflict opens, people's to resolve
	open, err = r.s.Conflicts(r.t.Context(), hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].Field != "notes" || open[0].SheetValue != "person" {
		t.Fatalf("open conflicts after the poll %+v %v", open, err)
	}
	_, err = r.s.ResolveConflict(r.t.Context(), open[0].ID, hikoutei.KeepSystem)
	mustT(t, err)
	r.passes(3)
	if row := r.row("Rec_Input", header, "a"); !slices.Equal(row, []string{"a", "system", "", "a"}) {
		t.Fatalf("a's Input row after its conflict was resolved (keep system): %q", row)
	}
	if th := r.state("Rec_Input"); th.State != hikoutei.SyncOK || th.Diverged != 0 {
		t.Fatalf("Rec_Input converged, and health says %+v", th)
	}
	r.close()
	r.open(nil, hikoutei.Entity[notesUser]("Rec"))
	if th := r.state("Rec_Input"); th.State != hikoutei.SyncOK || th.Diverged != 0 {
		t.Fatalf("Rec_Input converged, and after a reopen health says %+v", th)
	}
	r.converged()
}
