package ratelimit

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// reservation is a queued request's token of the bucket and its start in
// the window, taken together (reserveStart).
type reservation struct {
	tok *rate.Reservation
	at  time.Time // when the token comes: the request's start
}

// queue waits, as an urgent request, for the bucket's next token (behind
// the ones reserved ahead, as rate.Limiter.Wait queues) and a start
// within the window's quota. It reserves both together, only when the
// window has room at the token's time, and gives both back when ctx ends
// before that time: the requests queued after it move up, and the next
// request starts as if it had never come. A wait past ctx's deadline
// fails at once, as rate.Limiter.Wait's does.
func (b *Budget) queue(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for {
		res, d, err := b.reserveStart(ctx)
		switch {
		case err != nil:
			return err
		case d == 0:
			return nil
		}
		if err := b.sleep(ctx, d); err != nil {
			if res != nil {
				b.giveBack(res)
			}
			return err
		}
		if res != nil {
			return nil
		}
	}
}

// reserveStart reserves, at now, the bucket's next token and a start at its
// time, and returns them and how long until that time; when the window
// has no room then, it reserves nothing and returns how long to wait
// before asking again.
func (b *Budget) reserveStart(ctx context.Context) (*reservation, time.Duration, error) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	now := time.Now()
	tok := b.lim.ReserveN(now, 1)
	if !tok.OK() {
		return nil, 0, fmt.Errorf("ratelimit: a budget bursting to %d lets no request start", b.lim.Burst())
	}
	at := now.Add(tok.DelayFrom(now))
	if d := b.windowDelay(Urgent, at); d > 0 {
		tok.CancelAt(now)
		return nil, at.Sub(now) + d, nil
	}
	if deadline, ok := ctx.Deadline(); ok && at.After(deadline) {
		tok.CancelAt(now)
		return nil, 0, fmt.Errorf("%w: the budget's next token comes after it", context.DeadlineExceeded)
	}
	b.record(at, now)
	return &reservation{tok: tok, at: at}, at.Sub(now), nil
}

// giveBack returns what a request that will not start reserved: its
// token to the bucket (rate.Reservation.CancelAt: the tokens reserved
// after it stay theirs) and its start in the window.
func (b *Budget) giveBack(res *reservation) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	res.tok.CancelAt(time.Now())
	b.unrecord(res.at)
}
