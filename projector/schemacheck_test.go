package projector

import (
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// The expected schema remembered for a declaration is the one a scratch
// database builds for it, per declaration, and every caller gets its own
// copy: a check that edits its answer never changes the next one's.
func TestExpectedSchemaIsRememberedPerDeclarationAndHandedOutAsACopy(t *testing.T) {
	port := events.EntityShape{Name: "Port", PK: "id", Fields: []events.FieldShape{
		{Name: "name", Kind: events.KindString, Owner: events.OwnerSystem},
		{Name: "notes", Kind: events.KindString, Owner: events.OwnerUser}}}
	dock := events.EntityShape{Name: "Dock", PK: "key", Fields: []events.FieldShape{
		{Name: "depth", Kind: events.KindFloat, Owner: events.OwnerSystem}}}
	decls := [][]events.EntityShape{{port}, {port, dock}, {dock}}
	for _, shapes := range decls {
		var stmts []string
		for _, s := range shapes {
			stmts = append(stmts, createSQL(s))
		}
		built, err := buildSchema(stmts)
		if err != nil {
			t.Fatal(err)
		}
		first, err := expectedSchema(shapes)
		if err != nil || !slices.Equal(first, built) {
			t.Fatalf("expected schema of %d entities: %v\n%q\nwant %q", len(shapes), err, first, built)
		}
		first[0] = "changed by a caller"
		again, err := expectedSchema(shapes)
		if err != nil || !slices.Equal(again, built) {
			t.Fatalf("remembered schema of %d entities changed: %v\n%q\nwant %q", len(shapes), err, again, built)
		}
	}
	one, _ := expectedSchema(decls[0])
	two, _ := expectedSchema(decls[1])
	if slices.Equal(one, two) {
		t.Fatal("two declarations share one expected schema")
	}
}
