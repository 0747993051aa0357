package replication

import (
	"errors"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

var t0 = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

const ttl = 30 * time.Second

func held(holder string, epoch uint64, until, heartbeat time.Time) LeaseRecord {
	return LeaseRecord{Store: "s1", Holder: holder, Epoch: epoch, Token: "tok-" + holder, LeaseUntil: until, HeartbeatAt: heartbeat, State: LeaseHeld}
}

func TestI02_MayTakeOverOnlyWhenVacantExpiredOrHeartbeatStale(t *testing.T) {
	stale := events.StaleHeartbeatAfter
	cases := []struct {
		name string
		rec  LeaseRecord
		want TakeoverReason
	}{
		{"released", LeaseRecord{State: LeaseReleased, LeaseUntil: t0.Add(time.Hour)}, ReasonVacant},
		{"expired exactly now", held("a", 1, t0, t0.Add(-time.Second)), ReasonExpired},
		{"live, fresh heartbeat", held("a", 1, t0.Add(ttl), t0.Add(-time.Second)), ReasonNone},
		{"live, heartbeat exactly 15 s old", held("a", 1, t0.Add(ttl), t0.Add(-stale)), ReasonNone},
		{"live, heartbeat older than 15 s", held("a", 1, t0.Add(ttl), t0.Add(-stale-time.Nanosecond)), ReasonStaleHeartbeat},
		{"live, no heartbeat evidence: expiry only", held("a", 1, t0.Add(time.Hour), time.Time{}), ReasonNone},
		{"expired, no heartbeat evidence", held("a", 1, t0.Add(-time.Nanosecond), time.Time{}), ReasonExpired},
	}
	for _, c := range cases {
		if got := MayTakeOver(c.rec, t0); got != c.want {
			t.Errorf("%s: MayTakeOver = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestI02_AcquisitionBumpsEpochMintsTokenAndRefusesALiveHolder(t *testing.T) {
	first, err := DecideAcquire("s1", nil, "a", "tok1", t0, ttl)
	if err != nil || first.Epoch != 1 || first.Token != "tok1" || !first.LeaseUntil.Equal(t0.Add(ttl)) || first.Reason != ReasonVacant {
		t.Fatalf("first acquisition = %+v, %v", first, err)
	}
	_, err = DecideAcquire("s1", &first, "b", "tok2", t0.Add(10*time.Second), ttl)
	var held *LeaseHeldError
	if !errors.As(err, &held) || held.Holder != "a" || held.Epoch != 1 {
		t.Fatalf("acquisition of a live lease = %v, want *LeaseHeldError naming a", err)
	}
	again, err := DecideAcquire("s1", &first, "a", "tok3", t0.Add(time.Second), ttl)
	if err != nil || again != first {
		t.Fatalf("a retried acquisition by the live holder must return its lease unchanged: %+v, %v", again, err)
	}
	next, err := DecideAcquire("s1", &first, "b", "tok2", t0.Add(ttl), ttl)
	if err != nil || next.Epoch != 2 || next.Token != "tok2" || next.Holder != "b" || next.Reason != ReasonExpired {
		t.Fatalf("takeover after expiry = %+v, %v; want epoch 2, new token", next, err)
	}
}

func TestI03_RenewalOnlyExtendsTheCallersOwnLiveLease(t *testing.T) {
	mine := held("a", 1, t0.Add(ttl), t0)
	now := t0.Add(5 * time.Second)
	got, err := DecideRenew(&mine, mine, now, ttl)
	if err != nil || !got.LeaseUntil.Equal(now.Add(ttl)) || !got.HeartbeatAt.Equal(now) || got.Epoch != 1 || got.Token != mine.Token {
		t.Fatalf("renewal = %+v, %v", got, err)
	}
	takenOver := held("b", 2, t0.Add(time.Hour), now)
	expired := mine
	released := mine
	released.State = LeaseReleased
	for name, tc := range map[string]struct {
		cur *LeaseRecord
		at  time.Time
	}{
		"no record": {nil, now}, "taken over": {&takenOver, now}, "released": {&released, now}, "own but expired": {&expired, t0.Add(ttl)},
	} {
		if _, err := DecideRenew(tc.cur, mine, tc.at, ttl); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("%s: DecideRenew = %v, want ErrLeaseLost (a renewal never takes over)", name, err)
		}
	}
}

func TestReleaseKeepsTheEpochAndNeedsTheOwnFence(t *testing.T) {
	mine := held("a", 4, t0.Add(ttl), t0)
	rel, err := DecideRelease(&mine, mine, t0)
	if err != nil || rel.State != LeaseReleased || rel.Epoch != 4 || rel.Token != "" {
		t.Fatalf("release = %+v, %v", rel, err)
	}
	other := held("b", 5, t0.Add(ttl), t0)
	if _, err := DecideRelease(&other, mine, t0); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("releasing another holder's lease = %v, want ErrLeaseLost", err)
	}
	next, err := DecideAcquire("s1", &rel, "c", "tok", t0, ttl)
	if err != nil || next.Epoch != 5 {
		t.Fatalf("acquisition after release = %+v, %v; want epoch 5", next, err)
	}
}
