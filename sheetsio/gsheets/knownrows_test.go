package gsheets

import (
	"context"
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// keptHarness appends rows k1 and k2 to Part_System, then updates k1
// with a read (which verifies the fence and keeps the tab's rows), so the
// next updates of Part_System may go without a read. It returns the
// rows' hashes as the store would expect them.
func keptHarness(t *testing.T) (*harness, *sheetsio.Workbook, *sheetsio.Fence, *movingClock, map[string]string) {
	t.Helper()
	clk := &movingClock{now: fixedNow}
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.Now = clk.Now })
	w := h.provision(testSchema(t))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "k1", partValues("k1", 1)),
		appendOp("Part_System", "k2", partValues("k2", 1))}})
	hashes := map[string]string{"k1": h.wantStatus(res, 0, sheetsio.StatusApplied).WrittenHash, "k2": h.wantStatus(res, 1, sheetsio.StatusApplied).WrittenHash}
	if h.p.RowsKnown(w, *fence) {
		t.Fatal("rows known after appends (a partial read)")
	}
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{qtyUpdate("k1", 2, hashes["k1"])}})
	if h.wantStatus(res, 0, sheetsio.StatusApplied); res.Reads == 0 {
		t.Fatal("the first update went without a read")
	}
	hashes["k1"] = res.Ops[0].WrittenHash
	if !h.p.RowsKnown(w, *fence) {
		t.Fatal("no rows known after an update's read")
	}
	return h, w, fence, clk, hashes
}

// qtyUpdate sets the qty of Part_System's row anchor.
func qtyUpdate(anchor string, qty int64, expected string) sheetsio.Op {
	id := "upd-" + anchor + "-" + string(rune('0'+qty))
	return sheetsio.Op{ID: id, Tab: "Part_System", Kind: sheetsio.OpUpdate, Anchor: anchor, Values: map[string]any{"qty": qty},
		ExpectedHash: expected, Receipt: &sheetsio.Receipt{EffectID: id, PayloadHash: "ph-" + id}}
}

// qtyShown is the qty Part_System shows on the row of anchor.
func qtyShown(h *harness, anchor string) any {
	h.t.Helper()
	for _, r := range h.values("Part_System")[1:] {
		if len(r) > 6 && r[6] == anchor {
			return r[2]
		}
	}
	return nil
}

func TestUpdatesOfKeptSystemRowsGoWithoutARead(t *testing.T) {
	h, w, fence, clk, hashes := keptHarness(t)
	for qty := int64(3); qty <= 4; qty++ { // the second pass plans on the rows the first wrote
		before := h.counters()
		res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{qtyUpdate("k1", qty, hashes["k1"]), qtyUpdate("k2", qty, hashes["k2"])}})
		after := h.counters()
		hashes["k1"], hashes["k2"] = h.wantStatus(res, 0, sheetsio.StatusApplied).WrittenHash, h.wantStatus(res, 1, sheetsio.StatusApplied).WrittenHash
		if after.Reads != before.Reads || after.Writes-before.Writes != 1 || res.Reads != 0 {
			t.Fatalf("qty %d: cost %d reads + %d writes, want 0 + 1", qty, after.Reads-before.Reads, after.Writes-before.Writes)
		}
		if got := qtyShown(h, "k2"); got != float64(qty) {
			t.Fatalf("qty %d: k2 shows %v", qty, got)
		}
		recs, err := h.p.ReadReceipts(context.Background(), w, res.Ops[1].ID)
		if r, ok := recs[res.Ops[1].ID]; err != nil || !ok || r.RowHash != hashes["k2"] || r.Epoch != fence.Epoch {
			t.Fatalf("receipt %+v (found %v): %v", r, ok, err)
		}
	}
	// A hash the kept rows do not show, an Input row, an authority
	// refresh and rows older than the trust window all read first.
	stale := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{qtyUpdate("k1", 5, "not-the-row")}})
	if h.wantStatus(stale, 0, sheetsio.StatusGuardFailed); stale.Reads == 0 {
		t.Fatal("a mismatch against the kept rows went without a read")
	}
	refresh := h.dispatch(w, sheetsio.Batch{Fence: fence, Refresh: true, Ops: []sheetsio.Op{qtyUpdate("k1", 6, hashes["k1"])}})
	if hashes["k1"] = h.wantStatus(refresh, 0, sheetsio.StatusApplied).WrittenHash; refresh.Reads == 0 {
		t.Fatal("an authority refresh went without a read")
	}
	clk.advance(DefaultTrustTTL)
	if h.p.RowsKnown(w, *fence) {
		t.Fatal("rows known past the trust window")
	}
	old := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{qtyUpdate("k1", 7, hashes["k1"])}})
	if h.wantStatus(old, 0, sheetsio.StatusApplied); old.Reads == 0 {
		t.Fatal("rows older than the trust window were not read again")
	}
}

// A person's edit of another cell of a kept row, made after the read,
// shows in the write's own response: the update fails its guard as a read
// would have made it fail, and the tab is read again from then on.
func TestI06_AKeptRowAPersonChangedFailsItsGuardInTheWritesResponse(t *testing.T) {
	h, w, fence, _, hashes := keptHarness(t)
	if err := h.emu.Person(testSheetID).Type("Part_System", "B3", "typed over"); err != nil { // k2's name
		t.Fatal(err)
	}
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{qtyUpdate("k1", 3, hashes["k1"]), qtyUpdate("k2", 3, hashes["k2"])}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	got := h.wantStatus(res, 1, sheetsio.StatusGuardFailed)
	if got.Reason != sheetsio.ReasonRowHashMismatch || got.ObservedHash == "" || got.ObservedHash == got.WrittenHash || res.Reads != 0 {
		t.Fatalf("k2: reason %q, observed %q, written %q, %d reads", got.Reason, got.ObservedHash, got.WrittenHash, res.Reads)
	}
	next := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{qtyUpdate("k1", 4, res.Ops[0].WrittenHash)}})
	if h.wantStatus(next, 0, sheetsio.StatusApplied); next.Reads == 0 {
		t.Fatal("the tab's rows stayed kept after a row drifted")
	}
}

// A pass of updates without a preflight read under a stale fence (a
// newer writer's authority since the read): the fence is checked in the
// write's own atomic response, so no op is taken as applied (each is
// uncertain, for a probe), the trust and the kept rows are forgotten, and
// the next dispatch reads and refuses before any write.
func TestI05_APassWithoutAReadUnderAStaleFenceIsNotTakenAsApplied(t *testing.T) {
	h, w, fence, _, hashes := keptHarness(t)
	newer := sheetsio.Fence{StoreID: "store", Epoch: 2, Token: "t2"}
	other := sheetsio.OpenWorkbook(testSheetID, w.Schema(), w.SheetIDs())
	if err := h.p.WriteAuthority(context.Background(), other, newer); err != nil {
		t.Fatal(err)
	}
	if !h.p.RowsKnown(w, *fence) {
		t.Fatal("the deposed client no longer trusts its fence: the test proves nothing")
	}
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{qtyUpdate("k1", 3, hashes["k1"])}})
	got := h.wantStatus(res, 0, sheetsio.StatusUncertain)
	if writeCodeOf(got.Err) != sheetsio.WriteUnverified || !errors.Is(got.Err, sheetsio.ErrWriteUncertain) || res.Reads != 0 {
		t.Fatalf("err = %v (%d reads)", got.Err, res.Reads)
	}
	if h.p.RowsKnown(w, *fence) {
		t.Fatal("rows still known after the response showed a newer authority")
	}
	before := h.counters().Writes
	_, err := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{qtyUpdate("k2", 3, hashes["k2"])}})
	if !errors.Is(err, sheetsio.ErrAuthorityStale) || h.counters().Writes != before {
		t.Fatalf("err = %v, wrote %v", err, h.counters().Writes != before)
	}
	if got := qtyShown(h, "k2"); got != float64(1) {
		t.Fatalf("k2 shows qty %v after the refused dispatch", got)
	}
}
