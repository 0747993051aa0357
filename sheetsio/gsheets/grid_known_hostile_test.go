package gsheets

import (
	"context"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// Hostile idle cases for a known grid read: a tab renamed while idle is
// still read by its sheetId (a rename is harmless, docs/sync.md) and a
// person's edit after the rename is decoded; a tab deleted while idle is
// never Undecoded: it reads as missing.
func TestReadGridKnownAfterARenameAndADelete(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "1", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "a1", Values: map[string]any{"id": "1", "name": "one"}},
	}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	ctx := context.Background()
	first, err := h.p.ReadGridKnown(ctx, w, sheetsio.BodyDigest{}, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	known := first["Part_Input"].Body
	person := h.emu.Person(testSheetID)
	if err := person.RenameTab("Part_Input", "Renamed by a person"); err != nil {
		t.Fatal(err)
	}
	renamed, err := h.p.ReadGridKnown(ctx, w, known, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	if g := renamed["Part_Input"]; g.Err != nil || (!g.Undecoded && len(g.Rows) != 1) {
		t.Fatalf("renamed tab read %+v: want its row, decoded or not", g)
	}
	if err := person.Type("Renamed by a person", "B2", "edited"); err != nil {
		t.Fatal(err)
	}
	edited, err := h.p.ReadGridKnown(ctx, w, renamed["Part_Input"].Body, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	g := edited["Part_Input"]
	if g.Undecoded || len(g.Rows) != 1 || g.Rows[0].Cells[1].Value != "edited" {
		t.Fatalf("edit in a renamed tab %+v: want the edited row decoded", g)
	}
	if err := person.DeleteTab("Renamed by a person"); err != nil {
		t.Fatal(err)
	}
	deleted, err := h.p.ReadGridKnown(ctx, w, g.Body, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	if d := deleted["Part_Input"]; d.Undecoded || d.Err == nil {
		t.Fatalf("deleted tab read %+v: want a tab error, never Undecoded", d)
	}
}
