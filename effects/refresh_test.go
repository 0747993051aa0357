package effects_test

import (
	"context"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// refreshTTL is the authority TTL of the refresh tests: due every
// minute, riding in passes for 90 s at most.
const refreshTTL = 3 * time.Minute

// authorityUpdatedAt is the authority row's updated_at, checked to name
// the rig's writer.
func (r *rig) authorityUpdatedAt() time.Time {
	r.t.Helper()
	a, err := r.prov.ReadAuthority(context.Background(), r.wb)
	if err != nil || !a.Present || a.StoreID != testFence.StoreID || a.Epoch != testFence.Epoch {
		r.t.Fatalf("authority %+v, %v", a, err)
	}
	return a.UpdatedAt
}

// cost runs a pass and returns the requests the emulator received for it.
func (r *rig) cost() emulator.Counters {
	r.t.Helper()
	before := r.emu.Counters(sheetID)
	r.pass()
	after := r.emu.Counters(sheetID)
	return emulator.Counters{Reads: after.Reads - before.Reads, Writes: after.Writes - before.Writes}
}

// The authority's refresh rides in a pass that sends effects: the pass's
// preflight read and batchUpdate carry it (no read or write of its own
// before the claim, which the pass's commits waited for). A pass with
// nothing to send refreshes it on its own.
func TestDispatcherRefreshRidesInThePassDispatch(t *testing.T) {
	r := newRig(t, func(c *effects.Config) { c.AuthorityTTL = refreshTTL })
	r.commit("KIX", airport("Kansai", 5))
	r.pass()
	r.clock.Advance(refreshTTL/3 + time.Second)
	r.commit("KIX", airport("Kansai International", 5))
	if c := r.cost(); c != (emulator.Counters{Reads: 1, Writes: 1}) {
		t.Fatalf("a pass with its refresh due cost %+v, want its dispatch's one read and one write", c)
	}
	if got := r.authorityUpdatedAt(); !got.Equal(r.clock.Now()) {
		t.Fatalf("authority updated_at %v after the pass, want %v", got, r.clock.Now())
	}
	r.clock.Advance(refreshTTL/3 + time.Second)
	r.pass() // nothing to send
	if got := r.authorityUpdatedAt(); !got.Equal(r.clock.Now()) {
		t.Fatalf("an idle pass left updated_at %v, want %v", got, r.clock.Now())
	}
}

// A refresh that could not ride (a blind append reads no authority)
// stays due: the authority is not counted refreshed, and a pass past
// half the TTL refreshes it on its own before it claims.
func TestDispatcherRefreshThatCouldNotRideStaysDue(t *testing.T) {
	r := newRig(t, func(c *effects.Config) { c.AuthorityTTL = refreshTTL })
	start := r.clock.Now()
	r.clock.Advance(refreshTTL/3 - 5*time.Second)
	r.commit("KIX", airport("Kansai", 5)) // its read leaves the trust fresh
	r.pass()
	r.clock.Advance(6 * time.Second) // due, the trust still fresh
	r.commit("ITM", airport("Itami", 12))
	if c := r.cost(); c.Reads != 0 {
		t.Fatalf("the new row's append read %d times, want a blind append", c.Reads)
	}
	if got := r.authorityUpdatedAt(); !got.Equal(start) {
		t.Fatalf("a blind append refreshed the authority to %v", got)
	}
	r.clock.Advance(refreshTTL / 2)
	r.commit("NRT", airport("Narita", 41))
	r.pass()
	if got := r.authorityUpdatedAt(); !got.Equal(r.clock.Now()) {
		t.Fatalf("past half the TTL, updated_at %v, want %v", got, r.clock.Now())
	}
}
