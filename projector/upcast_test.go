package projector_test

import (
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Rec as three declarations: v1 {name string, pop int, notes user}; v2
// renames name → title and widens pop to float; v3 drops notes.
var (
	upV1 = events.EntityShape{Name: "Rec", PK: "id", Fields: []events.FieldShape{
		{Name: "name", Kind: events.KindString, Owner: events.OwnerUser}, {Name: "pop", Kind: events.KindInt, Owner: events.OwnerSystem},
		{Name: "notes", Kind: events.KindString, Owner: events.OwnerUser}}}
	upV2 = events.EntityShape{Name: "Rec", PK: "id", Fields: []events.FieldShape{
		{Name: "title", Kind: events.KindString, Owner: events.OwnerUser}, {Name: "pop", Kind: events.KindFloat, Owner: events.OwnerSystem},
		{Name: "notes", Kind: events.KindString, Owner: events.OwnerUser}}}
	upV3 = events.EntityShape{Name: "Rec", PK: "id", Fields: []events.FieldShape{
		{Name: "title", Kind: events.KindString, Owner: events.OwnerUser}, {Name: "pop", Kind: events.KindFloat, Owner: events.OwnerSystem}}}
)

func upHistory() events.ShapeHistory {
	c2 := events.SchemaChanged{Changes: []events.ShapeChange{
		{Entity: "Rec", Kind: events.ChangeFieldRenamed, Field: "title", From: "name", To: "title", Class: events.ClassCompatible},
		{Entity: "Rec", Kind: events.ChangeFieldRetyped, Field: "pop", From: "int", To: "float", Class: events.ClassIncompatible, Migration: "Rec/v2"}}}
	c3 := events.SchemaChanged{Changes: []events.ShapeChange{
		{Entity: "Rec", Kind: events.ChangeFieldDropped, Field: "notes", From: "string", Class: events.ClassCompatible}}}
	return events.ShapeHistory{
		{Seq: 1, Declared: events.SchemaDeclared{Entities: []events.EntityShape{upV1}}},
		{Seq: 20, Declared: events.SchemaDeclared{Entities: []events.EntityShape{upV2}}, Changed: &c2},
		{Seq: 30, Declared: events.SchemaDeclared{Entities: []events.EntityShape{upV3}}, Changed: &c3},
	}
}

// Events of older declarations are read into the newest shape: renamed
// fields under their new names, values converted (one that does not
// convert is left out: NULL, unknown hash, revision kept), dropped
// fields left out; candidates, conflicts and the cells the sheet showed
// follow the same names.
func TestI35_OldEventsAreReadIntoTheNewestShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{upV3}, InputTabs: []string{"Rec_Input"},
		History: upHistory(), TabEntities: map[string]string{"Rec_Input": "Rec"}})
	must(t, err)
	defer p.Close()
	h := newHistory()
	h.seq = 1
	evs := []events.Event{
		h.created("Rec", "a", map[string]any{"name": "Alpha", "pop": int64(5), "notes": "n"}, 1),
		h.created("Rec", "b", map[string]any{"name": "Bravo", "pop": int64(1<<53 + 1), "notes": "m"}, 1),
		h.next(events.InboundStream("Rec_Input"), events.CandidateDetected{Tab: "Rec_Input", Anchor: "a", Binding: "bind-a", Entity: "Rec", ID: "a",
			Field: "name", CandidateHash: "h", CandidateValue: "Person", Epoch: 0, ConflictID: "cf1"}),
		h.next(events.ConflictStream("cf1"), events.ConflictOpened{ConflictID: "cf1", Entity: "Rec", ID: "a", Field: "name", Tab: "Rec_Input",
			Anchor: "a", Binding: "bind-a", CandidateHash: "h", VisibleHash: "v"}),
		h.next(events.InboundStream("Rec_Input"), events.CandidateDetected{Tab: "Rec_Input", Anchor: "b", Binding: "bind-b", Entity: "Rec", ID: "b",
			Field: "notes", CandidateHash: "h2", CandidateValue: "x", Epoch: 0, ConflictID: "cf2"}),
	}
	must(t, p.Apply(evs))
	wantRows(t, "rows", query(t, path, `SELECT id, title, pop FROM "Rec" ORDER BY id`), "a|Alpha|5.0", "b|Bravo|NULL")
	wantRows(t, "pop state", query(t, path, `SELECT id, value_hash, revision FROM hk_field_state WHERE field = 'pop' ORDER BY id`),
		"a|"+hashOf(t, 5.0)+"|1", "b||1")
	wantRows(t, "dropped field state", query(t, path, `SELECT count(*) FROM hk_field_state WHERE field IN ('notes', 'name')`), "0")
	wantRows(t, "candidates", query(t, path, `SELECT binding, field FROM hk_sheet_field_state ORDER BY binding`), "bind-a|title")
	wantRows(t, "conflicts", query(t, path, `SELECT conflict_id, field FROM hk_conflicts`), "cf1|title")
}

func hashOf(t *testing.T, v any) string {
	t.Helper()
	h, err := events.Hash(v)
	must(t, err)
	return h
}
