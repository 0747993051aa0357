package events

import (
	"errors"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestI01_StaleEpochOrTokenIsRejectedEvenIfNothingElseChanged(t *testing.T) {
	l, clock := openTestLog(t)
	old := acquire(t, l, "w1").Fence()
	if _, err := l.Append(old, unit("s/a", 0, 1)); err != nil {
		t.Fatalf("live writer append: %v", err)
	}
	for name, f := range map[string]Fence{
		"wrong token":     {Role: old.Role, Epoch: old.Epoch, Token: old.Token + "0"},
		"wrong epoch":     {Role: old.Role, Epoch: old.Epoch + 1, Token: old.Token},
		"wrong role":      {Role: "other", Epoch: old.Epoch, Token: old.Token},
		"empty token":     {Role: old.Role, Epoch: old.Epoch},
		"previous epoch0": {Role: old.Role, Epoch: 0, Token: old.Token},
	} {
		if _, err := l.Append(f, unit("s/a", 1, 1)); !errors.Is(err, ErrStaleWriterFence) {
			t.Errorf("%s: err = %v, want stale_writer_fence", name, err)
		}
	}
	clock.Advance(DefaultLeaseTTL) // lease_until == now: no longer > now
	if _, err := l.Append(old, unit("s/a", 1, 1)); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("expired own lease: err = %v", err)
	}
	next := acquire(t, l, "w2").Fence()
	if _, err := l.Append(old, unit("s/a", 1, 1)); !errors.Is(err, ErrStaleWriterFence) {
		t.Fatalf("displaced writer: err = %v", err)
	}
	if _, err := l.Append(next, unit("s/a", 1, 1)); err != nil {
		t.Fatalf("new owner: %v", err)
	}
	if v, _ := l.StreamVersion("s/a"); v != 2 {
		t.Fatalf("version %d: a fenced append landed", v)
	}
}

func TestI02_TakeoverRefusedWhileLiveAndHeartbeatFresh(t *testing.T) {
	l, clock := openTestLog(t)
	first := acquire(t, l, "w1")
	clock.Advance(StaleHeartbeatAfter) // exactly 15 s: not older than 15 s
	_, err := l.AcquireLease(AcquireRequest{WriterID: "w2"})
	var held *LeaseHeldError
	if !errors.As(err, &held) || held.WriterID != "w1" || held.Epoch != first.Epoch {
		t.Fatalf("err = %v", err)
	}
	if cur, _, _ := l.Lease(DefaultRole); cur.WriterID != "w1" || cur.Token != first.Token {
		t.Fatal("a refused takeover changed the lease")
	}
}

func TestI02_TakeoverAfterExpiryBumpsEpochAndToken(t *testing.T) {
	l, clock := openTestLog(t)
	first := acquire(t, l, "w1")
	clock.Advance(DefaultLeaseTTL) // lease_until <= now
	second := acquire(t, l, "w2")
	if second.Epoch != first.Epoch+1 || second.Token == first.Token || len(second.Token) != 32 {
		t.Fatalf("first %+v second %+v", first, second)
	}
	var last Event
	must(t, l.ReadStream(LeaseStream(DefaultRole), 1, func(e Event) error { last = e; return nil }))
	if g, ok := last.Payload.(LeaseTakenOver); !ok || g.Reason != "expired" || last.Epoch != second.Epoch {
		t.Fatalf("lease event %+v", last)
	}
}

func TestI02_TakeoverOnStaleHeartbeatWhileLeaseUntilInFuture(t *testing.T) {
	l, clock := openTestLog(t)
	first := acquire(t, l, "w1")
	clock.Advance(StaleHeartbeatAfter + time.Millisecond)
	if cur, _, _ := l.Lease(DefaultRole); !cur.LeaseUntil.After(clock.Now()) {
		t.Fatal("test setup: lease_until should still be in the future")
	}
	second := acquire(t, l, "w2")
	if second.Epoch != first.Epoch+1 || second.Token == first.Token {
		t.Fatalf("second %+v", second)
	}
}

func TestI02_NoHeartbeatEvidenceIsExpiryOnly(t *testing.T) {
	l, clock := openTestLog(t)
	first := acquire(t, l, "w1")
	// A record written before heartbeat evidence existed: heartbeat_at is null.
	first.HeartbeatAt = time.Time{}
	must(t, l.update(func(tx *bolt.Tx) error { return putLease(tx, first) }))
	clock.Advance(DefaultLeaseTTL - time.Millisecond) // far past 15 s, not expired
	if _, err := l.AcquireLease(AcquireRequest{WriterID: "w2"}); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("null heartbeat, unexpired: err = %v", err)
	}
	clock.Advance(time.Millisecond)
	if second := acquire(t, l, "w2"); second.Epoch != first.Epoch+1 {
		t.Fatalf("after expiry: %+v", second)
	}
}

func TestI03_RenewExtendsOnlyOwnLiveLease(t *testing.T) {
	l, clock := openTestLog(t)
	first := acquire(t, l, "w1")
	clock.Advance(HeartbeatInterval)
	renewed, err := l.RenewLease(first.Fence(), DefaultLeaseTTL)
	must(t, err)
	if !renewed.HeartbeatAt.Equal(clock.Now()) || !renewed.LeaseUntil.Equal(clock.Now().Add(DefaultLeaseTTL)) || renewed.Epoch != first.Epoch {
		t.Fatalf("renewed %+v", renewed)
	}
	clock.Advance(DefaultLeaseTTL) // expired, nobody took it
	if _, err := l.RenewLease(first.Fence(), DefaultLeaseTTL); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("renew of expired lease: %v", err)
	}
	if cur, _, _ := l.Lease(DefaultRole); cur.Live(clock.Now()) || cur.Epoch != first.Epoch {
		t.Fatal("renewal of an expired lease revived or re-acquired it")
	}
	second := acquire(t, l, "w2")
	if _, err := l.RenewLease(first.Fence(), DefaultLeaseTTL); !errors.Is(err, ErrStaleWriterFence) {
		t.Fatalf("renew after takeover: %v", err)
	}
	if cur, _, _ := l.Lease(DefaultRole); cur.WriterID != "w2" || cur.Token != second.Token || !cur.LeaseUntil.Equal(second.LeaseUntil) {
		t.Fatal("a displaced writer's renewal touched the new owner's lease")
	}
}

// waitWaiters blocks until the manual clock has exactly n pending waiters.
func waitWaiters(t *testing.T, c *ManualClock, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got, changed := c.Waiters()
		if got == n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("clock has %d waiters, want %d", got, n)
		}
	}
}

func TestI03_BackgroundHeartbeatRenewsOnCadenceAndStopsWhenDisplaced(t *testing.T) {
	clock := NewManualClock(t0)
	lostCh := make(chan error, 1)
	w, err := OpenWriter(t.TempDir(), WriterOptions{Log: Options{Clock: clock}, OnLeaseLost: func(err error) { lostCh <- err }})
	must(t, err)
	defer w.Close()
	for i := 1; i <= 3; i++ {
		waitWaiters(t, clock, 1)
		clock.Advance(HeartbeatInterval)
		waitWaiters(t, clock, 1) // the loop came round: the renewal is done
		cur, _, _ := w.Log().Lease(DefaultRole)
		if !cur.HeartbeatAt.Equal(clock.Now()) || cur.Epoch != 1 {
			t.Fatalf("beat %d: lease %+v", i, cur)
		}
	}
	// Displace the writer: its lease expires (clock jumps) and another takes it.
	clock.Advance(DefaultLeaseTTL + HeartbeatInterval)
	select {
	case lost := <-lostCh:
		if !w.Lost() || !errors.Is(lost, ErrLeaseExpired) {
			t.Fatalf("lost=%v err=%v", w.Lost(), lost)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("heartbeat did not report the expired lease")
	}
	waitWaiters(t, clock, 0) // and it stopped: no further timer
	second := acquire(t, w.Log(), "w2")
	if cur, _, _ := w.Log().Lease(DefaultRole); cur.Token != second.Token {
		t.Fatal("heartbeat interfered with the new owner")
	}
}
