package replication

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// Two processes race for a vacant lease, and later for an expired one:
// exactly one wins each race (compare-and-set on the KV revision), and
// the takeover bumps the epoch.
func TestI02_CompetingAcquirersExactlyOneWinsAndTakeoverBumpsTheEpoch(t *testing.T) {
	c := replicationtest.StartCluster(t, 3)
	clock := events.NewManualClock(t0)
	stores := []*LeaseStore{openLeases(t, c.Connect(), clock), openLeases(t, c.Connect(), clock)}
	for round := range 5 {
		store := fmt.Sprintf("race-%d", round)
		won := race(t, stores, store)
		if won.Epoch != 1 {
			t.Fatalf("round %d: first epoch %d, want 1", round, won.Epoch)
		}
		clock.Advance(events.DefaultLeaseTTL) // the winner never renews
		next := race(t, stores, store)
		if next.Epoch != 2 || next.Token == won.Token || next.Reason != ReasonExpired {
			t.Fatalf("round %d: takeover %+v, want epoch 2, a new token, expired", round, next)
		}
	}
}

// race has one acquirer per store call Acquire at once and returns the
// single winner's lease; the loser must get ErrLeaseHeld.
func race(t *testing.T, stores []*LeaseStore, store string) LeaseRecord {
	t.Helper()
	var wg sync.WaitGroup
	got := make([]LeaseRecord, len(stores))
	errs := make([]error, len(stores))
	start := make(chan struct{})
	for i, s := range stores {
		wg.Go(func() {
			<-start
			got[i], errs[i] = s.Acquire(ctxFor(t, opTimeout), store, fmt.Sprintf("writer-%d", i))
		})
	}
	close(start)
	wg.Wait()
	winners := 0
	var won LeaseRecord
	for i, err := range errs {
		switch {
		case err == nil:
			winners, won = winners+1, got[i]
		case !errors.Is(err, ErrLeaseHeld):
			t.Fatalf("acquirer %d: %v", i, err)
		}
	}
	if winners != 1 {
		t.Fatalf("%s: %d acquirers won, want exactly 1", store, winners)
	}
	return won
}

// A live holder's lease is not taken over while its heartbeat is fresh;
// its renewals keep it; once taken over (stale heartbeat), its renewal
// fails and never takes the lease back.
func TestI03_RenewalKeepsALiveLeaseAndFailsAfterTakeover(t *testing.T) {
	c := replicationtest.StartCluster(t, 3)
	clock := events.NewManualClock(t0)
	s := openLeases(t, c.Connect(), clock)
	a, err := s.Acquire(ctxFor(t, opTimeout), "renew", "writer-a")
	if err != nil {
		t.Fatal(err)
	}
	for range 4 { // 20 s of heartbeats every 5 s: past the 15 s staleness, never stale
		clock.Advance(events.HeartbeatInterval)
		if a, err = s.Renew(ctxFor(t, opTimeout), a); err != nil {
			t.Fatalf("renewal: %v", err)
		}
		if _, err := s.Acquire(ctxFor(t, opTimeout), "renew", "writer-b"); !errors.Is(err, ErrLeaseHeld) {
			t.Fatalf("acquisition of a renewed live lease = %v, want ErrLeaseHeld", err)
		}
	}
	clock.Advance(events.StaleHeartbeatAfter + time.Nanosecond)
	b, err := s.Acquire(ctxFor(t, opTimeout), "renew", "writer-b")
	if err != nil || b.Epoch != a.Epoch+1 || b.Reason != ReasonStaleHeartbeat {
		t.Fatalf("takeover = %+v, %v; want epoch %d by stale heartbeat", b, err, a.Epoch+1)
	}
	if _, err := s.Renew(ctxFor(t, opTimeout), a); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renewal after takeover = %v, want ErrLeaseLost", err)
	}
	if err := s.Release(ctxFor(t, opTimeout), a); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("release after takeover = %v, want ErrLeaseLost", err)
	}
	cur, _, err := s.Current(ctxFor(t, opTimeout), "renew")
	if err != nil || cur.Holder != "writer-b" || cur.Epoch != b.Epoch {
		t.Fatalf("current = %+v, %v; want writer-b's epoch %d", cur, err, b.Epoch)
	}
	if err := s.Release(ctxFor(t, opTimeout), b); err != nil {
		t.Fatal(err)
	}
	a2, err := s.Acquire(ctxFor(t, opTimeout), "renew", "writer-a")
	if err != nil || a2.Epoch != b.Epoch+1 || a2.Reason != ReasonVacant {
		t.Fatalf("acquisition after release = %+v, %v; want epoch %d, vacant", a2, err, b.Epoch+1)
	}
}
