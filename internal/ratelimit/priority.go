package ratelimit

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// Priority is a request's place in a budget's queue.
type Priority int

const (
	// Normal requests leave the budget's reserve to urgent ones: they
	// start only while the bucket holds more than the reserve.
	Normal Priority = iota
	// Urgent requests take the next token, the reserve included, and
	// queue ahead of every normal request (a poll a person's edit woke).
	Urgent
	// Background requests start as normal ones do, and, while the bucket
	// is not full, no sooner than the budget's spacing after the last
	// background request started: the reads of a scheduled pass (a full
	// scan, a reconciliation) come one at a time between the others'
	// instead of in a burst that stalls them.
	Background
	// Turned requests are the first of a worker that waited for its
	// turn (Ready) moments before, when the bucket held more than the
	// reserve and the window had room: they need one token and start
	// within the whole window's quota, so a request that was due at its
	// turn never waits again for a token another request took in
	// between (a dispatcher pass's read after it claimed its batch). They
	// queue as normal ones do, ahead of no one.
	Turned
)

// Spacing is how long a background request waits, with the bucket
// holding tokens of burst, the last background request having started
// at last and the spacing being every: 0 when the bucket is full (nothing
// waits on it) or every has passed since last. Pure.
func Spacing(tokens float64, burst int, last, now time.Time, every time.Duration) time.Duration {
	if every <= 0 || last.IsZero() || tokens >= float64(burst) {
		return 0
	}
	return max(last.Add(every).Sub(now), 0)
}

// SetSpacing spaces background requests every apart while the bucket is
// not full (0: not spaced).
func (b *Budget) SetSpacing(every time.Duration) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.spacing = every
}

// Need is how many tokens a budget's bucket must hold for a request of
// priority p to start now, with reserve tokens kept for urgent requests
// (a background request needs what a normal one does): the pure decision
// of the queue.
func Need(p Priority, reserve int) float64 {
	if p == Urgent || p == Turned {
		return 1
	}
	return float64(max(reserve, 0) + 1)
}

// Delay is how long a bucket holding tokens (negative: urgent requests
// hold reservations ahead) takes, refilling at limit, to hold need: 0
// when it does now, rounded up to the millisecond otherwise.
func Delay(tokens, need float64, limit rate.Limit) time.Duration {
	if tokens >= need || limit == rate.Inf {
		return 0
	}
	if limit <= 0 {
		return time.Minute // a budget that never refills: look again later
	}
	d := time.Duration((need - tokens) / float64(limit) * float64(time.Second))
	return d.Truncate(time.Millisecond) + time.Millisecond
}

// WaitPriority blocks until the budget lets one request of priority p
// start, or ctx ends: an urgent request (or any, when the budget keeps no
// reserve) queues on the token bucket as Wait does, a normal one starts
// only while more than the reserve is left; every one keeps to the
// window's quota (SetWindow), the others leaving the reserve's share of
// it to urgent ones (WindowQuota). A request whose ctx ends first gives
// back what it reserved: it takes its token and its start in the window
// only together, when it starts.
func (b *Budget) WaitPriority(ctx context.Context, p Priority) error {
	if b.lim.Limit() == rate.Inf {
		return b.lim.Wait(ctx)
	}
	if p == Background {
		if err := b.awaitSpacing(ctx); err != nil {
			return err
		}
	}
	if p == Urgent || b.reserve == 0 {
		return b.queue(ctx)
	}
	return b.await(ctx, p, true)
}

// awaitSpacing waits out the spacing of background requests and marks
// this one's start (Spacing).
func (b *Budget) awaitSpacing(ctx context.Context) error {
	for {
		b.wmu.Lock()
		now := time.Now()
		d := Spacing(b.lim.TokensAt(now), b.lim.Burst(), b.lastBg, now, b.spacing)
		if d == 0 {
			b.lastBg = now
		}
		b.wmu.Unlock()
		if d == 0 {
			return nil
		}
		if err := b.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// Sleep waits d on the wall clock, or until ctx ends (its error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Ready blocks until a normal request could start now (the bucket above
// the reserve, room in the window), without taking its token, or ctx
// ends: a worker waits here before deciding what its next request
// carries, so what arrives meanwhile rides in it; that request then
// starts as Turned.
func (b *Budget) Ready(ctx context.Context) error {
	if b.lim.Limit() == rate.Inf {
		return ctx.Err()
	}
	return b.await(ctx, Normal, false)
}

// await waits until a request of priority p (normal or background) may
// start, starting it when take. It holds nothing while it waits, so a
// request whose ctx ends has nothing to give back. Waiting is on the
// wall clock, as rate.Limiter waits.
func (b *Budget) await(ctx context.Context, p Priority, take bool) error {
	for {
		d := b.try(p, take)
		if d == 0 {
			return nil
		}
		if err := b.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// try starts a request of priority p now when the bucket holds what it
// needs (Need) and the window has room: it takes its token and records
// its start together, and returns 0; else it returns how long to wait
// before trying again. Without take it only looks.
func (b *Budget) try(p Priority, take bool) time.Duration {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	now := time.Now()
	if d := Delay(b.lim.TokensAt(now), Need(p, b.reserve), b.lim.Limit()); d > 0 {
		return d
	}
	if d := b.windowDelay(p, now); d > 0 || !take {
		return d
	}
	if !b.lim.AllowN(now, 1) {
		return time.Millisecond // an urgent request took it meanwhile
	}
	b.record(now, now)
	return 0
}
