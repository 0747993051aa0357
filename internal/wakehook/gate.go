package wakehook

import (
	"sync"
	"time"
)

// DefaultMinInterval is the least time between two polls that wakes
// start.
const DefaultMinInterval = 2 * time.Second

// Outcome is what an accepted wake did; its text is the handler's result.
type Outcome string

// Outcomes of an accepted wake.
const (
	// OutcomePolled: the pollers were woken now.
	OutcomePolled Outcome = "polled"
	// OutcomeScheduled: a poll was woken less than the minimum interval
	// ago; the pollers are woken again when the interval ends.
	OutcomeScheduled Outcome = "scheduled"
	// OutcomeCoalesced: a wake at the end of the interval is already
	// scheduled; this one rides on it.
	OutcomeCoalesced Outcome = "coalesced"
)

// Clock is the time a gate and a handler read (events.Clock satisfies it).
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// admit is the gate's decision: with the last poll woken at last (zero:
// never) and a trailing wake scheduled or not, a wake accepted at now
// wakes the pollers now, or schedules one wait from now, or rides on the
// scheduled one.
func admit(now, last time.Time, scheduled bool, interval time.Duration) (Outcome, time.Duration) {
	switch {
	case scheduled:
		return OutcomeCoalesced, 0
	case last.IsZero() || now.Sub(last) >= interval:
		return OutcomePolled, 0
	}
	return OutcomeScheduled, interval - now.Sub(last)
}

// gate coalesces accepted wakes into at most one call of poll per
// interval, each with the hints of the wakes it carries merged. Safe for
// concurrent use.
type gate struct {
	interval time.Duration
	clock    Clock
	poll     func(Hint)

	mu        sync.Mutex
	last      time.Time
	scheduled bool
	pending   Hint // what the scheduled poll carries
}

// wake admits one accepted wake naming h and acts on the decision.
func (g *gate) wake(h Hint) Outcome {
	g.mu.Lock()
	now := g.clock.Now()
	out, wait := admit(now, g.last, g.scheduled, g.interval)
	switch out {
	case OutcomePolled:
		g.last = now
	case OutcomeScheduled:
		g.scheduled, g.pending = true, h
		go g.trail(g.clock.After(wait))
	case OutcomeCoalesced:
		g.pending = Merge(g.pending, h)
	}
	g.mu.Unlock()
	if out == OutcomePolled {
		g.poll(h)
	}
	return out
}

// trail wakes the pollers once at fires, for the wakes it carries.
func (g *gate) trail(fires <-chan time.Time) {
	<-fires
	g.mu.Lock()
	g.last = g.clock.Now()
	g.scheduled = false
	h := g.pending
	g.pending = Hint{}
	g.mu.Unlock()
	g.poll(h)
}

// Results are every result a handler reports (OnResult): the outcomes of
// an accepted wake, then the refusals' codes.
var Results = []string{string(OutcomePolled), string(OutcomeScheduled), string(OutcomeCoalesced),
	ErrMalformed.Error(), ErrSignature.Error(), ErrStale.Error(), ErrReplayed.Error(), ErrBusy.Error(),
	ErrStandby.Error(), ErrSyncNotRunning.Error()}
