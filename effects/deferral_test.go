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

// A scheduled anti-entropy pass leaves out a tab the dispatcher wrote a
// batch's worth of rows to since the previous one (a bulk load: its rows
// are a moving target); the first pass after the writes ease compares it,
// and Store.Reconcile (Dispatcher.Reconcile) never leaves one out. (How
// long a busy tab may wait is entropyCursor's, tested in package.)
func TestI28_AScheduledPassLeavesATabBeingFilledForLater(t *testing.T) {
	var reads, passes atomic.Int64
	r := newRig(t, func(c *effects.Config) {
		c.ReconcileInterval = 30 * time.Second
		c.MaxBatch = 1000
		c.Provider = readCount{Provider: c.Provider.(*gsheets.Provider), reads: &reads}
		c.Reconciled = func(error) { passes.Add(1) }
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.disp.Run(ctx) }()
	var readsAt []int64
	for slot := int64(1); slot <= 2; slot++ { // at 30 s and 60 s
		if slot == 1 { // 1,000 new rows on each row tab before the first
			for i := range 1000 {
				r.commit(fmt.Sprintf("A%05d", i), airport("Airport", 10))
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
	if want := []int64{0, 1}; fmt.Sprint(readsAt) != fmt.Sprint(want) {
		t.Fatalf("anti-entropy reads after each scheduled pass %v, want %v", readsAt, want)
	}
	if n := r.disp.C.Deferred.Load(); n != 2 {
		t.Fatalf("%d tabs deferred, want both row tabs in the first pass", n)
	}
	for i := range 1000 {
		r.commit(fmt.Sprintf("B%05d", i), airport("Airport", 10))
	}
	r.runUntilApplied(t, 4000)
	if _, err := r.disp.Reconcile(context.Background()); err != nil || reads.Load() != 2 {
		t.Fatalf("Reconcile after a busy period: %v, %d reads: want the tabs compared", err, reads.Load())
	}
}
