package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitCancelled starts a request of priority p on b, cancels it once it
// waits (b's sleep says so) and returns its error.
func waitCancelled(t *testing.T, b *Budget, p Priority) error {
	t.Helper()
	waiting := make(chan struct{})
	b.sleep = func(ctx context.Context, _ time.Duration) error {
		close(waiting)
		<-ctx.Done()
		return ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.WaitPriority(ctx, p) }()
	<-waiting
	cancel()
	err := <-done
	b.sleep = func(context.Context, time.Duration) error {
		t.Error("a request waited")
		return errors.New("test: no wait expected")
	}
	return err
}

// A request cancelled while the window's quota is full gives back what it
// reserved: the bucket's tokens are as before, and once the window has
// room the next request starts at once (no refill in an hour).
func TestACancelledWaitGivesItsTokenBack(t *testing.T) {
	cases := []struct {
		name    string
		p       Priority
		reserve int
	}{
		{"urgent", Urgent, 0},
		{"normal without a reserve", Normal, 0},
		{"normal keeping a reserve", Normal, 1},
		{"background keeping a reserve", Background, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBudget(time.Hour, 3, nil)
			b.SetReserve(c.reserve)
			b.SetWindow(1, time.Hour)
			if err := b.WaitPriority(context.Background(), c.p); err != nil {
				t.Fatalf("the first request: %v", err)
			}
			before := b.Tokens()
			if err := waitCancelled(t, b, c.p); !errors.Is(err, context.Canceled) {
				t.Fatalf("a request past the window's quota = %v, want it cancelled while it waits", err)
			}
			if got := b.Tokens(); got < before-0.01 {
				t.Fatalf("tokens %.2f after the cancelled wait, %.2f before: its token was not given back", got, before)
			}
			b.SetWindow(10, time.Hour)                                            // room again, the reserve's share left aside
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a token refilled in an hour is past it
			defer cancel()
			if err := b.WaitPriority(ctx, c.p); err != nil {
				t.Fatalf("the next request once the window has room: %v", err)
			}
		})
	}
}

// An urgent request cancelled while it waits for the bucket to refill
// gives back its reservation: the requests queued after it move up.
func TestACancelledBucketWaitGivesItsReservationBack(t *testing.T) {
	b := NewBudget(time.Hour, 1, nil)
	if err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := waitCancelled(t, b, Urgent); !errors.Is(err, context.Canceled) {
		t.Fatalf("an urgent request on an empty bucket = %v, want it cancelled while it waits", err)
	}
	if got := b.Tokens(); got < -0.01 {
		t.Fatalf("tokens %.2f after the cancelled wait, want 0 (its reservation given back)", got)
	}
}
