package effects

import (
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// claimOnlyOutbox claims a fixed batch and records settlements; every other
// Outbox method is out of scope here (nil embedded interface).
type claimOnlyOutbox struct {
	Outbox
	mu      sync.Mutex
	batch   []aggregates.Effect
	settled []Settlement
}

func (o *claimOnlyOutbox) Claim(string, int) ([]aggregates.Effect, error) { return o.batch, nil }

func (o *claimOnlyOutbox) Settle(s []Settlement) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.settled = append(o.settled, s...)
	return nil
}

func TestStoppedLoopReleasesItsPrefetchedClaims(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	ob := &claimOnlyOutbox{batch: []aggregates.Effect{{ID: "e1", ClaimToken: "t1"}, {ID: "e2", ClaimToken: "t2"}}}
	d := &Dispatcher{cfg: Config{Outbox: ob, Spreadsheet: "s", Clock: events.NewManualClock(now)}}
	d.prefetch(2)
	if err := d.releasePrefetch(); err != nil {
		t.Fatal(err)
	}
	if len(ob.settled) != 2 || d.next != nil {
		t.Fatalf("settled %+v, next %v", ob.settled, d.next)
	}
	for i, s := range ob.settled {
		o := s.Outcome
		if s.ID != ob.batch[i].ID || s.ClaimToken != ob.batch[i].ClaimToken || o.Kind != aggregates.OutcomeRetry || o.Code != "claim_released" || !o.RetryAt.Equal(now) {
			t.Fatalf("settlement %d = %+v", i, s)
		}
	}
	if err := d.releasePrefetch(); err != nil || len(ob.settled) != 2 {
		t.Fatalf("nothing in flight: %v, %d settled", err, len(ob.settled))
	}
}
