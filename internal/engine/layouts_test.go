package engine

import (
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func recShape(fields ...events.FieldShape) events.EntityShape {
	return events.EntityShape{Name: "Rec", PK: "id", Fields: fields}
}

var (
	fName  = events.FieldShape{Name: "name", Kind: events.KindString, Owner: events.OwnerSystem}
	fNotes = events.FieldShape{Name: "notes", Kind: events.KindString, Owner: events.OwnerUser}
	fTitle = events.FieldShape{Name: "title", Kind: events.KindString, Owner: events.OwnerSystem}
	fNameF = events.FieldShape{Name: "name", Kind: events.KindFloat, Owner: events.OwnerSystem}
)

// history declares Rec three times: {name, notes} at 1, name renamed
// title at 10 (with its schema.changed), and the same shapes again at 20
// without one (as a log of an earlier build records them: by name).
func history() events.ShapeHistory {
	return events.ShapeHistory{
		{Seq: 1, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(fName, fNotes)}}},
		{Seq: 10, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(fTitle, fNotes)}},
			Changed: &events.SchemaChanged{Changes: []events.ShapeChange{{Entity: "Rec", Kind: events.ChangeFieldRenamed, Field: "title",
				From: "name", To: "title", Class: events.ClassCompatible}}}},
		{Seq: 20, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(fTitle, fNotes)}}},
	}
}

func headerOf(spec layout.TabSpec) []any {
	var out []any
	for _, h := range spec.Headers() {
		out = append(out, h)
	}
	return out
}

func TestLayoutStateKnowsEveryDeclaredLayout(t *testing.T) {
	l := newLayoutState(history())
	if len(l.eras) != 3 {
		t.Fatalf("eras %d", len(l.eras))
	}
	if at := l.changedAt("Rec_System"); at != 10 {
		t.Fatalf("Rec_System changed at %d, want 10", at)
	}
	if at := l.changedAt("Rec_Input"); at != 0 {
		t.Fatalf("Rec_Input changed at %d, want never", at)
	}
	cur := l.eras[2].schema
	old, _ := l.eras[0].schema.Tab("Rec_System")
	if era, spec, ok := l.match(cur, "Rec_System", append(headerOf(old), "", "notes (retired)"), false, 0); !ok || era != 0 || spec.Name != "Rec_System" {
		t.Fatalf("the first layout: %d %v", era, ok)
	}
	now, _ := cur.Tab("Rec_System")
	if era, _, ok := l.match(cur, "Rec_System", headerOf(now), true, 0); !ok || era != -1 {
		t.Fatalf("the current layout: %d %v", era, ok)
	}
	if _, _, ok := l.match(cur, "Rec_System", []any{"id", "Name", "notes", layout.AnchorHeader}, true, 0); ok {
		t.Fatal("a header a person changed matched a layout")
	}
	if name, ok := l.follow("Rec", 0)("name"); !ok || name != "title" {
		t.Fatalf("name follows to %q %v", name, ok)
	}
}

// A retype keeps the header: a tab waiting for its migration whose header
// shows the current names is read in the newest older layout with other
// kinds.
func TestLayoutStateTellsARetypeByThePendingTab(t *testing.T) {
	h := events.ShapeHistory{
		{Seq: 1, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(fName, fNotes)}}},
		{Seq: 5, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(fNameF, fNotes)}}},
	}
	l := newLayoutState(h)
	cur := l.eras[1].schema
	spec, _ := cur.Tab("Rec_System")
	if era, _, _ := l.match(cur, "Rec_System", headerOf(spec), true, 0); era != 0 {
		t.Fatalf("pending: era %d, want the text layout", era)
	}
	if era, _, _ := l.match(cur, "Rec_System", headerOf(spec), false, 0); era != -1 {
		t.Fatalf("not pending: era %d, want the current layout", era)
	}
}

// A row that showed exactly the store's last write shows it in the new
// layout (the hash the migration left); any other row is expected to show
// canonical state; rows the store never showed are left out. A row of a
// live record left showing other than canonical state differs (Differs):
// cells the store did not write (After), or its last write while
// canonical state moved on (a); a removed record's row (r) does not.
func TestLayoutMigrationRowHashes(t *testing.T) {
	d := &layoutMigration{visible: map[string]string{"a": "va", "b": "vb", "c": "vc", "e": "ve", "r": "vr"},
		same: map[string]bool{"a": true, "e": true, "r": true}, canonical: map[string]string{"a": "ca", "b": "cb", "c": "cc", "e": "ne"},
		shown: map[string]map[string]string{}}
	got := d.rows([]sheetsio.MigratedRow{{Anchor: "a", Before: "va", After: "na"}, {Anchor: "b", Before: "xb", After: "nb"},
		{Anchor: "c", Before: "vc", After: "nc"}, {Anchor: "c", Before: "vc", After: "nc2"}, {Anchor: "z", Before: "?", After: "nz"},
		{Anchor: "e", Before: "ve", After: "ne"}, {Anchor: "r", Before: "vr", After: "nr"}})
	want := []events.MigratedRow{{Anchor: "a", Hash: "na", Before: "va", Differs: true},
		{Anchor: "b", Hash: "cb", Before: "xb", After: "nb", Differs: true}, {Anchor: "c", Hash: "cc", Before: "vc", After: "nc", Differs: true},
		{Anchor: "e", Hash: "ne", Before: "ve"}, {Anchor: "r", Hash: "nr", Before: "vr"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows\n got %+v\nwant %+v", got, want)
	}
}

// A write queued under an older declaration is sent in the current
// layout: a renamed field's value under its new name, converted to its
// kind; a field that left the tab dropped; an update left empty writes
// its key cell.
func TestTranslatedWritesFollowTheShape(t *testing.T) {
	h := events.ShapeHistory{
		{Seq: 1, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(fName, fNotes)}}},
		{Seq: 10, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(events.FieldShape{Name: "title",
			Kind: events.KindFloat, Owner: events.OwnerSystem})}},
			Changed: &events.SchemaChanged{Changes: []events.ShapeChange{{Entity: "Rec", Kind: events.ChangeFieldRenamed, Field: "title",
				From: "name", To: "title", Class: events.ClassCompatible}, {Entity: "Rec", Kind: events.ChangeFieldDropped, Field: "notes",
				Class: events.ClassCompatible}}}},
	}
	e := &Engine{lay: newLayoutState(h)}
	e.reg = e.lay.eras[1].reg
	sh, err := newSheet("t", e.reg)
	if err != nil {
		t.Fatal(err)
	}
	e.sheet = sh
	fx := aggregates.Effect{Target: aggregates.Target{Tab: "Rec_System"}, Op: events.OpUpdate, EntityID: "a", QueuedSeq: 5,
		Values: map[string]any{"name": "2.5", "notes": "n"}}
	if got, _ := e.translated(fx); !reflect.DeepEqual(got, map[string]any{"title": 2.5}) {
		t.Fatalf("translated %v", got)
	}
	fx.Values = map[string]any{"notes": "n"}
	if got, _ := e.translated(fx); !reflect.DeepEqual(got, map[string]any{"id": "a"}) {
		t.Fatalf("an emptied update: %v", got)
	}
	fx.QueuedSeq, fx.Values = 12, map[string]any{"title": 3.0}
	if got, _ := e.translated(fx); !reflect.DeepEqual(got, map[string]any{"title": 3.0}) {
		t.Fatalf("a write of the current shape: %v", got)
	}
}

// A migration of many rows is recorded in parts of one unit: every row
// once, in order, the retired and renamed columns in the first part.
func TestMigrationPartsSplitTheRows(t *testing.T) {
	ev := events.SheetLayoutMigrated{Tab: "T", Retired: []events.RetiredColumn{{Field: "x"}}, Renamed: []events.ColumnRename{{From: "a", To: "b"}}}
	for i := range 2*migrationRowsPerEvent + 1 {
		ev.Rows = append(ev.Rows, events.MigratedRow{Anchor: string(rune('a' + i%26))})
	}
	parts := migrationParts(ev)
	if len(parts) != 3 || len(parts[2].Rows) != 1 || parts[1].Retired != nil || len(parts[0].Renamed) != 1 {
		t.Fatalf("parts %d", len(parts))
	}
	if one := migrationParts(events.SheetLayoutMigrated{Tab: "T"}); len(one) != 1 {
		t.Fatalf("an empty tab's migration is %d events", len(one))
	}
}

// A header that shows the current names may still be an older layout: a
// field renamed away and back, or dropped and added again, before the tab
// followed. A tab waiting for its migration is read in that older layout
// (the column shows the old field), unless its last recorded migration
// brought it past it.
func TestLayoutStateTellsAFieldThatCameBack(t *testing.T) {
	for name, mid := range map[string]events.EntityShape{"renamed back": recShape(fTitle, fNotes), "added again": recShape(fNotes)} {
		t.Run(name, func(t *testing.T) {
			ch := events.ChangeFieldRenamed
			if len(mid.Fields) == 1 {
				ch = events.ChangeFieldDropped
			}
			back := events.ChangeFieldRenamed
			if ch == events.ChangeFieldDropped {
				back = events.ChangeFieldAdded
			}
			h := events.ShapeHistory{
				{Seq: 1, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(fName, fNotes)}}},
				{Seq: 5, Declared: events.SchemaDeclared{Entities: []events.EntityShape{mid}},
					Changed: &events.SchemaChanged{Changes: []events.ShapeChange{{Entity: "Rec", Kind: ch, Field: "name", From: "name", To: "title"}}}},
				{Seq: 9, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recShape(fName, fNotes)}},
					Changed: &events.SchemaChanged{Changes: []events.ShapeChange{{Entity: "Rec", Kind: back, Field: "name", From: "title", To: "name"}}}},
			}
			l := newLayoutState(h)
			cur := l.eras[2].schema
			spec, _ := cur.Tab("Rec_System")
			want := 0
			if ch == events.ChangeFieldRenamed {
				want = -1 // name → title → name: the column shows the same field
			}
			if era, _, _ := l.match(cur, "Rec_System", headerOf(spec), true, 0); era != want {
				t.Fatalf("pending: era %d, want %d", era, want)
			}
			if era, _, _ := l.match(cur, "Rec_System", headerOf(spec), true, 1); era != -1 {
				t.Fatalf("migrated to the middle declaration: era %d, want the current layout", era)
			}
			if era, _, _ := l.match(cur, "Rec_System", headerOf(spec), false, 0); era != -1 {
				t.Fatalf("not pending: era %d, want the current layout", era)
			}
		})
	}
}
