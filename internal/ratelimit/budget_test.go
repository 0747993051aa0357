package ratelimit

import (
	"context"
	"math"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The AIMD decision, step by step: a 429 halves the rate once per hold
// window however many workers see it, never below the floor; each success
// adds a twentieth of the ceiling back, never past it.
func TestAIMDNext(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := DefaultAIMD(1) // one request a second
	cases := []struct {
		name string
		in   State
		sig  Signal
		at   time.Time
		want State
	}{
		{"a success at the ceiling stays there", State{Limit: 1}, Succeeded, t0, State{Limit: 1}},
		{"the first 429 halves", State{Limit: 1}, Throttled, t0, State{Limit: 0.5, Cut: t0, Throttled: 1}},
		{"a 429 within the hold counts but cuts nothing", State{Limit: 0.5, Cut: t0, Throttled: 1}, Throttled, t0.Add(4 * time.Second),
			State{Limit: 0.5, Cut: t0, Throttled: 2}},
		{"a 429 after the hold halves again", State{Limit: 0.5, Cut: t0, Throttled: 2}, Throttled, t0.Add(5 * time.Second),
			State{Limit: 0.25, Cut: t0.Add(5 * time.Second), Throttled: 3}},
		{"never below the floor", State{Limit: 0.12, Cut: t0}, Throttled, t0.Add(time.Minute),
			State{Limit: 0.1, Cut: t0.Add(time.Minute), Throttled: 1}},
		{"a success adds a twentieth of the ceiling", State{Limit: 0.5, Cut: t0}, Succeeded, t0.Add(time.Second),
			State{Limit: 0.55, Cut: t0}},
		{"never above the ceiling", State{Limit: 0.98, Cut: t0}, Succeeded, t0, State{Limit: 1, Cut: t0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := a.Next(c.in, c.sig, c.at)
			if !near(got.Limit, c.want.Limit) || !got.Cut.Equal(c.want.Cut) || got.Throttled != c.want.Throttled {
				t.Fatalf("Next(%+v, %v) = %+v, want %+v", c.in, c.sig, got, c.want)
			}
		})
	}
}

// Pacing off (an infinite ceiling) is never tuned, but 429s are counted.
func TestAIMDUnlimitedIsNeverTuned(t *testing.T) {
	a := DefaultAIMD(rate.Inf)
	s := a.Next(State{Limit: rate.Inf}, Throttled, time.Unix(0, 0))
	if s.Limit != rate.Inf || s.Throttled != 1 {
		t.Fatalf("%+v", s)
	}
}

// The budget applies the decision to its limiter: every worker waiting on
// it slows, and recovers with successes.
func TestBudgetSlowsAndRecovers(t *testing.T) {
	now := time.Unix(0, 0)
	b := NewBudget(time.Second, 5, func() time.Time { return now })
	b.Observe(Throttled)
	b.Observe(Throttled) // the same exhausted quota, seen by a second worker
	st, ceiling := b.Snapshot()
	if !near(st.Limit, 0.5) || st.Throttled != 2 || ceiling != 1 || !near(b.lim.Limit(), 0.5) {
		t.Fatalf("after two 429s together: %+v ceiling %v limiter %v", st, ceiling, b.lim.Limit())
	}
	for range 10 {
		b.Observe(Succeeded)
	}
	if st, _ = b.Snapshot(); !near(st.Limit, 1) || !near(b.lim.Limit(), 1) {
		t.Fatalf("after 10 successes: %+v limiter %v", st, b.lim.Limit())
	}
	if h := b.Headroom(); h < 4 || h > 5 {
		t.Fatalf("headroom %d of a fresh budget bursting to 5", h)
	}
}

func near(a, b rate.Limit) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

// Tokens is what a pool compares: +Inf unpaced, the burst for a fresh
// budget, fewer once requests took some.
func TestBudgetTokens(t *testing.T) {
	if tok := NewBudget(-1, 0, nil).Tokens(); !math.IsInf(tok, 1) {
		t.Fatalf("unpaced tokens %v, want +Inf", tok)
	}
	b := NewBudget(time.Hour, 3, nil)
	if tok := b.Tokens(); tok < 2.99 || tok > 3 {
		t.Fatalf("fresh tokens %v, want the burst of 3", tok)
	}
	if err := b.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if tok := b.Tokens(); tok < 1.99 || tok > 2.01 {
		t.Fatalf("tokens %v after one request, want 2", tok)
	}
}

// A budget paced every nanosecond has a quota of 6e10 starts a window: it
// remembers only the starts still within the window (here a
// microsecond), not every start until the quota fills (its memory grew
// with every request).
func TestWindowForgetsStartsPastTheWindow(t *testing.T) {
	b := NewBudget(time.Nanosecond, 5, nil)
	b.SetWindow(int(time.Minute/time.Nanosecond), time.Microsecond)
	for range 2000 {
		if err := b.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if d := b.windowDelay(Urgent, time.Now()); d != 0 || len(b.starts) > 1000 {
		t.Fatalf("after 2,000 starts: delay %v, %d starts remembered", d, len(b.starts))
	}
}
