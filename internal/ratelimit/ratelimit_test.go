package ratelimit

import (
	"testing"
	"time"
)

// One event per kind per interval, kinds apart, by the injected clock.
func TestLimiterAllowsOnePerKindPerInterval(t *testing.T) {
	now := time.Unix(0, 0)
	l := New(10*time.Second, func() time.Time { return now })
	if !l.Allow("a") || l.Allow("a") || !l.Allow("b") {
		t.Fatal("the first of each kind is allowed, the second within the interval is not")
	}
	now = now.Add(9 * time.Second)
	if l.Allow("a") {
		t.Fatal("allowed after 9s of 10s")
	}
	now = now.Add(time.Second)
	if !l.Allow("a") || l.Allow("a") {
		t.Fatal("not allowed once the interval passed, or twice")
	}
	l.Forget("a")
	if !l.Allow("a") {
		t.Fatal("not allowed after Forget")
	}
}
