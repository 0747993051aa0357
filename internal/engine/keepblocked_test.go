package engine_test

import (
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

type notesAndTag struct {
	ID    string `hikoutei:"id,pk"`
	Notes string `hikoutei:"notes,user"`
	Tag   string `hikoutei:"tag,user"`
}

// I28 (found by the evolution campaign, seed 102 run 16): a conflict on
// a's notes is open; the person then edits another cell of the row (tag,
// accepted), and the application resolves keep_system. The resolution's
// write, guarded by the candidate-time row, is blocked (blocked_candidate)
// and the row still shows the value the resolution refused. Health said
// ok while it did, until the next anti-entropy pass; it is diverged now,
// a poll does not take the refused value again (no new conflict), and the
// anti-entropy pass writes canonical state there.
func TestI28_HealthIsNotOKWhileAKeepSystemWriteWasBlockedAndTheRowShowsTheRefusedValue(t *testing.T) {
	t.Parallel()
	r := newLayoutRig(t)
	r.open(nil, hikoutei.Entity[notesAndTag]("Rec"))
	commit(t, r.s, &notesAndTag{ID: "a", Notes: "first", Tag: "t0"})
	r.passes(3)
	r.typeInto("Rec_Input", "B2", "typed")                            // notes of a
	commit(t, r.s, &notesAndTag{ID: "a", Notes: "second", Tag: "t0"}) // meets the person's value
	r.passes(3)
	r.poll()
	r.passes(3)
	cs := r.openConflicts(1)
	r.typeInto("Rec_Input", "C2", "t1") // tag of a: accepted
	r.poll()
	r.passes(3)
	if _, err := r.s.ResolveConflict(r.t.Context(), cs[0].ID, hikoutei.KeepSystem); err != nil {
		t.Fatal(err)
	}
	r.passes(3)
	if out := r.h.Outbox(); out["blocked_candidate"] != 1 {
		t.Fatalf("outbox %v: want the resolution's write blocked", out)
	}
	notes := []string{"id", "notes", "tag", anchorHeader}
	if row := r.row("Rec_Input", notes, "a"); row[1] != "typed" {
		t.Fatalf("a's Input row after the blocked write: %q", row)
	}
	if th := r.state("Rec_Input"); th.State != hikoutei.SyncDiverged || th.Diverged != 1 {
		t.Fatalf("Rec_Input shows the value keep_system refused, and health says %+v", th)
	}
	r.poll()
	r.passes(3)
	r.openConflicts(0)
	if th := r.state("Rec_Input"); th.State != hikoutei.SyncDiverged {
		t.Fatalf("Rec_Input after a poll: %+v", th)
	}
	_, err := r.h.Reconcile(r.t.Context())
	mustT(t, err)
	r.passes(3)
	if row := r.row("Rec_Input", notes, "a"); row[1] != "second" || row[2] != "t1" {
		t.Fatalf("a's Input row after anti-entropy: %q", row)
	}
	r.converged()
}
