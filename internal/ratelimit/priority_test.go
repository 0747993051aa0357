package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The queue's decision: an urgent request needs one token, a normal one
// one more than the reserve; the wait is the refill of what is missing.
func TestPriorityNeedAndDelay(t *testing.T) {
	cases := []struct {
		name    string
		p       Priority
		reserve int
		tokens  float64
		limit   rate.Limit
		want    time.Duration
	}{
		{"urgent with a token starts now", Urgent, 2, 1, 1, 0},
		{"urgent takes the reserve", Urgent, 2, 1.5, 1, 0},
		{"normal leaves the reserve", Normal, 2, 2.5, 1, 501 * time.Millisecond},
		{"normal with more than the reserve starts now", Normal, 2, 3, 1, 0},
		{"no reserve: normal as urgent", Normal, 0, 1, 1, 0},
		{"a negative reserve is none", Normal, -3, 1, 1, 0},
		{"behind urgent reservations", Normal, 2, -1, 1, 4*time.Second + time.Millisecond},
		{"a faster budget refills sooner", Normal, 2, 2, 4, 251 * time.Millisecond},
		{"unpaced never waits", Normal, 2, 0, rate.Inf, 0},
		{"a budget that never refills looks again later", Urgent, 0, 0, 0, time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Delay(c.tokens, Need(c.p, c.reserve), c.limit); got != c.want {
				t.Fatalf("Delay(%v, Need(%v, %d), %v) = %v, want %v", c.tokens, c.p, c.reserve, c.limit, got, c.want)
			}
		})
	}
}

// A budget keeping a reserve: normal requests stop at it, urgent ones
// take it; nothing here waits for a refill (one
// token an hour), so a request that would wait is asked with its context
// already ended.
func TestBudgetReserve(t *testing.T) {
	b := NewBudget(time.Hour, 3, nil)
	b.SetReserve(2)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	if err := b.Ready(ctx); err != nil {
		t.Fatalf("Ready with a token above the reserve: %v", err)
	}
	if err := b.WaitPriority(ctx, Normal); err != nil {
		t.Fatalf("a normal request above the reserve: %v", err)
	}
	if err := b.Ready(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("Ready at the reserve = %v, want it to wait", err)
	}
	if err := b.WaitPriority(ended, Normal); !errors.Is(err, context.Canceled) {
		t.Fatalf("a normal request at the reserve = %v, want it to wait", err)
	}
	for i := range 2 {
		if err := b.WaitPriority(ctx, Urgent); err != nil {
			t.Fatalf("urgent request %d within the reserve: %v", i, err)
		}
	}
	if err := b.WaitPriority(ended, Urgent); err == nil {
		t.Fatal("an urgent request started with the bucket empty")
	}
}

// The reserve never blocks normal requests for good: it is at most the
// burst less one, and an unpaced budget keeps none.
func TestBudgetReserveClamped(t *testing.T) {
	b := NewBudget(time.Hour, 3, nil)
	b.SetReserve(10)
	if b.reserve != 2 {
		t.Fatalf("reserve %d of a burst of 3, want 2", b.reserve)
	}
	u := NewBudget(-1, 5, nil)
	u.SetReserve(2)
	if u.reserve != 0 || u.WaitPriority(context.Background(), Normal) != nil || u.Ready(context.Background()) != nil {
		t.Fatalf("an unpaced budget keeps a reserve of %d or waits", u.reserve)
	}
}
