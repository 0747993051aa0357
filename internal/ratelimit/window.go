package ratelimit

import (
	"context"
	"time"
)

// WindowDelay is how long a request must wait so that no span of window
// holds more than quota request starts, starts being the newest starts,
// oldest first: 0 when fewer than quota started within window before
// now. A token bucket alone lets its burst through on top of its rate
// (65 starts in a minute at one a second with a burst of 5), which a
// per-minute quota answers with 429s. Pure.
func WindowDelay(starts []time.Time, quota int, window time.Duration, now time.Time) time.Duration {
	if quota <= 0 || len(starts) < quota {
		return 0
	}
	return max(starts[len(starts)-quota].Add(window).Sub(now), 0)
}

// SetWindow keeps every span of window to at most quota request starts,
// on top of the token bucket (0: no such bound).
func (b *Budget) SetWindow(quota int, window time.Duration) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.quota, b.window = max(quota, 0), window
}

// WindowQuota is how many starts within the window let a request of
// priority p start: the whole quota for an urgent one, the quota less
// the reserve for the others, so a window full of their starts still
// has room for urgent ones. Pure.
func WindowQuota(p Priority, quota, reserve int) int {
	if p == Urgent || quota == 0 {
		return quota
	}
	return max(quota-max(reserve, 0), 1)
}

// awaitWindow waits until a request of priority p may start within the
// window's quota and records its start.
func (b *Budget) awaitWindow(ctx context.Context, p Priority) error {
	for {
		d := b.startInWindow(p)
		if d == 0 {
			return nil
		}
		if err := Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// startInWindow records a start of priority p now and returns 0, or
// returns how long to wait before trying again.
func (b *Budget) startInWindow(p Priority) time.Duration {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.quota == 0 {
		return 0
	}
	now := time.Now()
	if d := WindowDelay(b.starts, WindowQuota(p, b.quota, b.reserve), b.window, now); d > 0 {
		return d
	}
	b.starts = append(b.starts, now)
	// keep the newest quota starts, and only those within the window: a
	// quota of a tiny interval (a minute of nanoseconds) never fills
	cut := len(b.starts) - min(len(b.starts), b.quota)
	for cut < len(b.starts) && !b.starts[cut].After(now.Add(-b.window)) {
		cut++
	}
	b.starts = b.starts[cut:]
	return 0
}
