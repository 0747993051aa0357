package hikoutei_test

import (
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
