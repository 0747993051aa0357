package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The queue's decision: an urgent or a turned request needs one token, a
// normal one one more than the reserve; the wait is the refill of what is
// missing.
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
		{"a turned request takes the reserve", Turned, 2, 1, 1, 0},
		{"a turned request without a token waits for one", Turned, 2, 0.5, 1, 501 * time.Millisecond},
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

// Background requests come one at a time while the bucket is not full:
// the next no sooner than the spacing after the last; with the bucket
// full (nothing else waits), or never spaced, at once.
func TestSpacing(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name   string
		tokens float64
		last   time.Time
		now    time.Time
		every  time.Duration
		want   time.Duration
	}{
		{"the first starts at once", 0, time.Time{}, t0, 3 * time.Second, 0},
		{"a busy bucket spaces the next", 1, t0, t0.Add(time.Second), 3 * time.Second, 2 * time.Second},
		{"the spacing has passed", 1, t0, t0.Add(3 * time.Second), 3 * time.Second, 0},
		{"a full bucket: nothing else waits", 5, t0, t0.Add(time.Second), 3 * time.Second, 0},
		{"not spaced", 0, t0, t0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Spacing(c.tokens, 5, c.last, c.now, c.every); got != c.want {
				t.Fatalf("Spacing(%v tokens of 5, last %v, now %v, every %v) = %v, want %v", c.tokens, c.last, c.now, c.every, got, c.want)
			}
		})
	}
}

// A background request after another waits out the spacing while the
// bucket is not full (asked here with its context already ended).
func TestBudgetSpacesBackgroundRequests(t *testing.T) {
	b := NewBudget(time.Hour, 5, nil)
	b.SetReserve(2)
	b.SetSpacing(time.Hour)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.WaitPriority(context.Background(), Background); err != nil {
		t.Fatalf("the first background request: %v", err)
	}
	if err := b.WaitPriority(ended, Background); !errors.Is(err, context.Canceled) {
		t.Fatalf("a second background request within the spacing = %v, want it to wait", err)
	}
	if err := b.WaitPriority(context.Background(), Normal); err != nil {
		t.Fatalf("a normal request is not spaced: %v", err)
	}
}

// The window's quota: the next start waits until the oldest of the last
// quota starts is a window old.
func TestWindowDelay(t *testing.T) {
	t0 := time.Unix(1000, 0)
	three := []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second)}
	cases := []struct {
		name   string
		starts []time.Time
		quota  int
		now    time.Time
		want   time.Duration
	}{
		{"fewer starts than the quota", three[:2], 3, t0.Add(2 * time.Second), 0},
		{"the quota reached", three, 3, t0.Add(10 * time.Second), 50 * time.Second},
		{"the oldest left the window", three, 3, t0.Add(time.Minute), 0},
		{"a smaller quota looks at the newer starts", three, 2, t0.Add(time.Minute), time.Second},
		{"no quota", three, 0, t0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := WindowDelay(c.starts, c.quota, time.Minute, c.now); got != c.want {
				t.Fatalf("WindowDelay = %v, want %v", got, c.want)
			}
		})
	}
}

// A budget whose bucket has tokens left still keeps to the window's
// quota (a request past it asked with its context already ended).
func TestBudgetKeepsToTheWindow(t *testing.T) {
	b := NewBudget(time.Millisecond, 5, nil)
	b.SetWindow(2, time.Hour)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 2 {
		if err := b.Wait(context.Background()); err != nil {
			t.Fatalf("start %d within the quota: %v", i, err)
		}
	}
	if err := b.WaitPriority(ended, Urgent); !errors.Is(err, context.Canceled) {
		t.Fatalf("a third start within the window = %v, want it to wait", err)
	}
}

// Urgent requests may fill the window's quota; the others leave the
// reserve's share of it to them.
func TestWindowQuota(t *testing.T) {
	cases := []struct {
		p                    Priority
		quota, reserve, want int
	}{
		{Urgent, 60, 2, 60},
		{Normal, 60, 2, 58},
		{Background, 60, 2, 58},
		{Turned, 60, 2, 60},
		{Normal, 60, 0, 60},
		{Normal, 2, 5, 1},
		{Normal, 0, 2, 0},
	}
	for _, c := range cases {
		if got := WindowQuota(c.p, c.quota, c.reserve); got != c.want {
			t.Errorf("WindowQuota(%v, %d, %d) = %d, want %d", c.p, c.quota, c.reserve, got, c.want)
		}
	}
}
