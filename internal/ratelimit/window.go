package ratelimit

import (
	"slices"
	"sort"
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
// priority p start: the whole quota for an urgent or a turned one, the
// quota less the reserve for the others, so a window full of their
// starts still has room for urgent ones. Pure.
func WindowQuota(p Priority, quota, reserve int) int {
	if p == Urgent || p == Turned || quota == 0 {
		return quota
	}
	return max(quota-max(reserve, 0), 1)
}

// windowDelay is how long after at a request of priority p must wait
// for room in the window's quota, counting the starts recorded up to at
// (0 when no quota is kept). wmu held.
func (b *Budget) windowDelay(p Priority, at time.Time) time.Duration {
	if b.quota == 0 {
		return 0
	}
	n := sort.Search(len(b.starts), func(i int) bool { return b.starts[i].After(at) })
	return WindowDelay(b.starts[:n], WindowQuota(p, b.quota, b.reserve), b.window, at)
}

// record records a start at at (now or, for a request queued on the
// bucket, the time its token comes), keeping the starts oldest first,
// and forgets the ones past the window at now. wmu held.
func (b *Budget) record(at, now time.Time) {
	if b.quota == 0 {
		return
	}
	i := sort.Search(len(b.starts), func(i int) bool { return b.starts[i].After(at) })
	b.starts = slices.Insert(b.starts, i, at)
	// keep the newest quota starts, and only those within the window: a
	// quota of a tiny interval (a minute of nanoseconds) never fills
	cut := len(b.starts) - min(len(b.starts), b.quota)
	for cut < len(b.starts) && !b.starts[cut].After(now.Add(-b.window)) {
		cut++
	}
	b.starts = b.starts[cut:]
}

// unrecord forgets a start recorded at at whose request did not start.
// wmu held.
func (b *Budget) unrecord(at time.Time) {
	if i := slices.IndexFunc(b.starts, at.Equal); i >= 0 {
		b.starts = slices.Delete(b.starts, i, i+1)
	}
}
