package engine_test

import (
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

type otherRec struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

// I28 (found by the evolution campaign, seed 105 run 9): the operator
// removes every record of an entity, the store closes before the deletes
// are written, and opens without the entity: the deletes are not written
// (the tabs are no longer the store's). When the entity is declared
// again, its tabs still show the rows of the removed records. Health said
// ok there until the next reconciliation; the rows are surplus, so the
// tabs are diverged until anti-entropy (System) and the cleanup (Input)
// delete them, then ok.
func TestI28_HealthIsNotOKWhileAReaddedEntitysTabsShowRowsOfRemovedRecords(t *testing.T) {
	t.Parallel()
	r := newLayoutRig(t)
	both := []hikoutei.EntityDef{hikoutei.Entity[notesAndTag]("Rec"), hikoutei.Entity[otherRec]("Other")}
	r.open(nil, both...)
	commit(t, r.s, &notesAndTag{ID: "a", Notes: "n"}, &otherRec{ID: "x", Name: "X"}, &otherRec{ID: "y", Name: "Y"})
	r.passes(3)
	u := r.s.Begin()
	mustT(t, u.Remove(&otherRec{ID: "x"}))
	mustT(t, u.Remove(&otherRec{ID: "y"}))
	_, err := u.Commit(r.t.Context())
	mustT(t, err)
	r.close()
	r.open(nil, hikoutei.Entity[notesAndTag]("Rec"))
	r.passes(3)
	_, err = r.h.Reconcile(r.t.Context()) // supersedes the failed deletes
	mustT(t, err)
	if n := r.h.Unsettled(); n != 0 {
		t.Fatalf("%d effects unsettled without Other (outbox %v)", n, r.h.Outbox())
	}
	r.close()
	r.open(nil, both...)
	r.passes(3)
	for _, tab := range []string{"Other_System", "Other_Input"} {
		got, err := r.sheet.Person().Displayed(tab)
		mustT(t, err)
		if len(got) != 3 {
			t.Fatalf("%s after Other came back: %q, want the removed records' rows still shown", tab, got)
		}
		if th := r.state(tab); th.State != hikoutei.SyncDiverged || th.Diverged != 2 {
			t.Fatalf("%s shows 2 rows of removed records, and health says %+v", tab, th)
		}
	}
	_, err = r.h.Reconcile(r.t.Context())
	mustT(t, err)
	r.passes(3)
	if th := r.state("Other_Input"); th.State != hikoutei.SyncDiverged || th.Diverged != 2 {
		t.Fatalf("Other_Input still shows 2 rows of removed records (the cleanup's), and after a pass health says %+v", th)
	}
	_, err = r.h.Cleanup(r.t.Context())
	mustT(t, err)
	r.passes(3)
	for _, tab := range []string{"Other_System", "Other_Input"} {
		got, err := r.sheet.Person().Displayed(tab)
		mustT(t, err)
		if len(got) != 1 {
			t.Fatalf("%s after anti-entropy and cleanup: %q", tab, got)
		}
	}
	_, err = r.h.Reconcile(r.t.Context())
	mustT(t, err)
	for _, tab := range []string{"Other_System", "Other_Input", "Rec_System", "Rec_Input"} {
		if th := r.state(tab); th.State != hikoutei.SyncOK || th.Diverged != 0 {
			t.Fatalf("%s once the rows are deleted: %+v", tab, th)
		}
	}
}
