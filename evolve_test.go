package hikoutei

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// The versions of the entity Rec{id pk, name, notes user}.
type (
	recV1 struct {
		ID    string `hikoutei:"id,pk"`
		Name  string `hikoutei:"name"`
		Notes string `hikoutei:"notes,user"`
	}
	recPop struct { // add a field
		ID    string  `hikoutei:"id,pk"`
		Name  string  `hikoutei:"name"`
		Notes string  `hikoutei:"notes,user"`
		Pop   float64 `hikoutei:"pop"`
	}
	recTag struct { // add a user field
		ID    string `hikoutei:"id,pk"`
		Name  string `hikoutei:"name"`
		Notes string `hikoutei:"notes,user"`
		Tag   string `hikoutei:"tag,user"`
	}
	recNoName struct { // drop name
		ID    string `hikoutei:"id,pk"`
		Notes string `hikoutei:"notes,user"`
	}
	recUserName struct { // make name user-editable
		ID    string `hikoutei:"id,pk"`
		Name  string `hikoutei:"name,user"`
		Notes string `hikoutei:"notes,user"`
	}
	recFloat struct { // retype name text → float64
		ID    string  `hikoutei:"id,pk"`
		Name  float64 `hikoutei:"name"`
		Notes string  `hikoutei:"notes,user"`
	}
	recTitle struct { // rename name → title
		ID    string `hikoutei:"id,pk"`
		Title string `hikoutei:"title,was=name"`
		Notes string `hikoutei:"notes,user"`
	}
	other struct { // a second entity
		Code string `hikoutei:"code,pk"`
		Size int64  `hikoutei:"size"`
	}
)

// evolveStore is a store directory reopened with changing declarations.
type evolveStore struct {
	t        *testing.T
	dir      string
	logs     bytes.Buffer
	seedHead uint64 // the last sequence of the seed's commit
}

func newEvolveStore(t *testing.T) *evolveStore { return &evolveStore{t: t, dir: t.TempDir()} }

func (es *evolveStore) options(migrations ...Migration) Options {
	return Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true, Migrations: migrations,
		Logger: slog.New(slog.NewTextHandler(&es.logs, nil))}
}

// open opens the store with defs; it fails the test on an error.
func (es *evolveStore) open(opts Options, defs ...EntityDef) *Store {
	es.t.Helper()
	s, err := Open(es.t.Context(), es.dir, opts, defs...)
	if err != nil {
		es.t.Fatal(err)
	}
	return s
}

// seed writes a: "Alpha", b: "Bravo" with the first declaration.
func (es *evolveStore) seed() {
	es.t.Helper()
	s := es.open(es.options(), Entity[recV1]("Rec"))
	res := commit(es.t, s, &recV1{ID: "a", Name: "Alpha", Notes: "n-a"}, &recV1{ID: "b", Name: "Bravo", Notes: "n-b"})
	es.seedHead = res.LastSeq
	mustT(es.t, s.Close())
}

// schemaStream reads the schema stream's events.
func (es *evolveStore) schemaStream() []events.Event {
	es.t.Helper()
	l, err := events.OpenLog(filepath.Join(es.dir, events.LogFileName), events.Options{ReadOnly: true})
	mustT(es.t, err)
	defer l.Close()
	var out []events.Event
	mustT(es.t, l.ReadStream(events.SchemaStream, 1, func(e events.Event) error { out = append(out, e); return nil }))
	return out
}

// storeFiles lists the store directory.
func (es *evolveStore) storeFiles() []string {
	ents, err := os.ReadDir(es.dir)
	mustT(es.t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// checkRebuildEqualsLive replays the closed store's log and compares the
// read models (I23).
func (es *evolveStore) checkRebuildEqualsLive() {
	es.t.Helper()
	target := filepath.Join(es.t.TempDir(), "replayed.sqlite")
	_, err := Replay(es.t.Context(), es.dir, target, ReplayOptions{})
	mustT(es.t, err)
	var live, rebuilt bytes.Buffer
	mustT(es.t, projector.Dump(filepath.Join(es.dir, ReadModelFile), &live))
	mustT(es.t, projector.Dump(target, &rebuilt))
	if live.String() != rebuilt.String() {
		es.t.Fatalf("rebuild differs from the live read model:\nlive:\n%s\nrebuilt:\n%s", live.String(), rebuilt.String())
	}
}

// noSetAside fails when the store kept an unusable read model or a
// half-migrated one.
func (es *evolveStore) noSetAside() {
	es.t.Helper()
	for _, f := range es.storeFiles() {
		if strings.Contains(f, ".unusable-") || strings.HasSuffix(f, ".migrate") {
			es.t.Errorf("the store kept %s", f)
		}
	}
	if strings.Contains(es.logs.String(), "level=WARN") {
		es.t.Errorf("a warning was logged:\n%s", es.logs.String())
	}
}

func TestI35_RetypeTextToFloatIsRefusedNamingTheRecordsNeverTheValues(t *testing.T) {
	es := newEvolveStore(t)
	es.seed()
	before := es.schemaStream()
	_, err := Open(t.Context(), es.dir, es.options(), Entity[recFloat]("Rec"))
	if !errors.Is(err, ErrShapeIncompatible) {
		t.Fatalf("Open with name retyped to float64: %v, want shape_change_incompatible", err)
	}
	var sce *ShapeChangeError
	if !errors.As(err, &sce) || len(sce.Refused) != 1 {
		t.Fatalf("error %T %v", err, err)
	}
	want := ShapeIncompatibility{Entity: "Rec", Field: "name", Change: events.ChangeFieldRetyped, From: "string", To: "float", Records: 2, FirstKeys: []string{"a", "b"}}
	if !reflect.DeepEqual(sce.Refused[0], want) {
		t.Errorf("refused %+v, want %+v", sce.Refused[0], want)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "shape_change_incompatible: ") || !strings.Contains(msg, "Rec.name") || !strings.Contains(msg, "2 record(s) (a, b)") {
		t.Errorf("message %q", msg)
	}
	if strings.Contains(msg, "Alpha") || strings.Contains(msg, "Bravo") {
		t.Errorf("the message shows a value: %q", msg)
	}
	if after := es.schemaStream(); len(after) != len(before) {
		t.Errorf("the refusal wrote %d schema events", len(after)-len(before))
	}
	for _, f := range es.storeFiles() {
		if f == events.LeaseFileName || strings.HasSuffix(f, ".migrate") || strings.Contains(f, ".unusable-") {
			t.Errorf("the refused Open left %s", f)
		}
	}
	s := es.open(es.options(), Entity[recV1]("Rec")) // the old build still opens it
	defer s.Close()
	got, err := Get[recV1](ctx, s, "a")
	if err != nil || got.Name != "Alpha" {
		t.Fatalf("Get a after the refusal: %+v %v", got, err)
	}
}

// nameLength is the migration of the retype: a name becomes its length.
func nameLength(old recV1) (recFloat, error) {
	return recFloat{ID: old.ID, Name: float64(len(old.Name)), Notes: old.Notes}, nil
}

func TestI35_RetypeTextToFloatWithAMigration(t *testing.T) {
	es := newEvolveStore(t)
	es.seed()
	m := Migrate[recV1, recFloat]("Rec", "v2", nameLength)
	s := es.open(es.options(m), Entity[recFloat]("Rec"))
	for id, want := range map[string]float64{"a": 5, "b": 5} {
		got, err := Get[recFloat](ctx, s, id)
		if err != nil || got.Name != want || got.Notes != "n-"+id {
			t.Errorf("Get %s: %+v %v", id, got, err)
		}
	}
	commit(t, s, &recFloat{ID: "c", Name: 1.5})
	mustT(t, s.Close())
	stream := es.schemaStream()
	var changed events.SchemaChanged
	for _, e := range stream {
		if c, ok := e.Payload.(events.SchemaChanged); ok {
			changed = c
		}
	}
	if len(changed.Migrations) != 1 || changed.Migrations[0] != (events.MigrationRun{Entity: "Rec", Version: "v2", Records: 2}) ||
		len(changed.Changes) != 1 || changed.Changes[0].Migration != "Rec/v2" {
		t.Fatalf("the recorded change: %+v", changed)
	}
	if actors := es.actors("Rec"); !slices.Equal(actors, []events.Actor{"", "", "migration:Rec/v2", "migration:Rec/v2", ""}) {
		t.Errorf("actors of the persists: %q", actors)
	}
	s = es.open(es.options(m), Entity[recFloat]("Rec")) // recorded: not run again
	mustT(t, s.Close())
	if actors := es.actors("Rec"); len(actors) != 5 {
		t.Errorf("the migration ran again: %q", actors)
	}
	es.noSetAside()
	es.checkRebuildEqualsLive()
}

// actors lists the actor of every entity.persisted of entity, in log order.
func (es *evolveStore) actors(entity string) []events.Actor {
	es.t.Helper()
	l, err := events.OpenLog(filepath.Join(es.dir, events.LogFileName), events.Options{ReadOnly: true})
	mustT(es.t, err)
	defer l.Close()
	var out []events.Actor
	mustT(es.t, l.ReadFrom(1, func(e events.Event) error {
		if p, ok := e.Payload.(events.EntityPersisted); ok && p.Entity == entity {
			out = append(out, p.Actor)
		}
		return nil
	}))
	return out
}

// fieldOwner reads a field's owner from the read model's canonical state.
func fieldOwner(t *testing.T, s *Store, entity, id, field string) string {
	t.Helper()
	conn, err := s.e.ReadConn(ctx)
	mustT(t, err)
	defer s.e.PutConn(conn)
	owner := ""
	err = sqlitexExec(conn, "SELECT owner FROM hk_field_state WHERE entity = ? AND id = ? AND field = ?", func(v string) { owner = v }, entity, id, field)
	mustT(t, err)
	return owner
}

// Each row of the table, through the API: the store reopened with
// the changed declaration opens without a warning or a set-aside read
// model, logs the change, and reads every record right; a rebuild equals
// the live read model.
func TestI35_EachChangeOfTheTableReadsRight(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		defs   []EntityDef
		change string // what the INFO line names
		check  func(t *testing.T, s *Store)
	}{
		{"add a field", []EntityDef{Entity[recPop]("Rec")}, "Rec.pop field_added", func(t *testing.T, s *Store) {
			a, err := Get[recPop](ctx, s, "a")
			if err != nil || *a != (recPop{ID: "a", Name: "Alpha", Notes: "n-a"}) {
				t.Errorf("Get a: %+v %v", a, err)
			}
			commit(t, s, &recPop{ID: "c", Name: "Charlie", Pop: 3.5})
			got, err := Find[recPop](ctx, s, WhereCmp("pop", Gt, 1))
			if err != nil || len(got) != 1 || got[0].ID != "c" {
				t.Errorf("Find pop > 1: %v %v", got, err)
			}
		}},
		{"add a user field", []EntityDef{Entity[recTag]("Rec")}, "Rec.tag field_added", func(t *testing.T, s *Store) {
			commit(t, s, &recTag{ID: "a", Name: "Alpha", Notes: "n-a", Tag: "x"})
			got, err := Find[recTag](ctx, s, OrderBy("id"))
			if err != nil || len(got) != 2 || got[0].Tag != "x" || got[1].Tag != "" || got[1].Name != "Bravo" {
				t.Errorf("Find: %+v %v", got, err)
			}
			if o := fieldOwner(t, s, "Rec", "a", "tag"); o != "user" {
				t.Errorf("tag's owner %q", o)
			}
		}},
		{"drop a field", []EntityDef{Entity[recNoName]("Rec")}, "Rec.name field_dropped", func(t *testing.T, s *Store) {
			b, err := Get[recNoName](ctx, s, "b")
			if err != nil || *b != (recNoName{ID: "b", Notes: "n-b"}) {
				t.Errorf("Get b: %+v %v", b, err)
			}
			if _, err := Find[recNoName](ctx, s, Where("name", "Alpha")); !errors.Is(err, ErrUnknownField) {
				t.Errorf("Find by the dropped field: %v", err)
			}
			if o := fieldOwner(t, s, "Rec", "a", "name"); o != "" {
				t.Errorf("the dropped field still has canonical state (owner %q)", o)
			}
		}},
		{"make a field user-editable", []EntityDef{Entity[recUserName]("Rec")}, "Rec.name owner_changed system→user", func(t *testing.T, s *Store) {
			a, err := Get[recUserName](ctx, s, "a")
			if err != nil || a.Name != "Alpha" {
				t.Errorf("Get a: %+v %v", a, err)
			}
			if o := fieldOwner(t, s, "Rec", "a", "name"); o != "user" {
				t.Errorf("name's owner %q", o)
			}
		}},
		{"rename with was=", []EntityDef{Entity[recTitle]("Rec")}, "Rec.title field_renamed name→title", func(t *testing.T, s *Store) {
			got, err := Find[recTitle](ctx, s, Where("title", "Bravo"))
			if err != nil || len(got) != 1 || *got[0] != (recTitle{ID: "b", Title: "Bravo", Notes: "n-b"}) {
				t.Errorf("Find title = Bravo: %+v %v", got, err)
			}
		}},
		{"add an entity", []EntityDef{Entity[recV1]("Rec"), Entity[other]("Other")}, "Other entity_added", func(t *testing.T, s *Store) {
			commit(t, s, &other{Code: "x", Size: 7})
			o, err := Get[other](ctx, s, "x")
			a, err2 := Get[recV1](ctx, s, "a")
			if err != nil || err2 != nil || o.Size != 7 || a.Name != "Alpha" {
				t.Errorf("Get: %+v %v %+v %v", o, err, a, err2)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es := newEvolveStore(t)
			es.seed()
			s := es.open(es.options(), c.defs...)
			c.check(t, s)
			mustT(t, s.Close())
			if logs := es.logs.String(); !strings.Contains(logs, "level=INFO msg=\"entity shapes changed") || !strings.Contains(logs, c.change) {
				t.Errorf("no INFO line naming %q:\n%s", c.change, logs)
			}
			if strings.Contains(es.logs.String(), "Alpha") {
				t.Errorf("a value was logged:\n%s", es.logs.String())
			}
			es.noSetAside()
			es.checkRebuildEqualsLive()
		})
	}
}

// A sequence of changes with commits in between: every reopen reads the
// records under their newest names and kinds, a rebuild equals the live
// read model after each step (I23), and a replay of the log gives the
// same read model.
func TestI35_RebuildEqualsLiveAfterASequenceOfChanges(t *testing.T) {
	type v2 struct { // title was name; pop added; notes kept
		ID    string `hikoutei:"id,pk"`
		Title string `hikoutei:"title,was=name"`
		Notes string `hikoutei:"notes,user"`
		Pop   int64  `hikoutei:"pop"`
	}
	type v3 struct { // pop widened to float, label was title (was name), notes dropped, order changed
		ID    string  `hikoutei:"id,pk"`
		Pop   float64 `hikoutei:"pop"`
		Label string  `hikoutei:"label,was=title,was=name"`
	}
	type v4 struct { // pop nullable, label user-editable
		ID    string   `hikoutei:"id,pk"`
		Pop   *float64 `hikoutei:"pop"`
		Label string   `hikoutei:"label,user"`
	}
	es := newEvolveStore(t)
	es.seed()
	s := es.open(es.options(), Entity[v2]("Rec"))
	commit(t, s, &v2{ID: "a", Title: "Alpha", Notes: "n-a", Pop: 1 << 40}, &v2{ID: "c", Title: "Charlie", Pop: 3})
	mustT(t, s.Close())
	es.checkRebuildEqualsLive()
	s = es.open(es.options(), Entity[v3]("Rec"))
	got, err := Find[v3](ctx, s, OrderBy("id"))
	want := []v3{{ID: "a", Pop: 1 << 40, Label: "Alpha"}, {ID: "b", Label: "Bravo"}, {ID: "c", Pop: 3, Label: "Charlie"}}
	if err != nil || len(got) != 3 || *got[0] != want[0] || *got[1] != want[1] || *got[2] != want[2] {
		t.Fatalf("v3 Find: %+v %v", got, err)
	}
	commit(t, s, &v3{ID: "b", Pop: 0.5, Label: "Bravo2"})
	mustT(t, s.Close())
	es.checkRebuildEqualsLive()
	s = es.open(es.options(), Entity[v4]("Rec"))
	b, err := Get[v4](ctx, s, "b")
	if err != nil || b.Pop == nil || *b.Pop != 0.5 || b.Label != "Bravo2" {
		t.Fatalf("v4 Get b: %+v %v", b, err)
	}
	view, err := s.AsOf(ctx, AtSeq(es.seedHead))
	mustT(t, err)
	old, err := Get[v4](ctx, view, "a")
	if err != nil || old.Label != "Alpha" || old.Pop != nil {
		t.Errorf("as of the first commit, a reads %+v %v; want its name under the newest name", old, err)
	}
	mustT(t, view.Close())
	mustT(t, s.Close())
	es.noSetAside()
	es.checkRebuildEqualsLive()
	if n := len(es.schemaStream()); n != 7 { // declared + 3 × (changed, declared)
		t.Errorf("the schema stream holds %d events, want 7", n)
	}
}

// sqlitexExec runs a one-column query, calling fn with each row's text.
func sqlitexExec(conn *sqlite.Conn, q string, fn func(string), args ...any) error {
	return sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: args, ResultFunc: func(st *sqlite.Stmt) error { fn(st.ColumnText(0)); return nil }})
}

// recKeyed is Rec keyed by its name instead of its id (another primary
// key): the id becomes a field.
type recKeyed struct {
	Name  string `hikoutei:"name,pk"`
	OldID string `hikoutei:"old_id"`
	Notes string `hikoutei:"notes,user"`
}

func TestI35_KeyChangeIsRefusedWithoutAMigrationAndMovesRecordsWithOne(t *testing.T) {
	es := newEvolveStore(t)
	es.seed()
	_, err := Open(t.Context(), es.dir, es.options(), Entity[recKeyed]("Rec"))
	var sce *ShapeChangeError
	if !errors.As(err, &sce) || sce.Refused[0].Change != events.ChangeKeyChanged || sce.Refused[0].Records != 2 {
		t.Fatalf("Open with another key: %v", err)
	}
	m := Migrate[recV1, recKeyed]("Rec", "by-name", func(o recV1) (recKeyed, error) {
		return recKeyed{Name: strings.ToLower(o.Name), OldID: o.ID, Notes: o.Notes}, nil
	})
	s := es.open(es.options(m), Entity[recKeyed]("Rec"))
	got, err := Find[recKeyed](ctx, s, OrderBy("name"))
	if err != nil || len(got) != 2 || *got[0] != (recKeyed{Name: "alpha", OldID: "a", Notes: "n-a"}) || got[1].Name != "bravo" {
		t.Fatalf("records after the key change: %+v %v", got, err)
	}
	if _, err := Get[recKeyed](ctx, s, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the old key still reads: %v", err)
	}
	mustT(t, s.Close())
	es.noSetAside()
	es.checkRebuildEqualsLive()
}

func TestI35_MigrationsThatCannotApplyWriteNothing(t *testing.T) {
	es := newEvolveStore(t)
	es.seed()
	before := es.schemaStream()
	type notV1 struct {
		ID   string  `hikoutei:"id,pk"`
		Name float64 `hikoutei:"name"`
	}
	boom := errors.New("no number for this name")
	cases := []struct {
		name string
		m    Migration
		want error
		key  string
	}{
		{"old type is not the recorded shape", Migrate[notV1, recFloat]("Rec", "v2", func(notV1) (recFloat, error) { return recFloat{}, nil }), ErrMigrationInvalid, ""},
		{"bad version", Migrate[recV1, recFloat]("Rec", "v 2", nameLength), ErrMigrationInvalid, ""},
		{"new type is not the declared one", Migrate[recV1, recPop]("Rec", "v2", func(recV1) (recPop, error) { return recPop{}, nil }), ErrMigrationInvalid, ""},
		{"the function fails", Migrate[recV1, recFloat]("Rec", "v2", func(o recV1) (recFloat, error) {
			if o.ID == "b" {
				return recFloat{}, boom
			}
			return nameLength(o)
		}), boom, "b"},
		{"the function panics", Migrate[recV1, recFloat]("Rec", "v2", func(o recV1) (recFloat, error) { panic("Alpha") }), ErrMigrationFailed, "a"},
		{"two records map to one key", Migrate[recV1, recFloat]("Rec", "v2", func(o recV1) (recFloat, error) { return recFloat{ID: "z"}, nil }), ErrMigrationFailed, "b"},
		{"an invalid new key", Migrate[recV1, recFloat]("Rec", "v2", func(o recV1) (recFloat, error) { return recFloat{ID: " a"}, nil }), ErrInvalidPrimaryKey, "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(t.Context(), es.dir, es.options(c.m), Entity[recFloat]("Rec"))
			if !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
			var me *MigrationError
			if c.key != "" && (!errors.As(err, &me) || me.Key != c.key || !errors.Is(err, ErrMigrationFailed)) {
				t.Errorf("error %v does not name the record %q", err, c.key)
			}
			if strings.Contains(err.Error(), "Alpha") {
				t.Errorf("the error shows a value: %v", err)
			}
			if after := es.schemaStream(); len(after) != len(before) {
				t.Errorf("%d schema events written", len(after)-len(before))
			}
		})
	}
	s := es.open(es.options(), Entity[recV1]("Rec"))
	a, err := Get[recV1](ctx, s, "a")
	if err != nil || a.Name != "Alpha" {
		t.Errorf("Get a after the refusals: %+v %v", a, err)
	}
	mustT(t, s.Close())
}

func TestI35_KeyRenamedAndEntitiesRemoved(t *testing.T) {
	type recCode struct {
		Code  string `hikoutei:"code,pk,was=id"`
		Name  string `hikoutei:"name"`
		Notes string `hikoutei:"notes,user"`
	}
	es := newEvolveStore(t)
	es.seed()
	s := es.open(es.options(), Entity[recCode]("Rec"), Entity[other]("Other"))
	a, err := Get[recCode](ctx, s, "a")
	if err != nil || *a != (recCode{Code: "a", Name: "Alpha", Notes: "n-a"}) {
		t.Fatalf("Get a with the key renamed: %+v %v", a, err)
	}
	mustT(t, s.Close())
	// Other has no record: removing it is compatible; Rec has two.
	s = es.open(es.options(), Entity[recCode]("Rec"))
	mustT(t, s.Close())
	es.noSetAside()
	es.checkRebuildEqualsLive()
	_, err = Open(t.Context(), es.dir, es.options(), Entity[other]("Other"))
	var sce *ShapeChangeError
	if !errors.As(err, &sce) || len(sce.Refused) != 1 || sce.Refused[0].Change != events.ChangeEntityRemoved || sce.Refused[0].Records != 2 {
		t.Fatalf("Open without Rec: %v", err)
	}
}

func TestI35_PlanShapeChangeSaysWhatWouldChangeAndWritesNothing(t *testing.T) {
	es := newEvolveStore(t)
	es.seed()
	files := es.storeFiles()
	before := es.schemaStream()
	plan, err := PlanShapeChange(t.Context(), es.dir, es.options(), Entity[recFloat]("Rec"))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Refused) != 1 || plan.Refused[0].Records != 2 || !slices.Equal(plan.Refused[0].FirstKeys, []string{"a", "b"}) || len(plan.Migrations) != 0 {
		t.Errorf("plan without a migration: %+v", plan)
	}
	m := Migrate[recV1, recFloat]("Rec", "v2", nameLength)
	plan, err = PlanShapeChange(t.Context(), es.dir, es.options(m), Entity[recFloat]("Rec"))
	if err != nil {
		t.Fatal(err)
	}
	want := []MigrationPlan{{Name: "Rec/v2", Records: 2, FirstKeys: []string{"a", "b"}}}
	if len(plan.Refused) != 0 || len(plan.Incompatible) != 1 || !reflect.DeepEqual(plan.Migrations, want) || plan.Changes[0].Migration != "Rec/v2" {
		t.Errorf("plan with the migration: %+v", plan)
	}
	plan, err = PlanShapeChange(t.Context(), es.dir, es.options(), Entity[recTitle]("Rec"))
	if err != nil || len(plan.Changes) != 1 || plan.Changes[0].Kind != events.ChangeFieldRenamed || len(plan.Incompatible) != 0 {
		t.Errorf("plan of a rename: %+v %v", plan, err)
	}
	if !slices.Equal(es.storeFiles(), files) || len(es.schemaStream()) != len(before) {
		t.Errorf("the dry runs wrote: files %v → %v", files, es.storeFiles())
	}
	s := es.open(es.options(), Entity[recV1]("Rec"))
	defer s.Close()
	if _, err := PlanShapeChange(t.Context(), es.dir, es.options(), Entity[recTitle]("Rec")); !errors.Is(err, ErrStoreLocked) {
		t.Errorf("a dry run of an open store: %v", err)
	}
}

// A migration for an entity the application does not declare (a typo, an
// entity no longer declared) would never run: Open fails with
// migration_invalid naming the entity, whether or not the declared shapes
// changed, and writes nothing; PlanShapeChange refuses it the same way.
func TestI35_MigrationForAnUndeclaredEntityFailsOpen(t *testing.T) {
	es := newEvolveStore(t)
	es.seed()
	before := es.schemaStream()
	ghost := Migrate[recV1, recFloat]("Ghost", "v2", nameLength)
	for _, decl := range []EntityDef{Entity[recFloat]("Rec"), Entity[recV1]("Rec")} {
		_, err := Open(t.Context(), es.dir, es.options(ghost), decl)
		if !errors.Is(err, ErrMigrationInvalid) || !strings.Contains(err.Error(), "Ghost is not declared") {
			t.Fatalf("Open: %v, want migration_invalid naming Ghost", err)
		}
		if _, err := PlanShapeChange(t.Context(), es.dir, es.options(ghost), decl); !errors.Is(err, ErrMigrationInvalid) {
			t.Fatalf("PlanShapeChange: %v, want migration_invalid", err)
		}
	}
	if after := es.schemaStream(); len(after) != len(before) {
		t.Errorf("%d schema events written", len(after)-len(before))
	}
	s := es.open(es.options(Migrate[recV1, recFloat]("Rec", "v2", nameLength)), Entity[recFloat]("Rec"))
	mustT(t, s.Close())
}
