package events

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"time"
)

// Lease rules: docs/invariants.md "The writer and its lease" (I01–I03, I22).
const (
	// DefaultLeaseTTL is how far each acquisition or renewal pushes lease_until.
	DefaultLeaseTTL = 30 * time.Second
	// HeartbeatInterval is the background renew-only heartbeat cadence (I03).
	HeartbeatInterval = 5 * time.Second
	// StaleHeartbeatAfter: a live lease whose heartbeat_at is older than this
	// may be taken over (I02).
	StaleHeartbeatAfter = 15 * time.Second
	// DefaultRole is the role of the store's single writer.
	DefaultRole = "writer"
)

// LeaseState is the life-cycle state of a lease record.
type LeaseState string

// Lease states.
const (
	LeaseStateHeld       LeaseState = "held"
	LeaseStateReleased   LeaseState = "released"
	LeaseStateReconciled LeaseState = "reconciled"
)

// Lease is the writer lease record kept inside log.db.
type Lease struct {
	Role       string
	WriterID   string
	Epoch      uint64
	Token      string    // fencing token: 128 random bits, hex
	LeaseUntil time.Time // the lease is live while LeaseUntil > now
	// HeartbeatAt is the last renewal; zero means no heartbeat evidence, and
	// such a lease may only be taken over once expired (I02).
	HeartbeatAt time.Time
	State       LeaseState
	Host        string
	PID         int64
	Operation   string
}

// Fence is what a writer presents with every mutation: role, epoch and token.
type Fence struct {
	Role  string
	Epoch uint64
	Token string
}

// Fence returns the fence of l.
func (l Lease) Fence() Fence { return Fence{Role: l.Role, Epoch: l.Epoch, Token: l.Token} }

// Live reports whether l is held and lease_until > now.
func (l Lease) Live(now time.Time) bool {
	return l.State == LeaseStateHeld && l.LeaseUntil.After(now)
}

// TakeoverReason says why the lease may be taken at now ("vacant",
// "expired", "stale_heartbeat"), or "" when the takeover rule (I02) forbids it.
func (l Lease) TakeoverReason(now time.Time) string {
	switch {
	case l.State != LeaseStateHeld:
		return "vacant"
	case !l.LeaseUntil.After(now):
		return "expired"
	case !l.HeartbeatAt.IsZero() && now.Sub(l.HeartbeatAt) > StaleHeartbeatAfter:
		return "stale_heartbeat"
	}
	return ""
}

// TakeoverAt is the earliest instant at which TakeoverReason becomes non-empty
// if the holder stops renewing.
func (l Lease) TakeoverAt() time.Time {
	if l.HeartbeatAt.IsZero() {
		return l.LeaseUntil
	}
	stale := l.HeartbeatAt.Add(StaleHeartbeatAfter + time.Nanosecond)
	if stale.Before(l.LeaseUntil) {
		return stale
	}
	return l.LeaseUntil
}

// matches reports whether f is this lease's fence (constant-time on the token).
func (l Lease) matches(f Fence) bool {
	return l.Role == f.Role && l.Epoch == f.Epoch &&
		subtle.ConstantTimeCompare([]byte(l.Token), []byte(f.Token)) == 1
}

// checkFence enforces I01: role + epoch + token match and lease_until > now.
// Errors: ErrStaleWriterFence, ErrLeaseExpired.
func (l Lease) checkFence(f Fence, now time.Time) error {
	if l.State != LeaseStateHeld || !l.matches(f) {
		return fmt.Errorf("%w: role %q epoch %d", ErrStaleWriterFence, f.Role, f.Epoch)
	}
	if !l.LeaseUntil.After(now) {
		return fmt.Errorf("%w: role %q epoch %d", ErrLeaseExpired, f.Role, f.Epoch)
	}
	return nil
}

func (l Lease) toMap() map[string]any {
	m := map[string]any{
		"role": l.Role, "writer_id": l.WriterID, "epoch": int64(l.Epoch), "token": l.Token,
		"lease_until": l.LeaseUntil.UTC(), "heartbeat_at": nil, "state": string(l.State),
		"host": l.Host, "pid": l.PID, "operation": l.Operation,
	}
	if !l.HeartbeatAt.IsZero() {
		m["heartbeat_at"] = l.HeartbeatAt.UTC()
	}
	return m
}

func leaseFromMap(m map[string]any) (Lease, error) {
	var l Lease
	var ok [10]bool
	l.Role, ok[0] = m["role"].(string)
	l.WriterID, ok[1] = m["writer_id"].(string)
	epoch, ok2 := m["epoch"].(int64)
	l.Epoch, ok[2] = uint64(epoch), ok2 && epoch >= 0
	l.Token, ok[3] = m["token"].(string)
	l.LeaseUntil, ok[4] = m["lease_until"].(time.Time)
	hb := m["heartbeat_at"]
	l.HeartbeatAt, ok[5] = hb.(time.Time)
	ok[5] = ok[5] || hb == nil
	state, ok6 := m["state"].(string)
	l.State, ok[6] = LeaseState(state), ok6
	l.Host, ok[7] = m["host"].(string)
	l.PID, ok[8] = m["pid"].(int64)
	l.Operation, ok[9] = m["operation"].(string)
	for i, good := range ok {
		if !good {
			return Lease{}, fmt.Errorf("lease record field %d has the wrong type", i)
		}
	}
	return l, nil
}

// newToken returns an unguessable fencing token (128 random bits, hex).
func newToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // cannot happen on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// NewWriterID returns a random writer id (64 bits, hex), one per open.
func NewWriterID() string {
	return newToken()[:16]
}
