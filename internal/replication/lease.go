package replication

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Clock is the only source of time for lease decisions
// (events.SystemClock and events.ManualClock satisfy it).
type Clock interface {
	Now() time.Time
}

// LeaseState is a lease record's life-cycle state.
type LeaseState string

// Lease states.
const (
	LeaseHeld     LeaseState = "held"
	LeaseReleased LeaseState = "released"
)

// TakeoverReason says why an acquisition may take the lease.
type TakeoverReason string

// Takeover reasons (I02). ReasonNone: the rule forbids a takeover.
const (
	ReasonNone           TakeoverReason = ""
	ReasonVacant         TakeoverReason = "vacant"          // never held, or released
	ReasonExpired        TakeoverReason = "expired"         // lease_until <= now
	ReasonStaleHeartbeat TakeoverReason = "stale_heartbeat" // live, but heartbeat_at older than 15 s
)

// LeaseRecord is the value of a store's key in LeaseBucket (JSON). Epoch
// and Token are the fence: every acquisition bumps Epoch and mints a new
// Token, so the deposed holder's fence no longer matches.
type LeaseRecord struct {
	Store       string     `json:"store"`
	Holder      string     `json:"holder"`
	Epoch       uint64     `json:"epoch"`
	Token       string     `json:"token"`
	LeaseUntil  time.Time  `json:"lease_until"`
	HeartbeatAt time.Time  `json:"heartbeat_at,omitzero"` // zero: no heartbeat evidence (expiry-only)
	State       LeaseState `json:"state"`
	// Reason is how this record's epoch was acquired (informative).
	Reason TakeoverReason `json:"reason,omitempty"`
}

// asEventsLease is r in the form events.Lease's rule reads.
func (r LeaseRecord) asEventsLease() events.Lease {
	st := events.LeaseStateHeld
	if r.State != LeaseHeld {
		st = events.LeaseStateReleased
	}
	return events.Lease{LeaseUntil: r.LeaseUntil, HeartbeatAt: r.HeartbeatAt, State: st}
}

// Live reports whether r is held and lease_until > now.
func (r LeaseRecord) Live(now time.Time) bool {
	return r.State == LeaseHeld && r.LeaseUntil.After(now)
}

// MayTakeOver is the takeover rule (I02), the seed's rule shared with the
// local lease (events.Lease.TakeoverReason): a lease may be taken when it
// is vacant, expired, or live with heartbeat_at older than
// events.StaleHeartbeatAfter (15 s); a lease without heartbeat evidence
// only once expired. Pure.
func MayTakeOver(cur LeaseRecord, now time.Time) TakeoverReason {
	return TakeoverReason(cur.asEventsLease().TakeoverReason(now))
}

// takeoverAt is the earliest instant MayTakeOver allows a takeover if the
// holder stops renewing.
func (r LeaseRecord) takeoverAt() time.Time { return r.asEventsLease().TakeoverAt() }

// sameFence reports whether r is mine's lease: same holder, epoch, token.
func (r LeaseRecord) sameFence(mine LeaseRecord) bool {
	return r.Holder == mine.Holder && r.Epoch == mine.Epoch && r.Token == mine.Token
}

// DecideAcquire is the pure acquisition decision. cur is the stored
// record (nil: none ever). It returns the record to write, or cur itself
// unchanged when holder already holds it live (a retried acquisition), or
// *LeaseHeldError. Acquisition bumps the epoch, installs token, and
// starts the lease with a heartbeat at now.
func DecideAcquire(store string, cur *LeaseRecord, holder, token string, now time.Time, ttl time.Duration) (LeaseRecord, error) {
	next := LeaseRecord{Store: store, Holder: holder, Epoch: 1, Token: token, LeaseUntil: now.Add(ttl), HeartbeatAt: now, State: LeaseHeld, Reason: ReasonVacant}
	if cur == nil {
		return next, nil
	}
	if cur.Holder == holder && cur.Live(now) {
		return *cur, nil
	}
	reason := MayTakeOver(*cur, now)
	if reason == ReasonNone {
		return LeaseRecord{}, &LeaseHeldError{Store: store, Holder: cur.Holder, Epoch: cur.Epoch, TakeoverAt: cur.takeoverAt().UTC().Format(time.RFC3339Nano)}
	}
	next.Epoch, next.Reason = cur.Epoch+1, reason
	return next, nil
}

// DecideRenew is the pure renewal decision (I03): it extends mine only
// while the stored record is still mine's own live lease (same holder,
// epoch and token, held, lease_until > now). It never acquires or takes
// over. Errors: ErrLeaseLost.
func DecideRenew(cur *LeaseRecord, mine LeaseRecord, now time.Time, ttl time.Duration) (LeaseRecord, error) {
	if err := ownLive(cur, mine, now); err != nil {
		return LeaseRecord{}, err
	}
	next := *cur
	next.LeaseUntil, next.HeartbeatAt = now.Add(ttl), now
	return next, nil
}

// DecideRelease is the pure release decision: mine's own lease becomes
// released at now (the epoch stays, so the next acquisition bumps it).
// An expired own lease may still be released. Errors: ErrLeaseLost.
func DecideRelease(cur *LeaseRecord, mine LeaseRecord, now time.Time) (LeaseRecord, error) {
	if cur == nil || cur.State != LeaseHeld || !cur.sameFence(mine) {
		return LeaseRecord{}, lost(cur, mine)
	}
	next := *cur
	next.State, next.LeaseUntil, next.Token = LeaseReleased, now, ""
	return next, nil
}

func ownLive(cur *LeaseRecord, mine LeaseRecord, now time.Time) error {
	if cur == nil || !cur.sameFence(mine) || cur.State != LeaseHeld {
		return lost(cur, mine)
	}
	if !cur.LeaseUntil.After(now) {
		return fmt.Errorf("%w: store %q epoch %d expired at %s", ErrLeaseLost, mine.Store, mine.Epoch, cur.LeaseUntil.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

func lost(cur *LeaseRecord, mine LeaseRecord) error {
	if cur == nil {
		return fmt.Errorf("%w: store %q has no lease record", ErrLeaseLost, mine.Store)
	}
	return fmt.Errorf("%w: store %q epoch %d; the record is now %q's epoch %d (%s)", ErrLeaseLost, mine.Store, mine.Epoch, cur.Holder, cur.Epoch, cur.State)
}

// NewToken returns a fencing token: 128 random bits, hex.
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

func encodeLease(r LeaseRecord) ([]byte, error) { return json.Marshal(r) }

func decodeLease(store string, b []byte) (LeaseRecord, error) {
	var r LeaseRecord
	if err := json.Unmarshal(b, &r); err != nil || r.Store != store || (r.State != LeaseHeld && r.State != LeaseReleased) {
		return LeaseRecord{}, fmt.Errorf("%w: store %q: the lease key does not hold a lease record", ErrLeaseCorrupt, store)
	}
	return r, nil
}
