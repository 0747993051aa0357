package hikoutei

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
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
	t    *testing.T
	dir  string
	logs bytes.Buffer
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
	commit(es.t, s, &recV1{ID: "a", Name: "Alpha", Notes: "n-a"}, &recV1{ID: "b", Name: "Bravo", Notes: "n-b"})
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

var _ = fmt.Sprint
var _ = engine.Of
