package gsheets

import (
	"context"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// A fenced dispatch asked to refresh the authority (Batch.Refresh)
// rewrites its fence cells with its own time inside its batchUpdate, on
// the authority its preflight verified: one read and one write, as
// without. One not asked leaves a fence shown exactly as it is, and a
// blind append (which reads no authority) refreshes nothing.
func TestDispatchRefreshesTheAuthorityInItsOwnBatchUpdate(t *testing.T) {
	now := fixedNow
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.Now = func() time.Time { return now } })
	w := h.provision(testSchema(t))
	fence := &sheetsio.Fence{StoreID: "s", Epoch: 1, Token: "t1"}
	send := func(anchor string, refresh bool) (*sheetsio.DispatchResult, emulator.Counters) {
		t.Helper()
		before := h.counters()
		op := appendOp("Part_System", anchor, partValues(anchor, 1))
		op.FirstSend = true
		res := h.dispatch(w, sheetsio.Batch{Fence: fence, Refresh: refresh, Ops: []sheetsio.Op{op}})
		h.wantStatus(res, 0, sheetsio.StatusApplied)
		after := h.counters()
		return res, emulator.Counters{Reads: after.Reads - before.Reads, Writes: after.Writes - before.Writes}
	}
	updatedAt := func() time.Time {
		t.Helper()
		a, err := h.p.ReadAuthority(context.Background(), w)
		if err != nil || !a.Present || a.StoreID != "s" || a.Epoch != 1 || a.Token != "t1" {
			t.Fatalf("authority %+v, %v", a, err)
		}
		return a.UpdatedAt
	}
	if res, _ := send("r1", false); !res.Refreshed || !updatedAt().Equal(fixedNow) {
		t.Fatalf("the first dispatch mirrors the fence into a vacant authority: refreshed %v", res.Refreshed)
	}
	now = now.Add(time.Minute) // past the trust's TTL: the next dispatches read first
	if res, _ := send("r2", false); res.Refreshed || !updatedAt().Equal(fixedNow) {
		t.Fatalf("a dispatch not asked rewrote an authority showing its fence: refreshed %v", res.Refreshed)
	}
	now = now.Add(time.Minute)
	res, cost := send("r3", true)
	if !res.Refreshed || !updatedAt().Equal(now) {
		t.Fatalf("asked to refresh: refreshed %v, updated_at %v, want %v", res.Refreshed, updatedAt(), now)
	}
	if cost != (emulator.Counters{Reads: 1, Writes: 1}) {
		t.Fatalf("a refreshing dispatch cost %+v, want its one read and one write", cost)
	}
	at := now
	now = now.Add(time.Second) // within the trust's TTL: an append-only batch goes blind
	if res, cost := send("r4", true); res.Refreshed || cost.Reads != 0 || !updatedAt().Equal(at) {
		t.Fatalf("a blind append refreshed the authority it did not read: refreshed %v, cost %+v", res.Refreshed, cost)
	}
}
