package effects_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

func TestNextSlot(t *testing.T) {
	const p = 30 * time.Second
	cases := []struct {
		name        string
		now         time.Duration // after the origin
		offset, out time.Duration
	}{
		{"at the start: one period on", 0, 0, p},
		{"at a slot: the next one", p, 0, 2 * p},
		{"between slots", 41 * time.Second, 0, 2 * p},
		{"early by half: half a period on", 0, p / 2, p / 2},
		{"early by half, at its slot", p / 2, p / 2, 3 * p / 2},
		{"an offset past the period counts modulo it", 0, p + p/2, p / 2},
		{"a clock behind the origin", -7 * time.Second, 0, 0},
		{"a clock far behind the origin", -p - 7*time.Second, 0, -p},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := effects.NextSlot(t0.Add(c.now), t0, p, c.offset); !got.Equal(t0.Add(c.out)) {
				t.Fatalf("NextSlot(+%v, early %v) = +%v, want +%v", c.now, c.offset, got.Sub(t0), c.out)
			}
		})
	}
	if now := t0.Add(time.Second); !effects.NextSlot(now, t0, 0, 0).Equal(now) {
		t.Fatal("a cadence without a period has a slot")
	}
}

// slotSpy records the clock's time of each poll's values read and each
// grid read (the full scan's and the cleanup's), reads nothing, and takes
// take of the clock's time for a grid read.
type slotSpy struct {
	sheetsio.Client
	clock        *events.ManualClock
	take         time.Duration
	mu           sync.Mutex
	polls, grids []time.Duration // after t0
}

func (s *slotSpy) SnapshotChecked(context.Context, *sheetsio.Workbook, map[string]sheetsio.RowCheck, ...string) (map[string]*sheetsio.TabSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls = append(s.polls, s.clock.Now().Sub(t0))
	return nil, errors.New("spy: nothing read")
}

func (s *slotSpy) ReadGridKnown(context.Context, *sheetsio.Workbook, sheetsio.BodyDigest, ...string) (map[string]*sheetsio.GridSnapshot, error) {
	s.mu.Lock()
	s.grids = append(s.grids, s.clock.Now().Sub(t0))
	s.mu.Unlock()
	s.clock.Advance(s.take)
	return nil, errors.New("spy: nothing read")
}

// awaitWaiters waits until n goroutines wait on clock.
func awaitWaiters(t *testing.T, clock *events.ManualClock, n int) {
	t.Helper()
	for {
		got, changed := clock.Waiters()
		if got == n {
			return
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d waiters on the clock, want %d", got, n)
		}
	}
}

// The poller's scheduled passes run on their slots from its start, early
// by their phase within the reconciliation period (30 s): the cleanup and
// the full scan half a period before each multiple (so half a period
// apart from the reconciliation), sharing one grid read when both are
// due; the timer's poll a quarter of a period before each minute. A pass
// that takes long (5 s here) does not move the next one.
func TestI21_PollerPassesRunOnTheirSlots(t *testing.T) {
	clock := events.NewManualClock(t0)
	spy := &slotSpy{clock: clock, take: 5 * time.Second}
	p, err := effects.NewPoller(effects.PollerConfig{Provider: spy, Workbook: new(sheetsio.Workbook), Inbound: quietInbound{},
		Tabs: []string{"Input"}, Clock: clock, Logger: slog.New(slog.DiscardHandler), Interval: time.Minute,
		FullScanInterval: time.Minute, CleanupInterval: 30 * time.Second})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for clock.Now().Before(t0.Add(2 * time.Minute)) {
		awaitWaiters(t, clock, 1)
		clock.Advance(2500 * time.Millisecond)
	}
	awaitWaiters(t, clock, 1)
	cancel()
	must(t, <-done)
	s := time.Second
	if want := []time.Duration{15 * s, 45 * s, 75 * s, 105 * s}; !slices.Equal(spy.grids, want) {
		t.Fatalf("grid reads at %v, want %v", spy.grids, want)
	}
	if want := []time.Duration{52500 * time.Millisecond, 112500 * time.Millisecond}; !slices.Equal(spy.polls, want) {
		t.Fatalf("polls at %v, want %v", spy.polls, want)
	}
	if p.C.Cleanups.Load() != 4 || p.C.FullScans.Load() != 2 {
		t.Fatalf("%d cleanups and %d full scans, want 4 and 2 (the full scans on the cleanups' reads)", p.C.Cleanups.Load(), p.C.FullScans.Load())
	}
}

// reconcileSpy is the real provider whose anti-entropy read takes take of
// the clock's time.
type reconcileSpy struct {
	*gsheets.Provider
	clock *events.ManualClock
	take  time.Duration
}

func (s reconcileSpy) SnapshotChecked(ctx context.Context, w *sheetsio.Workbook, checks map[string]sheetsio.RowCheck, tabs ...string) (map[string]*sheetsio.TabSnapshot, error) {
	s.clock.Advance(s.take)
	return s.Provider.SnapshotChecked(ctx, w, checks, tabs...)
}

// The reconciliation runs on the multiples of its period from the
// dispatcher's start, whatever a pass took (7 s here): half a period apart
// from the poller's cleanup and full scan.
func TestI21_ReconciliationRunsOnItsSlots(t *testing.T) {
	var mu sync.Mutex
	var at []time.Duration
	var r *rig
	r = newRig(t, func(c *effects.Config) {
		c.ReconcileInterval = 30 * time.Second
		c.Provider = reconcileSpy{Provider: c.Provider.(*gsheets.Provider), clock: c.Clock.(*events.ManualClock), take: 7 * time.Second}
		c.Reconciled = func(error) {
			mu.Lock()
			defer mu.Unlock()
			at = append(at, r.clock.Now().Sub(t0))
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.disp.Run(ctx) }()
	for r.clock.Now().Before(t0.Add(2 * time.Minute)) {
		awaitWaiters(t, r.clock, 2) // the pass loop and the reconciliation
		r.clock.Advance(time.Second)
	}
	awaitWaiters(t, r.clock, 2)
	cancel()
	must(t, <-done)
	s := time.Second
	mu.Lock()
	defer mu.Unlock()
	// each ends 7 s after its slot
	if want := []time.Duration{37 * s, 67 * s, 97 * s, 127 * s}; !slices.Equal(at, want) {
		t.Fatalf("reconciliations ended at %v, want %v", at, want)
	}
}
