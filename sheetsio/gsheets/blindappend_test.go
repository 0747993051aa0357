package gsheets

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// movingClock is an injected clock tests advance by hand.
type movingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *movingClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// firstSend is appendOp marked as an effect's first send.
func firstSend(tab, anchor string, vals map[string]any) sheetsio.Op {
	op := appendOp(tab, anchor, vals)
	op.FirstSend = true
	return op
}

// blindHarness provisions Part and verifies its tabs and the fence with
// one read-path dispatch, so the next first-send appends may go blind.
func blindHarness(t *testing.T) (*harness, *sheetsio.Workbook, *sheetsio.Fence, *movingClock) {
	t.Helper()
	clk := &movingClock{now: fixedNow}
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.Now = clk.Now })
	w := h.provision(testSchema(t))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{firstSend("Part_System", "warm", partValues("warm", 1)),
		firstSend("Part_Input", "warm", map[string]any{"id": "warm", "qty": int64(1)})}})
	if h.wantStatus(res, 0, sheetsio.StatusApplied); res.Reads == 0 {
		t.Fatal("the first dispatch went blind with nothing verified")
	}
	// The authority was mirrored in that batch; one more read verifies it.
	h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "warm2", partValues("warm2", 1))}})
	return h, w, fence, clk
}

func TestBlindAppendOfFirstSendsCostsOneRequestAndNoRead(t *testing.T) {
	h, w, fence, _ := blindHarness(t)
	before := h.counters()
	ops := []sheetsio.Op{firstSend("Part_System", "a1", partValues("a1", 1)), firstSend("Part_Input", "a1", map[string]any{"id": "a1", "qty": int64(2)})}
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: ops})
	after := h.counters()
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	if after.Reads != before.Reads || after.Writes-before.Writes != 1 || res.Reads != 0 || res.Writes != 1 {
		t.Fatalf("cost %d reads + %d writes (result %d/%d), want 0 + 1",
			after.Reads-before.Reads, after.Writes-before.Writes, res.Reads, res.Writes)
	}
	if res.Authority.Epoch != fence.Epoch || !res.Authority.Present {
		t.Fatalf("authority = %+v", res.Authority)
	}
	recs, err := h.p.ReadReceipts(context.Background(), w, ops[0].Receipt.EffectID)
	r, ok := recs[ops[0].Receipt.EffectID]
	if err != nil || !ok || r.Epoch != fence.Epoch || r.RowHash != res.Ops[0].WrittenHash {
		t.Fatalf("receipt %+v (found %v): %v", r, ok, err)
	}
	// A resend (not a first send), an update or an expired trust reads.
	for name, b := range map[string]sheetsio.Batch{
		"resend": {Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "a2", partValues("a2", 1))}},
		"mixed": {Fence: fence, Ops: []sheetsio.Op{firstSend("Part_System", "a3", partValues("a3", 1)),
			{ID: "u", Tab: "Part_System", Kind: sheetsio.OpUpdate, Anchor: "a1", Values: map[string]any{"qty": int64(5)}, ExpectedHash: res.Ops[0].WrittenHash}}},
	} {
		if got := h.dispatch(w, b); got.Reads == 0 {
			t.Fatalf("%s: went blind", name)
		}
	}
}

func TestI16_LostResponseOfABlindAppendIsNeverAppendedTwice(t *testing.T) {
	h, w, fence, _ := blindHarness(t)
	op := firstSend("Part_System", "lost", partValues("lost", 1))
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThenDrop, Match: emulator.MatchWrites})
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{op}})
	if h.wantStatus(res, 0, sheetsio.StatusUncertain); res.Reads != 0 {
		t.Fatalf("the first send read %d times", res.Reads)
	}
	// The probe's evidence: the receipt landed with the row, atomically.
	recs, err := h.p.ReadReceipts(context.Background(), w, op.Receipt.EffectID)
	if _, ok := recs[op.Receipt.EffectID]; err != nil || !ok {
		t.Fatalf("no receipt after an applied write: %v", err)
	}
	// The resend reads first; so does a careless one still marked first
	// send (the failure forgot the trust). Neither appends again.
	resend := op
	resend.FirstSend = false
	for _, again := range []sheetsio.Op{op, resend} {
		res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{again}})
		if h.wantStatus(res, 0, sheetsio.StatusUnchanged); res.Reads == 0 || res.Writes != 0 {
			t.Fatalf("resend: %d reads, %d writes", res.Reads, res.Writes)
		}
	}
	spec, _ := w.Schema().Tab("Part_System")
	if n := rowsWithAnchor(h.values("Part_System"), spec.Anchor, "lost"); n != 1 {
		t.Fatalf("anchor shows on %d rows, want 1", n)
	}
}

func TestBlindAppendIntoADriftedHeaderIsCaughtAndTheTabStaysBlocked(t *testing.T) {
	h, w, fence, _ := blindHarness(t)
	if err := h.emu.Person(testSheetID).Type("Part_System", "B1", "renamed"); err != nil {
		t.Fatal(err)
	}
	// Drift after the last verification: the write's own response shows it.
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{firstSend("Part_System", "d1", partValues("d1", 1))}})
	got := h.wantStatus(res, 0, sheetsio.StatusUncertain)
	if writeCodeOf(got.Err) != sheetsio.WriteUnverified || !errors.Is(got.Err, sheetsio.ErrWriteUncertain) || res.Reads != 0 {
		t.Fatalf("err = %v (%d reads)", got.Err, res.Reads)
	}
	// From then on every dispatch reads, and the drifted tab is blocked.
	for i := 0; i < 2; i++ {
		before := h.counters().Writes
		res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{firstSend("Part_System", "d2", partValues("d2", 1))}})
		if got := h.wantStatus(res, 0, sheetsio.StatusBlocked); got.Reason != sheetsio.CodeHeaderDrift || res.Reads == 0 || h.counters().Writes != before {
			t.Fatalf("pass %d: reason %s, %d reads, wrote %v", i, got.Reason, res.Reads, h.counters().Writes != before)
		}
	}
}

func TestI05_StaleAuthorityRefusesABlindAppend(t *testing.T) {
	h, w, fence, clk := blindHarness(t)
	newer := sheetsio.Fence{StoreID: "store", Epoch: 2, Token: "t2"}
	if err := h.p.WriteAuthority(context.Background(), w, newer); err != nil {
		t.Fatal(err)
	}
	// Past the trust's TTL the deposed writer reads and is refused before
	// any write.
	clk.advance(DefaultTrustTTL)
	before := h.counters().Writes
	_, err := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{firstSend("Part_System", "s1", partValues("s1", 1))}})
	if !errors.Is(err, sheetsio.ErrAuthorityStale) || h.counters().Writes != before {
		t.Fatalf("err = %v, wrote %v", err, h.counters().Writes != before)
	}
	// Within the TTL (a takeover the lease rules forbid) the write's own
	// response shows the newer epoch: the op is uncertain and the next
	// dispatch is refused before any write.
	w2 := sheetsio.OpenWorkbook(testSheetID, w.Schema(), w.SheetIDs())
	h.dispatch(w2, sheetsio.Batch{Fence: &newer, Ops: []sheetsio.Op{appendOp("Part_System", "n1", partValues("n1", 1))}})
	h.dispatch(w2, sheetsio.Batch{Fence: &newer, Ops: []sheetsio.Op{appendOp("Part_System", "n2", partValues("n2", 1))}})
	w3 := sheetsio.OpenWorkbook(testSheetID, w.Schema(), w.SheetIDs()) // the newer writer's own client state
	if err := h.p.WriteAuthority(context.Background(), w3, sheetsio.Fence{StoreID: "store", Epoch: 3, Token: "t3"}); err != nil {
		t.Fatal(err)
	}
	res := h.dispatch(w2, sheetsio.Batch{Fence: &newer, Ops: []sheetsio.Op{firstSend("Part_System", "s2", partValues("s2", 1))}})
	if got := h.wantStatus(res, 0, sheetsio.StatusUncertain); writeCodeOf(got.Err) != sheetsio.WriteUnverified || res.Reads != 0 {
		t.Fatalf("err = %v (%d reads)", got.Err, res.Reads)
	}
	before = h.counters().Writes
	_, err = h.p.Dispatch(context.Background(), w2, sheetsio.Batch{Fence: &newer, Ops: []sheetsio.Op{firstSend("Part_System", "s3", partValues("s3", 1))}})
	if !errors.Is(err, sheetsio.ErrAuthorityStale) || h.counters().Writes != before {
		t.Fatalf("err = %v, wrote %v", err, h.counters().Writes != before)
	}
}

func TestBlindAppendToARenamedTabIsRejectedWholeAndResentAfterARead(t *testing.T) {
	h, w, fence, _ := blindHarness(t)
	if err := h.emu.Person(testSheetID).RenameTab("Part_System", "Parts (mine)"); err != nil {
		t.Fatal(err)
	}
	op := firstSend("Part_System", "r1", partValues("r1", 1))
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{op}})
	if got := h.wantStatus(res, 0, sheetsio.StatusNotSent); writeCodeOf(got.Err) != sheetsio.WriteRejectedUnread {
		t.Fatalf("err = %v", got.Err)
	}
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{op}})
	if h.wantStatus(res, 0, sheetsio.StatusApplied); res.Reads == 0 {
		t.Fatal("resent blind after a rejection")
	}
	spec, _ := w.Schema().Tab(layout.SystemTabName("Part"))
	if n := rowsWithAnchor(h.values("Parts (mine)"), spec.Anchor, "r1"); n != 1 {
		t.Fatalf("anchor shows on %d rows", n)
	}
}

// writeCodeOf is the code of the *WriteError in err ("" if none).
func writeCodeOf(err error) string {
	var we *sheetsio.WriteError
	if errors.As(err, &we) {
		return we.Code
	}
	return ""
}
