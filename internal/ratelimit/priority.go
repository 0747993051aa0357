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
)

// Need is how many tokens a budget's bucket must hold for a request of
// priority p to start now, with reserve tokens kept for urgent requests:
// the pure decision of the queue.
func Need(p Priority, reserve int) float64 {
	if p == Urgent {
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
// only while more than the reserve is left.
func (b *Budget) WaitPriority(ctx context.Context, p Priority) error {
	if p == Urgent || b.reserve == 0 || b.lim.Limit() == rate.Inf {
		return b.lim.Wait(ctx)
	}
	return b.await(ctx, true)
}

// Ready blocks until a normal request could start now, without taking
// its token, or ctx ends: a worker waits here before deciding what its
// next request carries, so what arrives meanwhile rides in it.
func (b *Budget) Ready(ctx context.Context) error {
	if b.lim.Limit() == rate.Inf {
		return ctx.Err()
	}
	return b.await(ctx, false)
}

// await waits until a normal request may start, taking its token when
// take. Waiting is on the wall clock, as rate.Limiter waits.
func (b *Budget) await(ctx context.Context, take bool) error {
	for {
		d := b.try(take)
		if d == 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// try starts a normal request now (taking its token when take) and
// returns 0, or returns how long to wait before trying again.
func (b *Budget) try(take bool) time.Duration {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	now := time.Now()
	if d := Delay(b.lim.TokensAt(now), Need(Normal, b.reserve), b.lim.Limit()); d > 0 {
		return d
	}
	if take && !b.lim.AllowN(now, 1) {
		return time.Millisecond // an urgent request took it meanwhile
	}
	return 0
}
