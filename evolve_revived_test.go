package hikoutei_test

import (
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// Found by the evolution campaign (seed 3, run 48).

type recTagNotesSys struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes"`
	Tag   string `hikoutei:"tag,user"`
}

type recTagByCode struct {
	Code  string `hikoutei:"code,pk"`
	Ref   string `hikoutei:"ref"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
	Tag   string `hikoutei:"tag,user"`
}

// openMigrated opens the rig's store with one migration.
func (r *shapeRig) openMigrated(m hikoutei.Migration, defs ...hikoutei.EntityDef) {
	r.t.Helper()
	s, err := hikoutei.Open(bg, r.dir, hikoutei.Options{Sync: r.sheet.SyncOptions(), NoAdmin: true, Migrations: []hikoutei.Migration{m}}, defs...)
	if err != nil {
		r.t.Fatal(err)
	}
	r.s = s
	r.t.Cleanup(func() { s.Close() })
	r.h = hikouteitest.New(r.t, s)
}

// I35: an Input row kept for review when a migration moved its record to
// another key loses its key cell, and a column new to the tab meanwhile
// (here notes, made editable again) is left blank on it. When a later
// migration brings a record of that key back, the row is that record's
// again: its blank cells are no person's values. The migration fills
// them with canonical state; before, it kept them, and the next poll took
// the blank notes cell for a person's edit and overwrote the value the
// application committed with "".
func TestI35_ARowKeptForReviewThatARecordTakesBackNeverBlanksItsValues(t *testing.T) {
	t.Parallel()
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.persist(&recTag{ID: "a", Name: "A", Notes: "n-a"}, &recTag{ID: "b", Name: "B", Notes: "n-b"})
	r.h.Drain(bg)
	r.close()
	r.open(hikoutei.Entity[recTagNotesSys]("Rec")) // notes no longer editable: it leaves Rec_Input
	r.passes(10)
	r.close()
	r.shows("Rec_Input", []string{"id", "tag", anchorCol}, nil)
	if err := r.sheet.Person().Type("Rec_Input", "B2", "typed"); err != nil { // tag of a, never polled
		t.Fatal(err)
	}
	r.openMigrated(hikoutei.Migrate[recTagNotesSys, recTagByCode]("Rec", "by-code", func(o recTagNotesSys) (recTagByCode, error) {
		return recTagByCode{Code: "k" + o.ID, Ref: o.ID, Name: o.Name, Notes: o.Notes, Tag: o.Tag}, nil
	}), hikoutei.Entity[recTagByCode]("Rec"))
	r.passes(10)
	r.h.Reconcile(bg)
	r.passes(10)
	r.close()
	r.openMigrated(hikoutei.Migrate[recTagByCode, recTag]("Rec", "by-id", func(o recTagByCode) (recTag, error) {
		return recTag{ID: strings.TrimPrefix(o.Code, "k"), Name: o.Name, Notes: o.Notes, Tag: o.Tag}, nil
	}), hikoutei.Entity[recTag]("Rec"))
	for range 3 {
		r.passes(10)
		if _, err := r.h.Poll(bg); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := hikoutei.Get[recTag](bg, r.s, "a"); err != nil || a.Notes != "n-a" {
		t.Fatalf("a = %+v %v, want the notes the application committed", a, err)
	}
	if b, err := hikoutei.Get[recTag](bg, r.s, "b"); err != nil || b.Notes != "n-b" {
		t.Fatalf("b = %+v %v", b, err)
	}
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{
		"a": {"a", "n-a", "typed", "a"}, "b": {"b", "n-b", "", "b"}})
}
