package gsheets

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// A value over the 50,000-character cell limit is written as its marker
// (the atomic batchUpdate would otherwise fail every op in the chunk): the
// rest of its row is written, the result names the column and the reason,
// and the written hash is the row ExpectedRowHash predicts; a value of
// exactly 50,000 characters round-trips.
func TestOverlongValueBecomesAMarkerAndTheRestOfTheRowIsWritten(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	max := partValues("max", 1)
	max["name"] = strings.Repeat("é", 50_000)
	over := partValues("over", 2)
	over["name"] = strings.Repeat("x", 50_000) + "SECRET-PAYLOAD"
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		appendOp("Part_System", "max", max),
		appendOp("Part_System", "over", over),
		appendOp("Part_System", "ok", partValues("ok", 3)),
	}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	got := h.wantStatus(res, 1, sheetsio.StatusApplied)
	want := []sheetsio.MarkedCell{{Column: "name", Mark: cell.Mark{Reason: cell.UnwritableTooLarge, Chars: 50_014}}}
	if !reflect.DeepEqual(got.Marked, want) {
		t.Fatalf("marked = %+v, want %+v", got.Marked, want)
	}
	h.wantStatus(res, 2, sheetsio.StatusApplied)
	spec, _ := w.Schema().Tab("Part_System")
	if exp, err := sheetsio.ExpectedRowHash(spec, "over", over); err != nil || exp != got.WrittenHash {
		t.Fatalf("expected row hash %s, %v; written %s", exp, err, got.WrittenHash)
	}
	rows := h.values("Part_System")
	if len(rows) != 4 || rows[1][1] != max["name"] {
		t.Fatalf("rows after dispatch: %d", len(rows))
	}
	if rows[2][1] != "#HIKOUTEI! value_too_large (50014 characters)" || rows[2][2] != 2.0 {
		t.Fatalf("marked row = %.80v", rows[2])
	}
	if s := fmt.Sprint(res.Ops[1].Err) + h.logs.String(); strings.Contains(s, "SECRET-PAYLOAD") || strings.Contains(s, testSheetID) {
		t.Fatal("error or log carries the payload or the spreadsheet id")
	}
}

// Concurrent dispatches through one Provider against one spreadsheet must
// be race-free and never produce two rows for one anchor.
func TestConcurrentDispatchesKeepOneRowPerAnchor(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				anchor := fmt.Sprintf("r%d", i) // every goroutine races for the same anchors
				op := appendOp("Part_System", anchor, partValues(anchor, int64(i)))
				op.ID = fmt.Sprintf("g%d-%s", g, anchor)
				op.Receipt = &sheetsio.Receipt{EffectID: op.ID, PayloadHash: "ph"}
				if _, err := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Ops: []sheetsio.Op{op}}); err != nil {
					t.Error(err)
				}
				if _, err := h.p.Snapshot(context.Background(), w, "Part_System"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	rows := h.values("Part_System")
	spec, _ := w.Schema().Tab("Part_System")
	for i := 0; i < 4; i++ {
		// Dispatch is plan-then-write without a lock across processes, so two
		// racing appends may both land; the snapshot must expose the duplicate
		// (I16) rather than hide it.
		anchor := fmt.Sprintf("r%d", i)
		n := rowsWithAnchor(rows, spec.Anchor, anchor)
		if n < 1 {
			t.Fatalf("anchor %s missing", anchor)
		}
		snaps, err := h.p.Snapshot(context.Background(), w, "Part_System")
		if err != nil {
			t.Fatal(err)
		}
		if got := len(snaps["Part_System"].Find(anchor)); got != n {
			t.Fatalf("snapshot finds %d rows for %s, sheet has %d", got, anchor, n)
		}
	}
}

// A hostile or broken server must not crash the provider: negative or huge
// row offsets and merges in grid data are ignored.
func TestReadGridSurvivesHostileGridData(t *testing.T) {
	rows := observedRows(&sheets.Sheet{
		Data: []*sheets.GridData{
			{StartRow: -5, RowData: []*sheets.RowData{{Values: []*sheets.CellData{{}}}}},
			{StartRow: 1 << 40, RowData: []*sheets.RowData{{Values: []*sheets.CellData{{}}}}},
			{StartRow: 0, RowData: []*sheets.RowData{{Values: []*sheets.CellData{{}}}}},
		},
		Merges: []*sheets.GridRange{
			{StartRowIndex: -3, EndRowIndex: 1, StartColumnIndex: -2, EndColumnIndex: 1},
			{StartRowIndex: 0, EndRowIndex: 1, StartColumnIndex: 0, EndColumnIndex: 1 << 40},
		},
	})
	if len(rows) != 1 {
		t.Fatalf("rows = %d", len(rows))
	}
}

// C06 race: a person deletes a row between the dispatch's preflight read
// and its write. The update of anchor a is addressed by the preflight row
// number, so Sheets writes its cell into the row now there (b's): Sheets
// has no conditional write. The batchUpdate's own atomic response shows
// the written row, so the dispatch reports the op misdirected, naming b's
// row and the overwritten cell, without an extra request.
func TestC06_UpdateLandingOnTheNeighbourAfterADeleteIsReportedMisdirected(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "a", partValues("a", 1)), appendOp("Part_System", "b", partValues("b", 2))}})
	h.wantStatus(res, 1, sheetsio.StatusApplied)
	spec, _ := w.Schema().Tab("Part_System")
	hash, err := sheetsio.ExpectedRowHash(spec, "a", partValues("a", 1))
	if err != nil {
		t.Fatal(err)
	}
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		if err := h.emu.Person(testSheetID).DeleteRows("Part_System", 2, 1); err != nil { // row of anchor "a"
			t.Error(err)
		}
	}})
	h.emu.ResetCounters()
	res = h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{{ID: "u", Tab: "Part_System", Kind: sheetsio.OpUpdate,
		Anchor: "a", ExpectedHash: hash, Values: map[string]any{"qty": int64(99)}}}})
	if c := h.counters(); c.Writes != 1 || c.Reads != 1 {
		t.Fatalf("requests: %+v (one ranged read and one batchUpdate)", c)
	}
	got := h.wantStatus(res, 0, sheetsio.StatusMisdirected)
	m := got.Misdirected
	if got.Reason != sheetsio.ReasonWriteMisdirected || m == nil || m.DisplacedAnchor != "b" || m.SheetRow != 2 ||
		len(m.Columns) != 1 || m.Columns[0] != "qty" {
		t.Fatalf("op = %+v, misdirection %+v", got, m)
	}
	rows := h.values("Part_System")
	if len(rows) != 2 || rows[1][2] != float64(99) {
		t.Fatalf("the race did not happen as staged: %v", rows)
	}
	shown, err := sheetsio.ExpectedRowHash(spec, "b", partValues("b", 99))
	if err != nil || m.RowHash != shown {
		t.Fatalf("displaced row hash %s, want the row as it shows now %s (%v)", m.RowHash, shown, err)
	}
}

// An update whose row did not move is verified in the same response and
// applied; the chunk's own deletes of rows above it (sent after it) are
// accounted for.
func TestC06_UpdateVerifiedAcrossTheBatchsOwnDeletes(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	var ops []sheetsio.Op
	for _, a := range []string{"a", "b", "c", "d"} {
		ops = append(ops, appendOp("Part_System", a, partValues(a, 1)))
	}
	h.dispatch(w, sheetsio.Batch{Ops: ops})
	spec, _ := w.Schema().Tab("Part_System")
	ha, _ := sheetsio.ExpectedRowHash(spec, "a", partValues("a", 1))
	hd, _ := sheetsio.ExpectedRowHash(spec, "d", partValues("d", 1))
	hb, _ := sheetsio.ExpectedRowHash(spec, "b", partValues("b", 1))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "del-a", Tab: "Part_System", Kind: sheetsio.OpDelete, Anchor: "a", ExpectedHash: ha},
		{ID: "del-b", Tab: "Part_System", Kind: sheetsio.OpDelete, Anchor: "b", ExpectedHash: hb},
		{ID: "up-d", Tab: "Part_System", Kind: sheetsio.OpUpdate, Anchor: "d", ExpectedHash: hd, Values: map[string]any{"qty": int64(7)}},
	}})
	for i := range res.Ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	rows := h.values("Part_System")
	if len(rows) != 3 || rows[2][0] != "d" || rows[2][2] != float64(7) {
		t.Fatalf("rows = %v", rows)
	}
}
