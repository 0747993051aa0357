package effects_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// readCount is the provider, counting anti-entropy's reads of the tabs.
type readCount struct {
	*gsheets.Provider
	reads *atomic.Int64
}

func (s readCount) SnapshotChecked(ctx context.Context, w *sheetsio.Workbook, checks map[string]sheetsio.RowCheck, tabs ...string) (map[string]*sheetsio.TabSnapshot, error) {
	s.reads.Add(1)
	return s.Provider.SnapshotChecked(ctx, w, checks, tabs...)
}

func (s readCount) SnapshotUnchanged(ctx context.Context, w *sheetsio.Workbook, known sheetsio.BodyDigest, tabs ...string) (bool, error) {
	s.reads.Add(1)
	return s.Provider.SnapshotUnchanged(ctx, w, known, tabs...)
}

// A scheduled anti-entropy pass leaves out the tabs the dispatcher
// claimed a batch's worth of effects for since the previous one (a bulk
// load: its rows are a moving target), for at most five minutes: the
// first pass after compares them however busy, and so does the first
// after the writes ease. Store.Reconcile (Dispatcher.Reconcile) always
// compares.
func TestI28_AScheduledPassLeavesATabBeingFilledForAtMostFiveMinutes(t *testing.T) {
	var reads, passes atomic.Int64
	r := newRig(t, func(c *effects.Config) {
		c.ReconcileInterval = 2 * time.Minute
		c.MaxBatch = 1000
		c.Provider = readCount{Provider: c.Provider.(*gsheets.Provider), reads: &reads}
		c.Reconciled = func(error) { passes.Add(1) }
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.disp.Run(ctx) }()
	next := 0
	var readsAt []int64
	for slot := int64(1); slot <= 5; slot++ { // at 2, 4, 6, 8 and 10 minutes
		if slot <= 4 { // 1,000 new rows on each row tab in each period but the last
			for range 1000 {
				r.commit(fmt.Sprintf("A%05d", next), airport("Airport", 10))
				next++
			}
		}
		for passes.Load() < slot {
			awaitWaiters(t, r.clock, 2)
			r.clock.Advance(time.Second)
		}
		readsAt = append(readsAt, reads.Load())
	}
	awaitWaiters(t, r.clock, 2)
	cancel()
	must(t, <-done)
	// left out from 2 minutes on: at 4 and 6 still, compared at 8 (6 minutes
	// later), and at 10, the writes eased
	if want := []int64{0, 0, 0, 1, 2}; fmt.Sprint(readsAt) != fmt.Sprint(want) {
		t.Fatalf("anti-entropy reads after each scheduled pass %v, want %v", readsAt, want)
	}
	if n := r.disp.C.Deferred.Load(); n != 6 {
		t.Fatalf("%d tabs deferred, want both row tabs in each of three passes", n)
	}
	if _, err := r.disp.Reconcile(context.Background()); err != nil || reads.Load() != 3 {
		t.Fatalf("Reconcile: %v, %d reads: want the tabs compared", err, reads.Load())
	}
}
