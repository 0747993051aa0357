package events

import (
	"sort"
	"sync"
	"time"
)

// Clock is the only source of time for the log, the lease and the workers.
// Decisions take their `now` from it and record it, so replay never reads a
// clock (I23: a rebuild equals the live read model).
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has elapsed on this clock.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After is time.After.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ManualClock is a Clock that moves only when Advance or Set is called; for
// tests and deterministic simulations. The zero value starts at the zero time;
// use NewManualClock. Safe for concurrent use.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []manualWaiter
	changed chan struct{} // closed and replaced whenever waiters change
}

type manualWaiter struct {
	at time.Time
	ch chan time.Time
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start, changed: make(chan struct{})}
}

// Now returns the clock's current reading.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After registers a waiter that fires when the clock reaches now+d.
func (c *ManualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, manualWaiter{at: c.now.Add(d), ch: ch})
	c.notifyLocked()
	return ch
}

// Advance moves the clock forward by d and fires every waiter now due.
func (c *ManualClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t (never backwards) and fires every waiter now due.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	sort.Slice(c.waiters, func(i, j int) bool { return c.waiters[i].at.Before(c.waiters[j].at) })
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
	c.notifyLocked()
}

func (c *ManualClock) notifyLocked() {
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// Waiters returns how many After channels are pending, and a channel closed
// at the next change of that set — so tests wait on a condition, not a sleep.
func (c *ManualClock) Waiters() (int, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return len(c.waiters), c.changed
}
