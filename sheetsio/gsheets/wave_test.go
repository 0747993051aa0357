package gsheets

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// chunkedAppends provisions Part with 16 KB bodies and returns n first
// appends to Part_System, several bodies' worth.
func chunkedAppends(t *testing.T, n int) (*harness, *sheetsio.Workbook, []sheetsio.Op) {
	t.Helper()
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.MaxBatchBytes = 16 << 10 })
	w := h.provision(testSchema(t))
	ops := make([]sheetsio.Op, n)
	for i := range ops {
		ops[i] = appendOp("Part_System", fmt.Sprintf("r%03d", i), partValues(fmt.Sprint(i), int64(i)))
	}
	return h, w, ops
}

// writesArrive waits until the emulator has received want writes (a
// request is counted as it arrives, before it runs).
func writesArrive(t *testing.T, h *harness, want int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for h.counters().Writes < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes arrived, want %d while the first is held", h.counters().Writes, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// wantRowsOnce checks that every op's row shows exactly once in its tab
// and that its receipt landed with the fence's epoch.
func wantRowsOnce(t *testing.T, h *harness, w *sheetsio.Workbook, ops []sheetsio.Op, epoch int64) {
	t.Helper()
	spec, _ := w.Schema().Tab("Part_System")
	rows := h.values("Part_System")
	ids := make([]string, len(ops))
	for i, op := range ops {
		if n := rowsWithAnchor(rows, spec.Anchor, op.Anchor); n != 1 {
			t.Fatalf("anchor %s shows on %d rows, want 1", op.Anchor, n)
		}
		ids[i] = op.Receipt.EffectID
	}
	recs, err := h.p.ReadReceipts(context.Background(), w, ids...)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if r, ok := recs[id]; !ok || r.Epoch != epoch {
			t.Fatalf("receipt of %s: %+v (found %v), want epoch %d", id, r, ok, epoch)
		}
	}
}

// The bodies of a dispatch of new rows go out at once: while the first is
// held in the emulator, the others arrive; each is its own batchUpdate
// with its own receipts, and every row lands once.
func TestBodiesOfNewRowsGoOutAtOnce(t *testing.T) {
	h, w, ops := chunkedAppends(t, 200)
	fence := &sheetsio.Fence{StoreID: "s", Epoch: 1, Token: "t1"}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "warm", partValues("warm", 1))}}) // mirrors the authority
	before := h.counters()
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server closes, should the test stop early
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultHang, Match: emulator.MatchWrites, Release: release})
	done := make(chan *sheetsio.DispatchResult, 1)
	go func() {
		res, err := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Fence: fence, Ops: ops})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	writesArrive(t, h, before.Writes+4) // C09_ChunkedByBytes: 200 such rows take at least 4 bodies
	free()
	res := <-done
	if res == nil {
		t.FailNow()
	}
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	if after := h.counters(); res.Chunks < 4 || res.Writes != res.Chunks || after.Writes-before.Writes != int64(res.Chunks) || res.Reads != 1 {
		t.Fatalf("%d bodies, %d writes (emulator %d), %d reads; want one write a body, one read", res.Chunks, res.Writes,
			after.Writes-before.Writes, res.Reads)
	}
	wantRowsOnce(t, h, w, ops, fence.Epoch)
}

// A body that fails makes only its own rows uncertain: the other bodies,
// sent at the same time, land with their receipts.
func TestABodyOfNewRowsThatFailsLeavesOnlyItsOwnRowsUncertain(t *testing.T) {
	h, w, ops := chunkedAppends(t, 200)
	fence := &sheetsio.Fence{StoreID: "s", Epoch: 1, Token: "t1"}
	h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "warm", partValues("warm", 1))}})
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchWrites})
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: ops})
	var landed []sheetsio.Op
	uncertain := 0
	for i, r := range res.Ops {
		switch r.Status {
		case sheetsio.StatusApplied:
			landed = append(landed, ops[i])
		case sheetsio.StatusUncertain:
			uncertain++
		default:
			t.Fatalf("op %d: %s", i, r.Status)
		}
	}
	if uncertain == 0 || len(landed) == 0 || res.Chunks < 4 {
		t.Fatalf("%d applied, %d uncertain in %d bodies; want one body uncertain, the others applied", len(landed), uncertain, res.Chunks)
	}
	wantRowsOnce(t, h, w, landed, fence.Epoch)
}

// Only bodies of appended rows go out at once: any unit that writes at a
// row position (an update, a delete, a note, a sweep) or an authority
// mirror that fences the rows keeps the bodies one after another.
func TestI07_OnlyAppendedRowsGoOutAtOnce(t *testing.T) {
	appended := &unit{op: 0, order: orderAppend, appends: []appendRow{{sheetID: 1}}}
	head := &unit{op: -1, order: orderHead, reqs: []*sheets.Request{{}}}
	refresh := &unit{op: -1, order: orderAuthority, refresh: true, reqs: []*sheets.Request{{}}}
	for name, tc := range map[string]struct {
		chunks [][]*unit
		want   bool
	}{
		"one body":                   {[][]*unit{{appended, appended}}, false},
		"appends":                    {[][]*unit{{appended}, {appended}}, true},
		"head and refresh":           {[][]*unit{{refresh, head, appended}, {appended}}, true},
		"mirror":                     {[][]*unit{{{op: -1, order: orderAuthority, reqs: []*sheets.Request{{}}}, appended}, {appended}}, false},
		"update":                     {[][]*unit{{appended}, {{op: 1, order: orderUpdate, reqs: []*sheets.Request{{}}, check: &rowCheck{}}}}, false},
		"delete":                     {[][]*unit{{appended}, {{op: 1, order: orderDelete, reqs: []*sheets.Request{{}}}}}, false},
		"sweep":                      {[][]*unit{{{op: -1, order: orderSweep, sweep: 1, reqs: []*sheets.Request{{}}}}, {appended}}, false},
		"note":                       {[][]*unit{{appended}, {{op: -1, order: orderUpdate, note: 1, reqs: []*sheets.Request{{}}}}}, false},
		"append with a request":      {[][]*unit{{appended}, {{op: 1, order: orderAppend, reqs: []*sheets.Request{{}}}}}, false},
		"append watching the header": {[][]*unit{{appended}, {{op: 1, order: orderAppend, header: &headerWatch{}}}}, false},
	} {
		if got := atOnce(tc.chunks); got != tc.want {
			t.Errorf("%s: atOnce = %v, want %v", name, got, tc.want)
		}
	}
}

// Bodies of new rows sent at once are cut to about one size, as many as
// the limit needs (no request more): 25 rows of 100 B under a 1,000 B
// body are three bodies of 8–9 rows, not 10 + 10 + 5; any other unit
// keeps the bodies filled to the limit.
func TestBodiesOfNewRowsAreCutToAboutOneSize(t *testing.T) {
	p := &Provider{cfg: Config{MaxBatchBytes: 1143, MaxBatchRequests: 100}} // bodyLimit: 1,001 B of units
	var units []*unit
	for i := range 25 {
		units = append(units, &unit{op: i, order: orderAppend, appends: []appendRow{{sheetID: 1}}, bytes: 100})
	}
	sizes := func(chunks [][]*unit) []int {
		var out []int
		for _, c := range chunks {
			out = append(out, len(c))
		}
		return out
	}
	if got := sizes(p.bodies(units, 0)); fmt.Sprint(got) != "[9 9 7]" {
		t.Fatalf("bodies of %v rows, want [9 9 7]", got)
	}
	withUpdate := append([]*unit{{op: 25, order: orderUpdate, reqs: []*sheets.Request{{}}, bytes: 100, check: &rowCheck{}}}, units...)
	if got := sizes(p.bodies(withUpdate, 5)); fmt.Sprint(got) != "[10 10 6]" {
		t.Fatalf("bodies of %v units with an update, want [10 10 6] (filled, one after another)", got)
	}
}

// A pass of new rows below the body limit goes out as two bodies while
// the write budget lets two writes start now and each body carries at
// least spreadBytes; with one write in the budget, a small pass, or any
// unit that is not a new row, it stays one body.
func TestAPassOfNewRowsGoesOutAsTwoBodiesWhileTheBudgetHoldsTwoWrites(t *testing.T) {
	p := &Provider{cfg: Config{MaxBatchBytes: 2 << 20, MaxBatchRequests: 100}}
	rows := func(n int) []*unit {
		var units []*unit
		for i := range n {
			units = append(units, &unit{op: i, order: orderAppend, appends: []appendRow{{sheetID: 1}}, bytes: 20 << 10})
		}
		return units
	}
	sizes := func(chunks [][]*unit) string {
		var out []int
		for _, c := range chunks {
			out = append(out, len(c))
		}
		return fmt.Sprint(out)
	}
	update := &unit{op: 99, order: orderUpdate, reqs: []*sheets.Request{{}}, bytes: 100, check: &rowCheck{}}
	for _, c := range []struct {
		name     string
		units    []*unit
		headroom int
		want     string
	}{
		{"two writes in the budget", rows(30), 2, "[16 14]"},
		{"five writes in the budget: still two", rows(30), 5, "[16 14]"},
		{"one write in the budget", rows(30), 1, "[30]"},
		{"less than two bodies' worth", rows(20), 5, "[20]"},
		{"with an update", append([]*unit{update}, rows(30)...), 5, "[31]"},
	} {
		if got := sizes(p.bodies(c.units, c.headroom)); got != c.want {
			t.Errorf("%s: bodies of %s units, want %s", c.name, got, c.want)
		}
	}
}
