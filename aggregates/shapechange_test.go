package aggregates

import (
	"reflect"
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// Shape fixtures: Rec{id pk, name string, notes string user, pop int?}.
var (
	fName  = events.FieldShape{Name: "name", Kind: events.KindString, Owner: events.OwnerSystem}
	fNotes = events.FieldShape{Name: "notes", Kind: events.KindString, Owner: events.OwnerUser}
	fPop   = events.FieldShape{Name: "pop", Kind: events.KindInt, Nullable: true, Owner: events.OwnerSystem}
	recV1  = events.EntityShape{Name: "Rec", PK: "id", Fields: []events.FieldShape{fName, fNotes, fPop}}
)

// rec is recV1 with fields replaced (pk kept unless set).
func rec(pk string, fields ...events.FieldShape) events.EntityShape {
	if pk == "" {
		pk = "id"
	}
	return events.EntityShape{Name: "Rec", PK: pk, Fields: fields}
}

func with(f events.FieldShape, edit func(*events.FieldShape)) events.FieldShape {
	edit(&f)
	return f
}

// record is one current record of the census: key and values by the last
// declaration's names.
type record struct {
	key    string
	values map[string]any
}

// countCensus counts the census of needs over records as the engine does
// (CensusCounter, records in key order).
func countCensus(needs []CensusNeed, records map[string][]record) Census {
	c := NewCensusCounter(needs)
	for _, entity := range c.Entities() {
		rs := slices.Clone(records[entity])
		slices.SortFunc(rs, func(a, b record) int {
			if a.key < b.key {
				return -1
			}
			return 1
		})
		for _, r := range rs {
			c.Add(entity, r.key, r.values)
		}
	}
	return c.Census()
}

// change is a ShapeChange without its entity (always Rec unless named).
func change(kind events.ChangeKind, field, from, to string, class events.ChangeClass) events.ShapeChange {
	return events.ShapeChange{Entity: "Rec", Kind: kind, Field: field, From: from, To: to, Class: class}
}

const (
	additive     = events.ClassAdditive
	compatible   = events.ClassCompatible
	incompatible = events.ClassIncompatible
)

func TestI35_ClassifyShapesTable(t *testing.T) {
	ab := []record{{"b", map[string]any{"name": "B", "pop": int64(2)}}, {"a", map[string]any{"name": "A", "pop": nil}}}
	cases := []struct {
		name       string
		last       []events.EntityShape
		shapes     []events.EntityShape
		renames    Renames
		records    []record
		migrations map[string]string
		want       []events.ShapeChange
		refused    []ShapeIncompatibility
	}{
		{name: "unchanged", shapes: []events.EntityShape{recV1}},
		{name: "field added", shapes: []events.EntityShape{rec("", fName, fNotes, fPop, events.FieldShape{Name: "area", Kind: events.KindFloat, Owner: events.OwnerSystem})},
			want: []events.ShapeChange{change(events.ChangeFieldAdded, "area", "", "float", additive)}},
		{name: "user field added", shapes: []events.EntityShape{rec("", fName, fNotes, fPop, events.FieldShape{Name: "tag", Kind: events.KindString, Owner: events.OwnerUser})},
			want: []events.ShapeChange{change(events.ChangeFieldAdded, "tag", "", "string", additive)}},
		{name: "field dropped", shapes: []events.EntityShape{rec("", fNotes, fPop)}, records: ab,
			want: []events.ShapeChange{change(events.ChangeFieldDropped, "name", "string", "", compatible)}},
		{name: "made user-editable", shapes: []events.EntityShape{rec("", with(fName, func(f *events.FieldShape) { f.Owner = events.OwnerUser }), fNotes, fPop)},
			want: []events.ShapeChange{change(events.ChangeOwnerChanged, "name", "system", "user", compatible)}},
		{name: "no longer user-editable", shapes: []events.EntityShape{rec("", fName, with(fNotes, func(f *events.FieldShape) { f.Owner = events.OwnerSystem }), fPop)},
			want: []events.ShapeChange{change(events.ChangeOwnerChanged, "notes", "user", "system", compatible)}},
		{name: "reordered", shapes: []events.EntityShape{rec("", fPop, fName, fNotes)},
			want: []events.ShapeChange{change(events.ChangeFieldsReordered, "", "", "", compatible)}},
		{name: "a field inserted in the middle is no reorder", shapes: []events.EntityShape{rec("", fName, events.FieldShape{Name: "x", Kind: events.KindBool, Owner: events.OwnerSystem}, fNotes, fPop)},
			want: []events.ShapeChange{change(events.ChangeFieldAdded, "x", "", "bool", additive)}},
		{name: "renamed with was=", shapes: []events.EntityShape{rec("", with(fName, func(f *events.FieldShape) { f.Name = "title" }), fNotes, fPop)},
			renames: Renames{"Rec": {"title": {"name"}}}, records: ab,
			want: []events.ShapeChange{change(events.ChangeFieldRenamed, "title", "name", "title", compatible)}},
		{name: "rename chain in one tag: the name the last declaration has wins", shapes: []events.EntityShape{rec("", with(fName, func(f *events.FieldShape) { f.Name = "label" }), fNotes, fPop)},
			renames: Renames{"Rec": {"label": {"title", "name"}}},
			want:    []events.ShapeChange{change(events.ChangeFieldRenamed, "label", "name", "label", compatible)}},
		{name: "was= naming a field the last declaration lacks is ignored", shapes: []events.EntityShape{recV1},
			renames: Renames{"Rec": {"name": {"label"}}}},
		{name: "was= naming a field still declared is ignored", shapes: []events.EntityShape{rec("", fName, fNotes, fPop, with(fName, func(f *events.FieldShape) { f.Name = "title" }))},
			renames: Renames{"Rec": {"title": {"name"}}},
			want:    []events.ShapeChange{change(events.ChangeFieldAdded, "title", "", "string", additive)}},
		{name: "renamed and retyped", shapes: []events.EntityShape{rec("", fName, fNotes, with(fPop, func(f *events.FieldShape) { f.Name, f.Kind = "population", events.KindFloat }))},
			renames: Renames{"Rec": {"population": {"pop"}}}, records: ab,
			want: []events.ShapeChange{change(events.ChangeFieldRenamed, "population", "pop", "population", compatible),
				change(events.ChangeFieldRetyped, "population", "int?", "float?", compatible)}},
		{name: "int → float widening", shapes: []events.EntityShape{rec("", fName, fNotes, with(fPop, func(f *events.FieldShape) { f.Kind = events.KindFloat }))},
			records: ab, want: []events.ShapeChange{change(events.ChangeFieldRetyped, "pop", "int?", "float?", compatible)}},
		{name: "int → float refused for 2^53+1", shapes: []events.EntityShape{rec("", fName, fNotes, with(fPop, func(f *events.FieldShape) { f.Kind = events.KindFloat }))},
			records: []record{{"a", map[string]any{"pop": int64(1<<53 + 1)}}, {"b", map[string]any{"pop": int64(1 << 53)}}},
			want:    []events.ShapeChange{change(events.ChangeFieldRetyped, "pop", "int?", "float?", incompatible)},
			refused: []ShapeIncompatibility{{Entity: "Rec", Field: "pop", Change: events.ChangeFieldRetyped, From: "int?", To: "float?", Records: 1, FirstKeys: []string{"a"}}}},
		{name: "string → int refused for \"00123\"", shapes: []events.EntityShape{rec("", with(fName, func(f *events.FieldShape) { f.Kind = events.KindInt }), fNotes, fPop)},
			records: []record{{"a", map[string]any{"name": "123"}}, {"b", map[string]any{"name": "00123"}}},
			want:    []events.ShapeChange{change(events.ChangeFieldRetyped, "name", "string", "int", incompatible)},
			refused: []ShapeIncompatibility{{Entity: "Rec", Field: "name", Change: events.ChangeFieldRetyped, From: "string", To: "int", Records: 1, FirstKeys: []string{"b"}}}},
		{name: "string → float refused for text, first keys sorted", shapes: []events.EntityShape{rec("", with(fName, func(f *events.FieldShape) { f.Kind = events.KindFloat }), fNotes, fPop)},
			records: ab, want: []events.ShapeChange{change(events.ChangeFieldRetyped, "name", "string", "float", incompatible)},
			refused: []ShapeIncompatibility{{Entity: "Rec", Field: "name", Change: events.ChangeFieldRetyped, From: "string", To: "float", Records: 2, FirstKeys: []string{"a", "b"}}}},
		{name: "retype mapped by a migration", shapes: []events.EntityShape{rec("", with(fName, func(f *events.FieldShape) { f.Kind = events.KindFloat }), fNotes, fPop)},
			records: ab, migrations: map[string]string{"Rec": "Rec/v2"},
			want: []events.ShapeChange{{Entity: "Rec", Kind: events.ChangeFieldRetyped, Field: "name", From: "string", To: "float", Class: incompatible, Migration: "Rec/v2"}}},
		{name: "nullable: required → nullable", shapes: []events.EntityShape{rec("", with(fName, func(f *events.FieldShape) { f.Nullable = true }), fNotes, fPop)},
			records: ab, want: []events.ShapeChange{change(events.ChangeFieldRetyped, "name", "string", "string?", compatible)}},
		{name: "nullable → required refused for a null", shapes: []events.EntityShape{rec("", fName, fNotes, with(fPop, func(f *events.FieldShape) { f.Nullable = false }))},
			records: ab, want: []events.ShapeChange{change(events.ChangeFieldRetyped, "pop", "int?", "int", incompatible)},
			refused: []ShapeIncompatibility{{Entity: "Rec", Field: "pop", Change: events.ChangeFieldRetyped, From: "int?", To: "int", Records: 1, FirstKeys: []string{"a"}}}},
		{name: "nullable → required without nulls", shapes: []events.EntityShape{rec("", fName, fNotes, with(fPop, func(f *events.FieldShape) { f.Nullable = false }))},
			records: []record{{"a", map[string]any{"pop": int64(1)}}},
			want:    []events.ShapeChange{change(events.ChangeFieldRetyped, "pop", "int?", "int", compatible)}},
		{name: "a required field never written is no null", shapes: []events.EntityShape{rec("", with(fName, func(f *events.FieldShape) { f.Nullable = true }), fNotes, fPop)},
			records: []record{{"a", map[string]any{"name": nil}}},
			want:    []events.ShapeChange{change(events.ChangeFieldRetyped, "name", "string", "string?", compatible)}},
		{name: "key renamed with was=", shapes: []events.EntityShape{rec("code", fName, fNotes, fPop)}, renames: Renames{"Rec": {"code": {"id"}}}, records: ab,
			want: []events.ShapeChange{change(events.ChangeKeyRenamed, "code", "id", "code", compatible)}},
		{name: "key changed with records", shapes: []events.EntityShape{rec("name", fNotes, fPop)}, records: ab,
			want: []events.ShapeChange{change(events.ChangeKeyChanged, "name", "id", "name", incompatible),
				change(events.ChangeFieldDropped, "name", "string", "", compatible)},
			refused: []ShapeIncompatibility{{Entity: "Rec", Field: "name", Change: events.ChangeKeyChanged, From: "id", To: "name", Records: 2, FirstKeys: []string{"a", "b"}}}},
		{name: "key changed without records", shapes: []events.EntityShape{rec("code", fName, fNotes, fPop)},
			want: []events.ShapeChange{change(events.ChangeKeyChanged, "code", "id", "code", compatible)}},
		{name: "was= on the key naming a field still declared is a key change", shapes: []events.EntityShape{rec("code", fName, fNotes, fPop, events.FieldShape{Name: "id", Kind: events.KindString, Owner: events.OwnerSystem})},
			renames: Renames{"Rec": {"code": {"id"}}},
			want: []events.ShapeChange{change(events.ChangeKeyChanged, "code", "id", "code", compatible),
				change(events.ChangeFieldAdded, "id", "", "string", additive)}},
		{name: "entity added", shapes: []events.EntityShape{recV1, {Name: "Tag", PK: "id"}},
			want: []events.ShapeChange{{Entity: "Tag", Kind: events.ChangeEntityAdded, Class: additive}}},
		{name: "entity removed without records", shapes: []events.EntityShape{{Name: "Tag", PK: "id"}},
			want: []events.ShapeChange{{Entity: "Tag", Kind: events.ChangeEntityAdded, Class: additive}, {Entity: "Rec", Kind: events.ChangeEntityRemoved, Class: compatible}}},
		{name: "entity removed with records", shapes: []events.EntityShape{{Name: "Tag", PK: "id"}}, records: ab,
			want:    []events.ShapeChange{{Entity: "Tag", Kind: events.ChangeEntityAdded, Class: additive}, {Entity: "Rec", Kind: events.ChangeEntityRemoved, Class: incompatible}},
			refused: []ShapeIncompatibility{{Entity: "Rec", Change: events.ChangeEntityRemoved, Records: 2, FirstKeys: []string{"a", "b"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			last := events.SchemaDeclared{Entities: c.last}
			if c.last == nil {
				last.Entities = []events.EntityShape{recV1}
			}
			needs := CensusNeeds(last, c.shapes, c.renames)
			census := countCensus(needs, map[string][]record{"Rec": c.records})
			d := ClassifyShapes(last, c.shapes, c.renames, census, c.migrations)
			if !reflect.DeepEqual(d.Changed.Changes, c.want) {
				t.Errorf("changes\n got %+v\nwant %+v", d.Changed.Changes, c.want)
			}
			if !reflect.DeepEqual(d.Refused, c.refused) {
				t.Errorf("refused\n got %+v\nwant %+v", d.Refused, c.refused)
			}
			for _, ch := range d.Changed.Changes {
				if ch.Class == incompatible && !slices.ContainsFunc(d.Incompatible, func(i ShapeIncompatibility) bool { return i.Change == ch.Kind }) {
					t.Errorf("%s is incompatible but not listed", ch.Kind)
				}
			}
		})
	}
}

// Every change kind and class appears in the table above.
func TestI35_ClassifyShapesCoversEveryKindAndClass(t *testing.T) {
	kinds := []events.ChangeKind{events.ChangeEntityAdded, events.ChangeEntityRemoved, events.ChangeFieldAdded, events.ChangeFieldDropped,
		events.ChangeFieldRenamed, events.ChangeFieldRetyped, events.ChangeOwnerChanged, events.ChangeFieldsReordered,
		events.ChangeKeyRenamed, events.ChangeKeyChanged}
	last := events.SchemaDeclared{Entities: []events.EntityShape{recV1, {Name: "Old", PK: "id"}}}
	shapes := []events.EntityShape{
		{Name: "Rec", PK: "code", Fields: []events.FieldShape{fPop, with(fName, func(f *events.FieldShape) { f.Name, f.Owner = "title", events.OwnerUser }),
			with(fNotes, func(f *events.FieldShape) { f.Kind = events.KindInt }), {Name: "area", Kind: events.KindFloat, Owner: events.OwnerSystem}}},
		{Name: "New", PK: "id"},
	}
	renames := Renames{"Rec": {"title": {"name"}, "code": {"id"}}}
	census := countCensus(CensusNeeds(last, shapes, renames), map[string][]record{"Rec": {{"a", map[string]any{"notes": "x"}}}, "Old": {{"o", nil}}})
	d := ClassifyShapes(last, shapes, renames, census, nil)
	got := map[events.ChangeKind]bool{}
	classes := map[events.ChangeClass]bool{}
	for _, ch := range d.Changed.Changes {
		got[ch.Kind], classes[ch.Class] = true, true
	}
	for _, k := range kinds {
		if k != events.ChangeKeyChanged && k != events.ChangeFieldDropped && !got[k] {
			t.Errorf("no %s in %+v", k, d.Changed.Changes)
		}
	}
	for _, c := range []events.ChangeClass{additive, compatible, incompatible} {
		if !classes[c] {
			t.Errorf("no %s change in %+v", c, d.Changed.Changes)
		}
	}
	if len(d.Refused) != 2 || d.Refused[0].Field != "notes" || d.Refused[1].Entity != "Old" {
		t.Errorf("refused %+v", d.Refused)
	}
	want := map[string]string{"id": "code", "name": "title", "notes": "notes", "pop": "pop"}
	if !reflect.DeepEqual(d.Fields["Rec"], want) {
		t.Errorf("field map %v, want %v", d.Fields["Rec"], want)
	}
}

// The census is what the classification needs: records of removed or
// re-keyed entities, and per retype the old field name and both shapes.
func TestI35_CensusNeedsNameTheOldFieldAndBothShapes(t *testing.T) {
	last := events.SchemaDeclared{Entities: []events.EntityShape{recV1, {Name: "Old", PK: "id"}}}
	pop := with(fPop, func(f *events.FieldShape) { f.Name, f.Kind = "population", events.KindFloat })
	shapes := []events.EntityShape{rec("", fName, fNotes, pop)}
	needs := CensusNeeds(last, shapes, Renames{"Rec": {"population": {"pop"}}})
	want := []CensusNeed{{CensusKey: CensusKey{"Rec", "pop"}, From: fPop, To: pop}, {CensusKey: CensusKey{Entity: "Old"}}}
	if !reflect.DeepEqual(needs, want) {
		t.Fatalf("needs\n got %+v\nwant %+v", needs, want)
	}
	if s := (ShapeIncompatibility{Entity: "Rec", Field: "name", Change: events.ChangeFieldRetyped, From: "string", To: "float", Records: 7,
		FirstKeys: []string{"a", "b", "c", "d", "e"}}).String(); s != "Rec.name: field_retyped string → float: 7 record(s) (a, b, c, d, e, …)" {
		t.Errorf("String() = %q", s)
	}
}

// A chain of renames across declarations reads an old event's field under
// its newest name (the changes recorded, then the shape history).
func TestI35_RenameChainAcrossDeclarations(t *testing.T) {
	v2 := rec("", with(fName, func(f *events.FieldShape) { f.Name = "title" }), fNotes, fPop)
	v3 := rec("", with(fName, func(f *events.FieldShape) { f.Name = "label" }), fNotes, fPop)
	d2 := ClassifyShapes(events.SchemaDeclared{Entities: []events.EntityShape{recV1}}, []events.EntityShape{v2}, Renames{"Rec": {"title": {"name"}}}, nil, nil)
	d3 := ClassifyShapes(events.SchemaDeclared{Entities: []events.EntityShape{v2}}, []events.EntityShape{v3}, Renames{"Rec": {"label": {"title", "name"}}}, nil, nil)
	h := events.ShapeHistory{
		{Seq: 1, Declared: events.SchemaDeclared{Entities: []events.EntityShape{recV1}}},
		{Seq: 10, Declared: events.SchemaDeclared{Entities: []events.EntityShape{v2}}, Changed: &d2.Changed},
		{Seq: 20, Declared: events.SchemaDeclared{Entities: []events.EntityShape{v3}}, Changed: &d3.Changed},
	}
	for seq, want := range map[uint64]string{5: "label", 15: "label", 25: "label"} {
		name := map[uint64]string{5: "name", 15: "title", 25: "label"}[seq]
		if got, ok := h.FieldName("Rec", name, seq); !ok || got != want {
			t.Errorf("FieldName(%s at %d) = %q %v, want %q", name, seq, got, ok, want)
		}
	}
}
