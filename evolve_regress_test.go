package hikoutei_test

import (
	"slices"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// Regressions found by the evolution campaign (make evolve).

// I35: a person edits two user columns of one row while the store is
// closed, and the store then reopens with one of those fields dropped.
// The poll under the old layout accepts the edit of the field kept; the
// value in the dropped field's column, never imported, is still kept
// retired: accepting the row's other edit does not make its cells the
// store's.
func TestI35_ARetiredValueSurvivesTheAcceptanceOfAnotherEditOnItsRow(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(10)
	r.close()
	if err := r.sheet.Person().Type("Rec_Input", "C3", "keep me"); err != nil { // tag of b
		t.Fatal(err)
	}
	if err := r.sheet.Person().Type("Rec_Input", "B3", "typed"); err != nil { // notes of b
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recV1]("Rec")) // tag dropped
	r.passes(10)
	if b, err := hikoutei.Get[recV1](bg, r.s, "b"); err != nil || b.Notes != "typed" {
		t.Fatalf("b = %+v %v", b, err)
	}
	r.shows("Rec_Input", []string{"id", "notes", anchorCol, "tag (retired)"}, map[string][]string{
		"a": {"a", "", "a"}, "b": {"b", "typed", "b", "keep me"}})
}

// I35: a tab provisioned in an older layout that never showed a row is
// still a tab in an older layout: after the store reopens with a field
// added, health never calls it ok before it follows (here: the store
// reopens once more, with another entity added, before any pass).
func TestI35_HealthIsNeverOKOnAnEmptyTabInAnOlderLayout(t *testing.T) {
	t.Parallel()
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.h.Drain(bg)
	r.close()
	r.open(hikoutei.Entity[recPop]("Rec")) // pop added; the tab does not follow
	r.close()
	r.open(hikoutei.Entity[recPop]("Rec"), hikoutei.Entity[otherRec]("Other"))
	if th := r.tabHealth("Rec_System"); th.State == hikoutei.SyncOK {
		t.Fatalf("health calls Rec_System ok while it shows an older layout: %+v", th)
	}
	r.passes(10)
	r.shows("Rec_System", []string{"id", "name", "pop", "notes", anchorCol}, nil)
	r.converged()
}

type otherRec struct {
	ID    string `hikoutei:"id,pk"`
	Label string `hikoutei:"label,user"`
}

// I35 (and I22: a tab is never ok while a row differs): a field with a
// conflict that is dropped and added again is another field under the same
// name. A person's edit of the new field that conflicts with the
// application opens a conflict of its own — not the id of the ended one,
// which would leave its candidate holding the row forever, the tab never
// corrected and its health ok.
func TestI35_AConflictOnAFieldDroppedAndAddedAgainIsANewConflict(t *testing.T) {
	t.Parallel()
	type noteV2 struct {
		ID   string `hikoutei:"id,pk"`
		Body string `hikoutei:"body"`
	}
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	openConflictOnNote(t, dir, sheet)
	opts := hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true}
	s, err := hikoutei.Open(bg, dir, opts, hikoutei.Entity[noteV2]("Note")) // note dropped: its conflict ends
	if err != nil {
		t.Fatal(err)
	}
	h := hikouteitest.New(t, s)
	h.Drain(bg)
	s.Close()
	s, err = hikoutei.Open(bg, dir, opts, hikoutei.Entity[noteV1]("Note")) // note added again
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h = hikouteitest.New(t, s)
	h.Drain(bg)
	if got, err := sheet.Person().Displayed("Note_Input"); err != nil || !slices.Equal(got[0][:3], []string{"id", "note", anchorCol}) || got[1][0] != "1" {
		t.Fatalf("Note_Input %q %v", got, err)
	}
	u := s.Begin()
	if err := u.Persist(&noteV1{ID: "1", Body: "b1", Note: "system again"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if err := sheet.Person().Type("Note_Input", "B2", "person again"); err != nil { // note of 1, before the anchor and "note (retired)"
		t.Fatal(err)
	}
	h.Drain(bg)
	if _, err := h.Poll(bg); err != nil {
		t.Fatal(err)
	}
	open, err := s.Conflicts(bg, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].Field != "note" {
		t.Fatalf("open conflicts %+v %v", open, err)
	}
	h.Drain(bg)
}

// I35: a write queued before a field is dropped and added again carries
// the dropped field's value under the name the new field has: sent after
// the tab followed the shape, it writes only what the current field
// holds — the appended row shows the new field's zero value, an update
// leaves the column as the migration filled it — so no row shows a value
// canonical state no longer has while nothing is queued for it.
func TestI35_AWriteQueuedBeforeAFieldWasDroppedAndAddedAgainDoesNotWriteItsOldValue(t *testing.T) {
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recPop]("Rec"))
	r.persist(&recPop{ID: "a", Name: "A", Pop: 1.5})
	r.h.Drain(bg)
	r.persist(&recPop{ID: "a", Name: "A", Pop: 7.5}, &recPop{ID: "c", Name: "C", Pop: 3.5}) // queued, not sent
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec")) // pop dropped; nothing sent
	r.close()
	r.open(hikoutei.Entity[recPop]("Rec")) // pop added again: 0 for every record
	r.passes(10)
	r.noFailedWrites()
	r.shows("Rec_System", []string{"id", "name", "pop", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A", "0", "", "a"}, "c": {"c", "C", "0", "", "c"}})
	r.converged()
}

// I35 (and I28): a write of an entity that failed for good (a person
// changed its System row) and is then removed from the declaration has
// no correction: its tab is no longer the store's. The reconciliation
// supersedes it alone and goes on — it does not fail on the undeclared
// entity at every pass, which left every other tab's failed writes and
// drifted rows uncorrected for ever.
func TestI35_AFailedWriteOfARemovedEntityNeverHoldsReconciliationBack(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"), hikoutei.Entity[otherRec]("Other"))
	r.persist(&otherRec{ID: "o1", Label: "L"})
	r.h.Drain(bg)
	if err := r.sheet.Person().Type("Other_System", "B2", "changed"); err != nil { // label of o1
		t.Fatal(err)
	}
	u := r.s.Begin()
	if err := u.Remove(&otherRec{ID: "o1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(bg); err != nil {
		t.Fatal(err)
	}
	r.passes(3) // the delete meets the changed row: failed for good
	if out := r.h.Outbox(); out["failed"] != 1 {
		t.Fatalf("outbox %v, want the delete failed", out)
	}
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec")) // Other removed (it has no records)

	if err := r.sheet.Person().Type("Rec_System", "B2", "drifted"); err != nil { // name of a
		t.Fatal(err)
	}
	if _, err := r.h.Reconcile(bg); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	r.passes(3)
	r.shows("Rec_System", []string{"id", "name", "notes", anchorCol}, map[string][]string{"a": {"a", "A", "", "a"}, "b": {"b", "B", "", "b"}})
	r.converged()
}

// I22 (health is never ok while a row differs): an application write to
// an Input row that meets a person's unpolled edit of another cell is
// lost there (the row is the poller's to examine); when that edit is then
// a conflict the application resolves, the resolution's write of the row
// carries the lost value too. Before, the row then showed exactly what
// the store last wrote, so no poll looked at it again: the stale cell
// stayed, with nothing queued and health ok, until an anti-entropy pass.
func TestI22_AWriteLostOnAConflictedRowIsWrittenWithTheResolution(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(5)
	if err := r.sheet.Person().Type("Rec_Input", "B2", "typed"); err != nil { // notes of a
		t.Fatal(err)
	}
	r.persist(&recTag{ID: "a", Name: "A", Notes: "sys"})
	r.passes(3)
	if _, err := r.h.Poll(bg); err != nil {
		t.Fatal(err)
	}
	open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 {
		t.Fatalf("open conflicts %v %v", open, err)
	}
	r.persist(&recTag{ID: "a", Name: "A", Notes: "sys", Tag: "t2"}) // its Input write meets the edited row
	r.passes(3)
	if _, err := r.s.ResolveConflict(bg, open[0].ID, hikoutei.UseSheet); err != nil {
		t.Fatal(err)
	}
	r.passes(3)
	if _, err := r.h.Poll(bg); err != nil {
		t.Fatal(err)
	}
	r.passes(3)
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "typed", "t2", "a"}})
	r.converged()
}

// I35: a write of a field queued (not sent) before the field was dropped
// and added again is a write of the dropped field: it never lands in the
// new field's column. Were it sent there, the sheet would show the old
// value in the re-added column, and the next scan would take the store's
// own write for a person's edit and override what the application holds.
func TestI35_AWriteQueuedBeforeAFieldWasDroppedNeverFillsItsReAddedColumn(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "a", Name: "A", Notes: "old"}) // queued, not sent
	r.close()
	r.open(hikoutei.Entity[recOnlyName]("Rec")) // notes dropped; nothing sent
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec")) // notes added again: a's notes is ""
	r.passes(10)
	if _, err := r.h.FullScan(bg); err != nil {
		t.Fatal(err)
	}
	r.passes(3)
	if a, err := hikoutei.Get[recV1](bg, r.s, "a"); err != nil || a.Notes != "" {
		t.Fatalf("a = %+v %v: the dropped field's queued value came back", a, err)
	}
	r.shows("Rec_Input", []string{"id", "notes", anchorCol}, map[string][]string{"a": {"a", "", "a"}, "b": {"b", "", "b"}})
	r.shows("Rec_System", []string{"id", "name", "notes", anchorCol}, map[string][]string{"a": {"a", "A", "", "a"}})
	r.converged()
}

// I35: the quick poll re-examines, like the full scan, the quarantine a
// read under the old layout recorded once the tab follows a retype (int →
// float): 2.5, not an int, is accepted; "lots" stays quarantined under
// the new type. No full scan runs here.
func TestI35_TheQuickPollReexaminesQuarantineAfterAMigratedRetype(t *testing.T) {
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recRankUserInt]("Rec"))
	r.persist(&recRankUserInt{ID: "a", Name: "A", Rank: 1}, &recRankUserInt{ID: "b", Name: "B", Rank: 2})
	r.h.Drain(bg)
	for cell, text := range map[string]string{"B2": "2.5", "B3": "lots"} {
		if err := r.sheet.Person().Type("Rec_Input", cell, text); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := r.h.Poll(bg); err != nil || res.Stats.Quarantined != 2 {
		t.Fatalf("poll under the int type: %+v %v", res.Stats, err)
	}
	r.close()
	r.open(hikoutei.Entity[recRankUserFloat]("Rec"))
	r.passes(10)
	for range 2 {
		if _, err := r.h.Poll(bg); err != nil {
			t.Fatal(err)
		}
	}
	r.passes(3)
	if a, err := hikoutei.Get[recRankUserFloat](bg, r.s, "a"); err != nil || a.Rank != 2.5 {
		t.Fatalf("a = %+v %v: the quick poll left the cell quarantined under the old type", a, err)
	}
	if q := r.quarantined("Rec_Input"); len(q) != 1 || q["b"] != "cell_type_mismatch" {
		t.Fatalf("quarantine under the float type: %v", q)
	}
	r.shows("Rec_Input", []string{"id", "rank", anchorCol}, map[string][]string{"a": {"a", "2.5", "a"}, "b": {"b", "lots", "b"}})
}

// I06 (found by the evolution campaign): an update whose cells the row
// already shows — here the person typed the application's value into
// notes — on a row that also holds a person's unpolled edit of another
// cell (tag) is a guard failure, not a write that changed nothing: called
// unchanged, the row as it shows, the edit included, became the store's
// own write, so no poll read the edit and the application's next write
// (guarded by that hash) overwrote it. The edit now meets the next write
// as a conflict.
func TestI06_AnUpdateTheRowAlreadyShowsNeverTakesAPersonsOtherCell(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(10)
	person := r.sheet.Person()
	if err := person.Type("Rec_Input", "B3", "X"); err != nil { // notes of b
		t.Fatal(err)
	}
	if err := person.Type("Rec_Input", "C3", "Y"); err != nil { // tag of b
		t.Fatal(err)
	}
	r.persist(&recTag{ID: "b", Name: "B", Notes: "X"})
	r.passes(3)
	r.persist(&recTag{ID: "b", Name: "B", Notes: "X", Tag: "Z"})
	for range 3 {
		r.passes(3)
		if _, err := r.h.Poll(bg); err != nil {
			t.Fatal(err)
		}
	}
	open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].Field != "tag" || open[0].SheetValue != "Y" || open[0].SystemValue != "Z" {
		t.Fatalf("open conflicts %+v %v: the person's tag is not held as a conflict", open, err)
	}
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"b": {"b", "X", "Y", "b"}})
}

// An application write of one cell of an Input row meets a person's
// unpolled edit of another cell and is not made; the person then undoes
// the edit, so the row shows exactly what the store last wrote. Polls
// must still examine it and write the lost value, not skip it as
// unchanged (nothing queued, health ok until anti-entropy).
func TestI22_AWriteLostOnAnEditedRowIsWrittenAfterThePersonUndoesTheEdit(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(5)
	r.loseWrite("B2", "typed", &recTag{ID: "a", Name: "A", Tag: "t2"})   // notes of a; the write of tag
	if err := r.sheet.Person().Type("Rec_Input", "B2", ""); err != nil { // the person undoes the edit
		t.Fatal(err)
	}
	if _, err := r.h.Poll(bg); err != nil {
		t.Fatal(err)
	}
	r.passes(3)
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "", "t2", "a"}})
	r.converged()
}

// I35 (found by the evolution campaign, seed 1 run 43): a person's value
// typed again, while the store was closed, in a cell with an open
// conflict; the application's next write of the field resolves the
// conflict and rewrites the cell guarded by the row as it showed the
// conflict's candidate, which here is also the row the store last
// accepted (the same poll took the person's edit of another cell). The
// store had reopened with a shape that changes the Input tab's layout and
// closed before the tab followed; it reopens with the first shape again,
// so the tab shows the current layout while it still waits for its
// migration. That migration, recorded without a change of the sheet,
// must not move the rewrite's guard to the row as it shows now, the
// person's new value included: the rewrite would overwrite a value no
// poll read. The rewrite fails instead, and the value is decided as a
// conflict.
func TestI35_ARecoveredMigrationNeverLetsAQueuedWriteOverwriteAnUnpolledEdit(t *testing.T) {
	type recTagNameUser struct {
		ID    string `hikoutei:"id,pk"`
		Name  string `hikoutei:"name,user"`
		Notes string `hikoutei:"notes,user"`
		Tag   string `hikoutei:"tag,user"`
	}
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(5)
	person := r.sheet.Person()
	for cell, text := range map[string]string{"B2": "n1", "C2": "first"} { // notes and tag of a
		if err := person.Type("Rec_Input", cell, text); err != nil {
			t.Fatal(err)
		}
	}
	r.persist(&recTag{ID: "a", Name: "A", Tag: "app1"})
	r.passes(3)
	if _, err := r.h.Poll(bg); err != nil { // accepts notes, holds tag as a conflict
		t.Fatal(err)
	}
	if open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen); err != nil || len(open) != 1 || open[0].SheetValue != "first" {
		t.Fatalf("open conflicts %+v %v", open, err)
	}
	r.close()
	r.open(hikoutei.Entity[recTagNameUser]("Rec")) // name editable: Input waits for its migration
	r.close()
	if err := person.Type("Rec_Input", "C2", "second"); err != nil { // typed again, never polled
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recTag]("Rec"))                           // the tab shows this layout again, and waits
	r.persist(&recTag{ID: "a", Name: "A", Notes: "n1", Tag: "app2"}) // resolves the conflict: rewrites the cell
	for range 3 {
		r.passes(3)
		if _, err := r.h.Poll(bg); err != nil {
			t.Fatal(err)
		}
	}
	open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].Field != "tag" || open[0].SheetValue != "second" || open[0].SystemValue != "app2" {
		t.Fatalf("open conflicts %+v %v: the person's tag is not held as a conflict", open, err)
	}
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "n1", "second", "a"}})
}

// I22 and I35: a write lost on an edited row, the edit undone: the row
// shows what the store last wrote, and the poll still reads it and queues
// the rewrite of the stale cell, guarded by the row it read — the row
// the store expects. The store closes before the rewrite is sent,
// reopens with a shape that changes the Input tab's layout and closes
// again before the tab follows; a person then types a newer value into
// the stale cell; the store reopens with the first shape, so the tab's
// migration is recorded without a change of the sheet. The rewrite must
// not be moved onto the row as it shows now: it would overwrite the newer
// value, which no poll read. It fails instead, and the newer value is
// decided as a conflict.
func TestI22_TheRewriteOfALostWriteNeverOverwritesANewerEditAcrossARecoveredMigration(t *testing.T) {
	type recTagNameUser struct {
		ID    string `hikoutei:"id,pk"`
		Name  string `hikoutei:"name,user"`
		Notes string `hikoutei:"notes,user"`
		Tag   string `hikoutei:"tag,user"`
	}
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(5)
	r.loseWrite("B2", "n1", &recTag{ID: "a", Name: "A", Tag: "t2"}) // notes of a; the write of tag
	person := r.sheet.Person()
	if err := person.Type("Rec_Input", "B2", ""); err != nil { // the person undoes the edit
		t.Fatal(err)
	}
	if res, err := r.h.Poll(bg); err != nil || res.Stats.Events == 0 { // queues the rewrite of tag
		t.Fatalf("poll: %+v %v", res.Stats, err)
	}
	r.close()
	r.open(hikoutei.Entity[recTagNameUser]("Rec")) // name editable: Input waits for its migration
	r.close()
	if err := person.Type("Rec_Input", "C2", "newer"); err != nil { // tag of a, never polled
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recTag]("Rec"))
	for range 3 {
		r.passes(3)
		if _, err := r.h.Poll(bg); err != nil {
			t.Fatal(err)
		}
	}
	open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].Field != "tag" || open[0].SheetValue != "newer" || open[0].SystemValue != "t2" {
		t.Fatalf("open conflicts %+v %v: the person's newer tag is not held as a conflict", open, err)
	}
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "", "newer", "a"}})
}
