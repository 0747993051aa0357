package effects_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// turnProvider is the real provider whose read turn (AwaitRead) runs
// waiting first: what the application commits while a pass waits for
// its read.
type turnProvider struct {
	*gsheets.Provider
	waiting func()
}

func (p turnProvider) AwaitRead(ctx context.Context) error {
	p.waiting()
	return p.Provider.AwaitRead(ctx)
}

// A pass waits for its read turn before it claims: an update committed
// while the pass waits for the read budget rides in that pass, not in the
// next one (a claim taken before the wait would leave it queued for
// another read interval).
func TestDispatcherClaimsAfterItsReadTurn(t *testing.T) {
	var r *rig
	late := false
	r = newRig(t, func(c *effects.Config) {
		c.Provider = turnProvider{Provider: c.Provider.(*gsheets.Provider), waiting: func() {
			if r != nil && !late {
				late = true
				r.commit("LATE", airport("committed while the pass waited", 2))
			}
		}}
	})
	r.commit("EARLY", airport("committed before the pass", 1))
	r.pass()
	if !late {
		t.Fatal("the pass never waited for its read turn")
	}
	for _, fx := range r.ob.Effects() {
		if fx.State != aggregates.EffectApplied {
			t.Fatalf("effect %s is %v after one pass, want applied", fx.ID, fx.State)
		}
	}
	if got := r.disp.C.Dispatches.Load(); got != 1 {
		t.Fatalf("%d dispatches, want the one pass's", got)
	}
}

// urgencySpy records whether each poll's values read was urgent, and
// reads nothing.
type urgencySpy struct {
	sheetsio.Client
	seen chan bool
}

func (s urgencySpy) SnapshotChecked(ctx context.Context, _ *sheetsio.Workbook, _ map[string]sheetsio.RowCheck, _ ...string) (map[string]*sheetsio.TabSnapshot, error) {
	s.seen <- sheetsio.ReadPriority(ctx) == sheetsio.PriorityUrgent
	return nil, errors.New("spy: nothing read")
}

// quietInbound expects nothing and watches no conflicts.
type quietInbound struct{ effects.Inbound }

func (quietInbound) Expectations([]string) (map[string]aggregates.TabExpectation, uint64, error) {
	return nil, 0, nil
}
func (quietInbound) WatchesChoices() (bool, error) { return false, nil }

// A poll a wake starts reads urgently (ahead of the dispatcher's reads,
// with the reserve the read budget keeps); a poll the timer starts does
// not.
func TestWokenPollReadsUrgently(t *testing.T) {
	clock := events.NewManualClock(t0)
	wake, spy := make(chan struct{}, 1), urgencySpy{seen: make(chan bool, 4)}
	p, err := effects.NewPoller(effects.PollerConfig{Provider: spy, Workbook: new(sheetsio.Workbook), Inbound: quietInbound{},
		Tabs: []string{"Input"}, Clock: clock, Logger: slog.New(slog.DiscardHandler), Interval: time.Minute,
		FullScanInterval: time.Hour, CleanupInterval: time.Hour, Wake: wake})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wake <- struct{}{}
	if !<-spy.seen {
		t.Fatal("the woken poll's read was not urgent")
	}
	for n, changed := clock.Waiters(); n == 0; n, changed = clock.Waiters() {
		<-changed
	}
	clock.Advance(time.Minute)
	if <-spy.seen {
		t.Fatal("the timer's poll read urgently")
	}
}
