package gsheets

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Lanes on one preflight: three lanes of appends (not first sends, so each
// needs its read) cost one read and three batchUpdates, each lane's result
// counting its own requests (the read in the first); when that one read
// fails, every lane fails and nothing is written.
func TestI19_LanesShareOnePreflightReadAndFailTogether(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	names := []string{"E1", "E2", "E3"}
	w := h.provision(testSchema(t, names...))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	lanes := func(round int) []sheetsio.Batch {
		out := make([]sheetsio.Batch, len(names))
		for i, n := range names {
			op := appendOp(layout.SystemTabName(n), fmt.Sprintf("r%d-%d", round, i), partValues(fmt.Sprint(round, i), 1))
			op.FirstSend = false
			out[i] = sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{op}}
		}
		return out
	}
	before := h.counters()
	res := h.p.DispatchLanes(context.Background(), w, lanes(1))
	after := h.counters()
	if c := (emulator.Counters{Reads: after.Reads - before.Reads, Writes: after.Writes - before.Writes}); c.Reads != 1 || c.Writes != 3 {
		t.Fatalf("three lanes cost %+v, want 1 read and 3 writes", c)
	}
	reads := 0
	for i, r := range res {
		if r.Err != nil || r.Result.Ops[0].Status != sheetsio.StatusApplied || r.Result.Writes != 1 {
			t.Fatalf("lane %d: %+v, %v", i, r.Result, r.Err)
		}
		reads += r.Result.Reads
	}
	if reads != 1 || res[0].Result.Reads != 1 {
		t.Fatalf("the lanes counted %d reads (first lane %d), want the one in the first", reads, res[0].Result.Reads)
	}
	for range 6 { // every attempt of the shared read
		h.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads})
	}
	before = h.counters()
	for i, r := range h.p.DispatchLanes(context.Background(), w, lanes(2)) {
		if !errors.Is(r.Err, sheetsio.ErrReadUnavailable) || r.Result != nil {
			t.Fatalf("lane %d after a failed shared read: %+v, %v", i, r.Result, r.Err)
		}
	}
	if after := h.counters(); after.Writes != before.Writes {
		t.Fatalf("lanes wrote %d times after their read failed", after.Writes-before.Writes)
	}
}
