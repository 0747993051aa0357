package gsheets

import (
	"context"
	"errors"
	"slices"
	"testing"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func TestProvisionCreatesEveryTabInOneBatchUpdate(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t, "Part", "Bin")
	h.provision(s)
	if c := h.counters(); c.Writes != 1 || c.Reads > 2 {
		t.Fatalf("provision cost %+v, want ≤ 2 reads + 1 write", c)
	}
	titles := h.tabTitles()
	for _, n := range s.TabNames() {
		if !slices.Contains(titles, n) {
			t.Fatalf("tab %s missing from %v", n, titles)
		}
		spec, _ := s.Tab(n)
		got := h.values(n)
		if len(got) != 1 || len(got[0]) != len(spec.Columns) {
			t.Fatalf("%s header = %v", n, got)
		}
		for i, c := range spec.Columns {
			if got[0][i] != c.Name {
				t.Fatalf("%s header[%d] = %v, want %s", n, i, got[0][i], c.Name)
			}
		}
	}
	ss, err := h.raw.Spreadsheets.Get(testSheetID).Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range ss.Sheets {
		pr := sh.Properties
		wantHidden := pr.Title == layout.ReceiptsTab || pr.Title == layout.AuthorityTab
		if _, ours := s.Tab(pr.Title); ours && (pr.Hidden != wantHidden || pr.GridProperties.FrozenRowCount != 1) {
			t.Fatalf("tab %s hidden=%v frozen=%d", pr.Title, pr.Hidden, pr.GridProperties.FrozenRowCount)
		}
	}
	before := h.counters().Writes
	h.provision(s)
	if h.counters().Writes != before {
		t.Fatal("re-provisioning wrote again")
	}
}

func TestProvisionIdempotentAfterLostResponse(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t)
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	_, err := h.p.Provision(context.Background(), testSheetID, s)
	var werr *sheetsio.WriteError
	if !errors.As(err, &werr) || werr.Outcome != sheetsio.Uncertain {
		t.Fatalf("lost response: want uncertain *WriteError, got %v", err)
	}
	w := h.provision(s)
	titles := h.tabTitles()
	for _, n := range s.TabNames() {
		if c := countOf(titles, n); c != 1 {
			t.Fatalf("tab %s present %d times", n, c)
		}
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 5))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func TestC05_DriftedHeaderBlocksOnlyThatTab(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t)
	w := h.provision(s)
	// A person duplicates a header on Part_Input: id,name,name,...
	if err := h.emu.Person(testSheetID).Type("Part_Input", "C1", "name"); err != nil {
		t.Fatal(err)
	}
	_, err := h.p.Provision(context.Background(), testSheetID, s)
	var he *layout.HeaderError
	if !errors.Is(err, sheetsio.ErrHeaderDrift) || !errors.As(err, &he) || he.Tab != "Part_Input" {
		t.Fatalf("provision over drift: %v", err)
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "a", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "r1", Values: map[string]any{"id": "1"}},
		appendOp("Part_System", "r1", partValues("1", 5)),
	}})
	if got := h.wantStatus(res, 0, sheetsio.StatusBlocked); got.Reason != sheetsio.CodeHeaderDrift || !errors.As(got.Err, &he) {
		t.Fatalf("blocked op = %+v", got)
	}
	h.wantStatus(res, 1, sheetsio.StatusApplied)
	if rows := h.values("Part_Input"); len(rows) != 1 {
		t.Fatalf("drifted tab was written: %v", rows)
	}
}

func TestC05_StrayCellsIgnoredAndReported(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 5))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if err := h.emu.Person(testSheetID).Type("Part_System", "K2", "x"); err != nil {
		t.Fatal(err)
	}
	// An append-only dispatch reads the tab's header and anchor column
	// only: the stray cell neither blocks it nor shows up.
	res = h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r2", partValues("2", 5))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	// An update reads the whole tab: the stray is ignored and reported.
	written := res.Ops[0].WrittenHash
	res = h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{{ID: "u2", Tab: "Part_System", Kind: sheetsio.OpUpdate, Anchor: "r2",
		Values: map[string]any{"qty": int64(6)}, ExpectedHash: written}}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if res.Strays["Part_System"] != 1 {
		t.Fatalf("strays = %v", res.Strays)
	}
	snaps, err := h.p.Snapshot(context.Background(), w, "Part_System")
	if err != nil || len(snaps["Part_System"].Strays) != 1 {
		t.Fatalf("snapshot strays %v (%v)", snaps["Part_System"].Strays, err)
	}
}

func TestRenamedTabKeepsWorking(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t)
	w := h.provision(s)
	id := w.SheetIDs()["Part_System"]
	if err := h.emu.Person(testSheetID).RenameTab("Part_System", "Parts (renamed)"); err != nil {
		t.Fatal(err)
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 5))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	// A fresh provider process rediscovers the renamed tab by its sheetId.
	w2 := h.provision(s)
	if w2.SheetIDs()["Part_System"] != id || countOf(h.tabTitles(), "Part_System") != 0 {
		t.Fatalf("renamed tab not rediscovered: %v %v", w2.SheetIDs(), h.tabTitles())
	}
	if rows := h.values("Parts (renamed)"); len(rows) != 2 {
		t.Fatalf("renamed tab rows = %v", rows)
	}
}

func deleteSheetBody(id int64) *sheets.BatchUpdateSpreadsheetRequest {
	return &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{DeleteSheet: &sheets.DeleteSheetRequest{SheetId: id}}}}
}

// TestProvisionExtendsASyncConflictsTabWrittenBeforeTheResolutionColumns:
// a tab whose header is the layout's prefix gets the missing header cells
// in place; its rows are kept and written to as before.
func TestProvisionExtendsASyncConflictsTabWrittenBeforeTheResolutionColumns(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t)
	w := h.provision(s)
	spec, _ := s.Tab(layout.ConflictsTab)
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{{ID: "o", Tab: layout.ConflictsTab, Kind: sheetsio.OpAppend, Anchor: "cf1",
		Values: map[string]any{layout.ConflictID: "cf1", layout.ConflictStatus: "OPEN"}}}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	p := h.emu.Person(testSheetID)
	for _, ref := range []string{"K1", "L1"} { // the header as an earlier layout wrote it
		if err := p.Type(layout.ConflictsTab, ref, ""); err != nil {
			t.Fatal(err)
		}
	}
	if snaps, err := h.p.Snapshot(context.Background(), w, layout.ConflictsTab); err != nil || !errors.Is(snaps[layout.ConflictsTab].Err, sheetsio.ErrHeaderDrift) {
		t.Fatalf("the earlier header reads as %v %v, want drift", snaps, err)
	}
	if _, err := h.p.Provision(context.Background(), testSheetID, s); err != nil {
		t.Fatalf("provision over the earlier header: %v", err)
	}
	got := h.values(layout.ConflictsTab)
	if len(got) != 2 || !slices.Equal(toStrings(got[0]), spec.Headers()) || got[1][0] != "cf1" {
		t.Fatalf("tab after provision %v", got)
	}
	w = h.provision(s)
	res = h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{{ID: "u", Tab: layout.ConflictsTab, Kind: sheetsio.OpUpdate, Anchor: "cf1",
		Values: map[string]any{layout.ConflictStatus: "RESOLVED"}, ExpectedHash: res.Ops[0].WrittenHash}}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
}

// TestAPersonsChoiceNeverChangesTheRowGuard: the resolution cell is left
// out of the row hash, so a system update written over the row hash it
// last wrote applies after a person chose, and keeps the choice.
func TestAPersonsChoiceNeverChangesTheRowGuard(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{{ID: "o", Tab: layout.ConflictsTab, Kind: sheetsio.OpAppend, Anchor: "cf1",
		Values: map[string]any{layout.ConflictID: "cf1", layout.ConflictStatus: "OPEN"}}}})
	written := h.wantStatus(res, 0, sheetsio.StatusApplied).WrittenHash
	if err := h.emu.Person(testSheetID).Type(layout.ConflictsTab, "K2", "use sheet"); err != nil {
		t.Fatal(err)
	}
	res = h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{{ID: "u", Tab: layout.ConflictsTab, Kind: sheetsio.OpUpdate, Anchor: "cf1",
		Values: map[string]any{layout.ConflictStatus: "RESOLVED"}, ExpectedHash: written}}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if row := h.values(layout.ConflictsTab)[1]; row[6] != "RESOLVED" || row[10] != "use sheet" {
		t.Fatalf("row %v", row)
	}
}

func toStrings(row []any) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i], _ = v.(string)
	}
	return out
}
