package hikoutei_test

import (
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// I28 (found by the evolution campaign, seed 2 run 10): an application
// write of an Input row meets a person's unpolled edit of another cell and
// is not made. Until a poll decides the row, the store knows the row
// differs from canonical state: sync health says diverged with that row
// counted, never ok. Once the poll took the edit and the rewrite landed,
// health is ok again.
func TestI28_HealthIsDivergedWhileAWriteIsLostUntilAPollDecidesTheRow(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(5)
	if err := r.sheet.Person().Type("Rec_Input", "B2", "typed"); err != nil { // notes of a
		t.Fatal(err)
	}
	r.persist(&recTag{ID: "a", Name: "A", Tag: "t2"}) // its write meets the edited row
	r.passes(3)
	if out := r.h.Outbox(); out["conflict"] != 1 {
		t.Fatalf("the write of tag was not stopped by the edited row: %v", out)
	}
	if th := r.tabHealth("Rec_Input"); th.State != hikoutei.SyncDiverged || th.Diverged != 1 {
		t.Fatalf("Rec_Input health with its write lost: %+v, want diverged with 1 row", th)
	}
	if _, err := r.h.Poll(bg); err != nil {
		t.Fatal(err)
	}
	r.passes(3)
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "typed", "t2", "a"}})
	if th := r.tabHealth("Rec_Input"); th.State != hikoutei.SyncOK || th.Diverged != 0 {
		t.Fatalf("Rec_Input health once the poll decided the row: %+v, want ok", th)
	}
}

// I28: a write lost on a cell a person edited; the poll holds the edit as
// a conflict (health does not count a row people hold), and the conflict
// is resolved in favour of the sheet. The lost mark clears once the row
// is set again: health is ok, not diverged for good.
func TestI28_TheLostMarkClearsAfterAConflictResolvedForTheSheet(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(5)
	if err := r.sheet.Person().Type("Rec_Input", "C2", "mine"); err != nil { // tag of a
		t.Fatal(err)
	}
	r.persist(&recTag{ID: "a", Name: "A", Tag: "app"}) // its write meets the edited cell
	r.passes(3)
	if _, err := r.h.Poll(bg); err != nil {
		t.Fatal(err)
	}
	open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].SheetValue != "mine" {
		t.Fatalf("open conflicts %+v %v", open, err)
	}
	if th := r.tabHealth("Rec_Input"); th.State == hikoutei.SyncDiverged {
		t.Fatalf("Rec_Input health with the row held by a conflict: %+v", th)
	}
	if _, err := r.s.ResolveConflict(bg, open[0].ID, hikoutei.UseSheet); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r.passes(3)
		if _, err := r.h.Poll(bg); err != nil {
			t.Fatal(err)
		}
	}
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "", "mine", "a"}})
	if th := r.tabHealth("Rec_Input"); th.State != hikoutei.SyncOK || th.Diverged != 0 {
		t.Fatalf("Rec_Input health after the conflict was resolved for the sheet: %+v, want ok", th)
	}
	r.converged()
}

// I28: a write lost on a cell into which a person typed the very value
// the application wrote: the row shows canonical state, so no write of
// it follows. Once the poll read it, the lost mark clears: health is ok,
// not diverged for good.
func TestI28_TheLostMarkClearsWhenThePersonTypedTheValueTheWriteCarried(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(5)
	if err := r.sheet.Person().Type("Rec_Input", "C2", "same"); err != nil { // tag of a
		t.Fatal(err)
	}
	r.persist(&recTag{ID: "a", Name: "A", Tag: "same"}) // its write meets the edited row
	r.passes(3)
	if out := r.h.Outbox(); out["conflict"] != 1 {
		t.Fatalf("the write of tag was not stopped by the edited row: %v", out)
	}
	for range 2 {
		if _, err := r.h.Poll(bg); err != nil {
			t.Fatal(err)
		}
		r.passes(3)
	}
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "", "same", "a"}})
	if th := r.tabHealth("Rec_Input"); th.State != hikoutei.SyncOK || th.Diverged != 0 {
		t.Fatalf("Rec_Input health once the poll read the row: %+v, want ok", th)
	}
	r.converged()
}
