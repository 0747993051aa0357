package gsheets

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// rowsAndReceiptsAgree checks that each op's row shows at most once and
// that its row shows exactly when its receipt landed (a probe after an
// uncertain body reads the receipt), and returns the ops not landed.
func rowsAndReceiptsAgree(t *testing.T, h *harness, w *sheetsio.Workbook, ops []sheetsio.Op) []sheetsio.Op {
	t.Helper()
	spec, _ := w.Schema().Tab("Part_System")
	rows := h.values("Part_System")
	ids := make([]string, len(ops))
	for i, op := range ops {
		ids[i] = op.Receipt.EffectID
	}
	recs, err := h.p.ReadReceipts(context.Background(), w, ids...)
	if err != nil {
		t.Fatal(err)
	}
	var missing []sheetsio.Op
	for _, op := range ops {
		n := rowsWithAnchor(rows, spec.Anchor, op.Anchor)
		_, rec := recs[op.Receipt.EffectID]
		if n > 1 || (n == 1) != rec {
			t.Fatalf("anchor %s: %d rows, receipt %v", op.Anchor, n, rec)
		}
		if n == 0 {
			missing = append(missing, op)
		}
	}
	return missing
}

// A fault of any kind on one body of a wave leaves every other body's rows
// applied with their receipts; the faulted body's rows are uncertain or
// not sent, and its rows show exactly when its receipts do. Resending what
// the probe found missing lands every row once.
func TestAFaultOnOneBodyOfAWaveLosesAndDuplicatesNothing(t *testing.T) {
	for _, kind := range []emulator.FaultKind{emulator.Fault429, emulator.Fault500, emulator.Fault503,
		emulator.FaultApplyThen503, emulator.FaultApplyThenDrop, emulator.FaultDrop, emulator.FaultHTML502,
		emulator.FaultHang, emulator.FaultApplyThenHang} {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) {
				c.MaxBatchBytes, c.RequestTimeout = 16<<10, 2*time.Second
			})
			w := h.provision(testSchema(t))
			fence := &sheetsio.Fence{StoreID: "s", Epoch: 1, Token: "t1"}
			h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "warm", partValues("warm", 1))}})
			ops := make([]sheetsio.Op, 200)
			for i := range ops {
				ops[i] = appendOp("Part_System", fmt.Sprintf("r%03d", i), partValues(fmt.Sprint(i), int64(i)))
			}
			h.emu.ScriptFaults(emulator.Fault{Kind: kind, Match: emulator.MatchWrites})
			res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: ops})
			if res.Chunks < 4 {
				t.Fatalf("%d bodies", res.Chunks)
			}
			bad := 0
			for i, r := range res.Ops {
				switch r.Status {
				case sheetsio.StatusApplied:
				case sheetsio.StatusUncertain, sheetsio.StatusFailed, sheetsio.StatusNotSent:
					bad++
				default:
					t.Fatalf("op %d: %s (%v)", i, r.Status, r.Err)
				}
			}
			if bad == 0 || bad == len(ops) {
				t.Fatalf("%d of %d ops not applied; want one body's", bad, len(ops))
			}
			missing := rowsAndReceiptsAgree(t, h, w, ops)
			if len(missing) > 0 {
				res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: missing})
				for i := range missing {
					h.wantStatus(res, i, sheetsio.StatusApplied)
				}
			}
			wantRowsOnce(t, h, w, ops, fence.Epoch)
		})
	}
}

// A newer writer takes the authority over while a wave of blind appends is
// in flight: the body that arrives after the takeover is not applied
// (uncertain, its response shows the newer epoch), the trust is forgotten
// and the deposed writer's next dispatch is refused before any write.
func TestATakeoverDuringAWaveOfBlindAppendsStopsTheDeposedWriter(t *testing.T) {
	clk := &movingClock{now: fixedNow}
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.Now, c.MaxBatchBytes = clk.Now, 16<<10 })
	w := h.provision(testSchema(t))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{firstSend("Part_System", "warm", partValues("warm", 1))}})
	h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "warm2", partValues("warm2", 1))}})
	ops := make([]sheetsio.Op, 200)
	for i := range ops {
		ops[i] = firstSend("Part_System", fmt.Sprintf("r%03d", i), partValues(fmt.Sprint(i), int64(i)))
	}
	w3 := sheetsio.OpenWorkbook(testSheetID, w.Schema(), w.SheetIDs())
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		if err := h.p.WriteAuthority(context.Background(), w3, sheetsio.Fence{StoreID: "store", Epoch: 2, Token: "t2"}); err != nil {
			t.Error(err)
		}
	}})
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: ops})
	if res.Reads != 0 || res.Chunks < 4 {
		t.Fatalf("%d reads, %d bodies: want a blind wave", res.Reads, res.Chunks)
	}
	uncertain := 0
	for _, r := range res.Ops {
		if r.Status == sheetsio.StatusUncertain {
			uncertain++
		}
	}
	if uncertain == 0 {
		t.Fatal("no op uncertain after a takeover during the wave")
	}
	rowsAndReceiptsAgree(t, h, w, ops)
	writes := h.counters().Writes
	_, err := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{firstSend("Part_System", "late", partValues("late", 1))}})
	if !errors.Is(err, sheetsio.ErrAuthorityStale) || h.counters().Writes != writes {
		t.Fatalf("deposed writer's next dispatch: err = %v, wrote %v", err, h.counters().Writes != writes)
	}
}

// A person sorts the tab and inserts blank rows while a wave is in flight:
// every row lands once, and each can then be updated by its anchor.
func TestAPersonSortingAndInsertingDuringAWaveMovesNoRowTwice(t *testing.T) {
	h, w, ops := chunkedAppends(t, 200)
	fence := &sheetsio.Fence{StoreID: "s", Epoch: 1, Token: "t1"}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "warm", partValues("warm", 1)), appendOp("Part_System", "warm2", partValues("warm2", 2))}})
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		p := h.emu.Person(testSheetID)
		if err := p.SortByColumn("Part_System", "A", true, 1); err != nil {
			t.Error(err)
		}
		if err := p.InsertRows("Part_System", 2, 3); err != nil {
			t.Error(err)
		}
	}})
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: ops})
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	wantRowsOnce(t, h, w, ops, fence.Epoch)
	spec, _ := w.Schema().Tab("Part_System")
	hash, err := sheetsio.ExpectedRowHash(spec, "r007", partValues("7", 7))
	if err != nil {
		t.Fatal(err)
	}
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{{ID: "u", Tab: "Part_System", Kind: sheetsio.OpUpdate,
		Anchor: "r007", ExpectedHash: hash, Values: map[string]any{"qty": int64(99)}}}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
}

// The spreadsheet fills up while a wave is in flight (a person adds a tab
// that leaves room for about a thousand cells): bodies the limit refuses land
// nothing, the others land with their receipts, and once the person frees
// the space, resending what is missing lands every row once.
func TestTheSpreadsheetFillingUpDuringAWaveLosesAndDuplicatesNothing(t *testing.T) {
	h, w, ops := chunkedAppends(t, 200)
	fence := &sheetsio.Fence{StoreID: "s", Epoch: 1, Token: "t1"}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "warm", partValues("warm", 1))}})
	person := h.emu.Person(testSheetID)
	ss, err := h.raw.Spreadsheets.Get(testSheetID).Do()
	if err != nil {
		t.Fatal(err)
	}
	cols := 0
	for _, sh := range ss.Sheets {
		if sh.Properties.Title == "Part_System" {
			cols = int(sh.Properties.GridProperties.ColumnCount)
		}
	}
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		err := person.ResizeTab("Part_System", 2, cols) // its header and the warm row: every append grows the grid
		n := 0
		if err == nil {
			n, err = person.GridCells()
		}
		if err == nil {
			_, err = person.AddTab("Archive", (sheetsio.MaxSpreadsheetCells-n-1000)/10, 10)
		}
		if err != nil {
			t.Error(err)
		}
	}})
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: ops})
	refused := 0
	for i, r := range res.Ops {
		switch r.Status {
		case sheetsio.StatusApplied:
		case sheetsio.StatusFailed, sheetsio.StatusNotSent, sheetsio.StatusUncertain, sheetsio.StatusBlocked:
			refused++
		default:
			t.Fatalf("op %d: %s (%v)", i, r.Status, r.Err)
		}
	}
	if refused == 0 {
		t.Fatalf("no op refused with the spreadsheet full (%d bodies)", res.Chunks)
	}
	missing := rowsAndReceiptsAgree(t, h, w, ops)
	t.Logf("%d bodies: %d ops refused, %d rows missing", res.Chunks, refused, len(missing))
	if err := person.ResizeTab("Archive", 1, 1); err != nil {
		t.Fatal(err)
	}
	for range 3 { // the grid is read again after a capacity refusal
		if len(missing) == 0 {
			break
		}
		h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: missing})
		missing = rowsAndReceiptsAgree(t, h, w, ops)
	}
	wantRowsOnce(t, h, w, ops, fence.Epoch)
}
