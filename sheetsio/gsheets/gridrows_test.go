package gsheets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// eightParts provisions Part_Input with anchors a1…a8 on rows 2…9.
func eightParts(t *testing.T) (*harness, *sheetsio.Workbook) {
	t.Helper()
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	var ops []sheetsio.Op
	for i := 1; i <= 8; i++ {
		ops = append(ops, appendOp("Part_Input", fmt.Sprintf("a%d", i), map[string]any{"id": fmt.Sprint(i), "name": "n", "qty": int64(i)}))
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	return h, w
}

func TestReadGridRowsReadsTheHeaderAndTheRequestedRowsInOneRequestAndMarksOverlappingMerges(t *testing.T) {
	h, w := eightParts(t)
	person := h.emu.Person(testSheetID)
	// B3:B5 starts above requested row 4; B9:C9 is on requested row 9; C7
	// is an error formula on a row not asked for.
	for _, m := range []string{"B3:B5", "B9:C9"} {
		if err := person.Merge("Part_Input", m); err != nil {
			t.Fatal(err)
		}
	}
	if err := person.TypeFormula("Part_Input", "C7", "=1/0"); err != nil {
		t.Fatal(err)
	}
	h.emu.ResetCounters()
	grids, err := h.p.ReadGridRows(context.Background(), w, map[string]sheetsio.GridRequest{"Part_Input": {Rows: []int{9, 4, 4, 40}}})
	if err != nil {
		t.Fatal(err)
	}
	g := grids["Part_Input"]
	if c := h.counters(); c.Reads != 1 || g.Err != nil || !g.Partial || len(g.Rows) != 3 {
		t.Fatalf("%d reads; grid %+v", c.Reads, g)
	}
	want := []struct {
		row    int
		anchor string
		merged []int // column indexes a merge covers
	}{{4, "a3", []int{1}}, {9, "a8", []int{1, 2}}, {40, "", nil}}
	for i, wr := range want {
		r := g.Rows[i]
		if r.SheetRow != wr.row || r.Anchor != wr.anchor {
			t.Fatalf("row %d: %+v; want row %d anchor %q", i, r, wr.row, wr.anchor)
		}
		for j, c := range r.Cells {
			if c.Formula != "" || c.ErrorType != "" || c.Merged != slices.Contains(wr.merged, j) {
				t.Fatalf("row %d cell %d: %+v; want merged columns %v and nothing else", wr.row, j, c, wr.merged)
			}
		}
	}
}

func TestReadGridRowsValidatesTheHeaderInTheSameRead(t *testing.T) {
	h, w := eightParts(t)
	if err := h.emu.Person(testSheetID).Type("Part_Input", "C1", "name"); err != nil { // header id,name,name,…
		t.Fatal(err)
	}
	grids, err := h.p.ReadGridRows(context.Background(), w, map[string]sheetsio.GridRequest{"Part_Input": {Rows: []int{2}}})
	if err != nil {
		t.Fatal(err)
	}
	var e *sheetsio.Error
	if g := grids["Part_Input"]; !errors.As(g.Err, &e) || e.Code != sheetsio.CodeHeaderDrift || len(g.Rows) != 0 {
		t.Fatalf("header drift not reported: %+v", g)
	}
}

func TestReadGridRowsFallsBackToAWholeReadWhenARowIsPastTheGrid(t *testing.T) {
	h, w := eightParts(t)
	if err := h.emu.Person(testSheetID).ResizeTab("Part_Input", 9, 4); err != nil { // rows deleted since the rows were chosen
		t.Fatal(err)
	}
	h.emu.ResetCounters()
	grids, err := h.p.ReadGridRows(context.Background(), w, map[string]sheetsio.GridRequest{"Part_Input": {Rows: []int{3, 12}}})
	if err != nil {
		t.Fatal(err)
	}
	// The rejected ranged read, then the tab listing and the whole-tab read.
	if g, c := grids["Part_Input"], h.counters(); g.Err != nil || g.Partial || len(g.Rows) != 8 || g.Rows[7].Anchor != "a8" || c.Reads != 3 {
		t.Fatalf("fallback read (%d reads): %+v", c.Reads, g)
	}
}
