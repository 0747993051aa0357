package hikoutei_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// noteV1 has a user-editable field people can conflict on.
type noteV1 struct {
	ID   string `hikoutei:"id,pk"`
	Body string `hikoutei:"body"`
	Note string `hikoutei:"note,user"`
}

// noteCell is the A1 cell of a row's note on Note_Input.
func noteCell(t *testing.T, sheet *hikouteitest.Sheet, id string) string {
	t.Helper()
	rows, err := sheet.Person().Displayed("Note_Input")
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "note")
	for i, r := range rows {
		if col >= 0 && len(r) > 0 && r[len(r)-1] == id {
			return fmt.Sprintf("%c%d", 'A'+col, i+1)
		}
	}
	t.Fatalf("no row %s", id)
	return ""
}

// openConflictOnNote leaves dir with one open conflict on record 1's note.
func openConflictOnNote(t *testing.T, dir string, sheet *hikouteitest.Sheet) {
	t.Helper()
	ctx := context.Background()
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true}, hikoutei.Entity[noteV1]("Note"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := hikouteitest.New(t, s)
	persist := func(n ...*noteV1) {
		u := s.Begin()
		for _, x := range n {
			if err := u.Persist(x); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := u.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	persist(&noteV1{ID: "1", Body: "b1", Note: "first"}, &noteV1{ID: "2", Body: "b2"})
	h.Drain(ctx)
	persist(&noteV1{ID: "1", Body: "b1", Note: "system"})
	if err := sheet.Person().Type("Note_Input", noteCell(t, sheet, "1"), "person"); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	if _, err := h.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	open, err := s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].Field != "note" {
		t.Fatalf("open conflicts %+v %v", open, err)
	}
}

// A conflict on a field the new declaration drops ends in the change's
// unit (resolution shape_changed, the canonical value standing); one on a
// renamed field follows it to its new name.
func TestI35_AConflictOnADroppedFieldEndsWithTheChange(t *testing.T) {
	t.Parallel()
	type noteV2 struct {
		ID   string `hikoutei:"id,pk"`
		Body string `hikoutei:"body"`
	}
	type noteRenamed struct {
		ID      string `hikoutei:"id,pk"`
		Body    string `hikoutei:"body"`
		Comment string `hikoutei:"comment,user,was=note"`
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		def  hikoutei.EntityDef
		want func(t *testing.T, s *hikoutei.Store)
	}{
		{"dropped", hikoutei.Entity[noteV2]("Note"), func(t *testing.T, s *hikoutei.Store) {
			done, err := s.Conflicts(ctx, hikoutei.ConflictResolved)
			if err != nil || len(done) != 1 || done[0].Resolution != events.ResolutionShapeChanged || done[0].Field != "note" {
				t.Fatalf("resolved conflicts %+v %v", done, err)
			}
		}},
		{"renamed", hikoutei.Entity[noteRenamed]("Note"), func(t *testing.T, s *hikoutei.Store) {
			open, err := s.Conflicts(ctx, hikoutei.ConflictOpen)
			if err != nil || len(open) != 1 || open[0].Field != "comment" {
				t.Fatalf("open conflicts %+v %v", open, err)
			}
			n, err := hikoutei.Get[noteRenamed](ctx, s, "1")
			if err != nil || n.Comment != "system" {
				t.Fatalf("Get 1: %+v %v", n, err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
			openConflictOnNote(t, dir, sheet)
			s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true}, c.def)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c.want(t, s)
		})
	}
}

// A migration that moves a record with an open conflict to another key
// is refused (removing it would lose the conflict), and writes nothing.
func TestI35_AKeyChangeOfARecordWithAnOpenConflictIsRefused(t *testing.T) {
	t.Parallel()
	type byBody struct {
		Body string `hikoutei:"body,pk"`
		ID   string `hikoutei:"id"`
		Note string `hikoutei:"note,user"`
	}
	ctx := context.Background()
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	openConflictOnNote(t, dir, sheet)
	m := hikoutei.Migrate[noteV1, byBody]("Note", "by-body", func(o noteV1) (byBody, error) {
		return byBody{Body: o.Body, ID: o.ID, Note: o.Note}, nil
	})
	_, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true, Migrations: []hikoutei.Migration{m}},
		hikoutei.Entity[byBody]("Note"))
	var me *hikoutei.MigrationError
	if !errors.Is(err, hikoutei.ErrMigrationFailed) || !errors.Is(err, hikoutei.ErrConflictOpen) || !errors.As(err, &me) || me.Key != "1" {
		t.Fatalf("Open: %v", err)
	}
}

// With sync on, a migration's output is queued for the spreadsheet like
// any commit.
func TestI35_AMigrationsOutputIsQueuedForTheSheet(t *testing.T) {
	type noteLen struct {
		ID   string `hikoutei:"id,pk"`
		Body int64  `hikoutei:"body"`
		Note string `hikoutei:"note,user"`
	}
	ctx := context.Background()
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	opts := hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true}
	s, err := hikoutei.Open(ctx, dir, opts, hikoutei.Entity[noteV1]("Note"))
	if err != nil {
		t.Fatal(err)
	}
	h := hikouteitest.New(t, s)
	u := s.Begin()
	u.Persist(&noteV1{ID: "1", Body: "four"})
	u.Persist(&noteV1{ID: "2", Body: "seven"})
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	if n := h.Unsettled(); n != 0 {
		t.Fatalf("%d effects unsettled after the drain", n)
	}
	s.Close()
	opts.Migrations = []hikoutei.Migration{hikoutei.Migrate[noteV1, noteLen]("Note", "v2", func(o noteV1) (noteLen, error) {
		return noteLen{ID: o.ID, Body: int64(len(o.Body)), Note: o.Note}, nil
	})}
	s, err = hikoutei.Open(ctx, dir, opts, hikoutei.Entity[noteLen]("Note"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h = hikouteitest.New(t, s)
	if n := h.Unsettled(); n < 2 {
		t.Errorf("%d effects queued by the migration, want one per row at least", n)
	}
	n, err := hikoutei.Get[noteLen](ctx, s, "2")
	if err != nil || n.Body != 5 {
		t.Errorf("Get 2: %+v %v", n, err)
	}
}
