package events

import "time"

// Lease events: the writer lease's life cycle.
// Stream "lease/<role>". Renewals and heartbeats are state in log.db, not
// events.
const (
	TypeLeaseAcquired   Type = "lease.acquired"
	TypeLeaseTakenOver  Type = "lease.taken_over"
	TypeLeaseReleased   Type = "lease.released"
	TypeLeaseReconciled Type = "lease.reconciled"
)

// LeaseStream is the stream holding a role's lease events.
func LeaseStream(role string) string { return "lease/" + role }

// LeaseGrant is the payload of lease.acquired and lease.taken_over: a
// writer took the lease, with a new epoch and fencing token (the token is
// not part of the payload).
type LeaseGrant struct {
	// State is always held.
	State LeaseState `canon:"state"`
	// WriterID identifies the writer that took the lease (one per open).
	WriterID string `canon:"writer_id"`
	// Epoch is the new lease epoch: one more than the previous one.
	Epoch uint64 `canon:"epoch"`
	// Host and PID name the process that took it.
	Host string `canon:"host"`
	PID  int64  `canon:"pid"`
	// Operation is what the writer declared it does ("serve", "demo", …).
	Operation string `canon:"operation"`
	// Reason is why the lease could be taken: vacant, expired or stale_heartbeat.
	Reason string `canon:"reason"`
	// PreviousWriterID and PreviousEpoch name the lease this one replaced
	// ("" and 0 for the first).
	PreviousWriterID string `canon:"previous_writer_id"`
	PreviousEpoch    uint64 `canon:"previous_epoch"`
	// LeaseUntil is the new lease's expiry.
	LeaseUntil time.Time `canon:"lease_until"`
}

// LeaseAcquired records a lease taken while vacant (never held or released).
type LeaseAcquired LeaseGrant

// LeaseTakenOver records a lease taken from a holder that stopped renewing
// (expired, or heartbeat older than 15 s).
type LeaseTakenOver LeaseGrant

// LeaseReleased records a clean close: the next writer acquires at once.
type LeaseReleased struct {
	// State is always released.
	State LeaseState `canon:"state"`
	// WriterID and Epoch name the lease released.
	WriterID string `canon:"writer_id"`
	Epoch    uint64 `canon:"epoch"`
}

// LeaseReconciled records the lease.toml a run left behind when it did not
// close cleanly, reconciled by the next writer in its takeover.
type LeaseReconciled struct {
	// State is always reconciled.
	State LeaseState `canon:"state"`
	// WriterID is the writer of the run that left lease.toml behind.
	WriterID string `canon:"writer_id"`
	// Host, PID, Operation and AcquiredAt are what its lease.toml said.
	Host       string    `canon:"host"`
	PID        int64     `canon:"pid"`
	Operation  string    `canon:"operation"`
	AcquiredAt time.Time `canon:"acquired_at"`
	// ByWriterID is the writer that reconciled it.
	ByWriterID string `canon:"by_writer_id"`
}

// EventType implements Payload.
func (LeaseAcquired) EventType() Type { return TypeLeaseAcquired }

// EventType implements Payload.
func (LeaseTakenOver) EventType() Type { return TypeLeaseTakenOver }

// EventType implements Payload.
func (LeaseReleased) EventType() Type { return TypeLeaseReleased }

// EventType implements Payload.
func (LeaseReconciled) EventType() Type { return TypeLeaseReconciled }

const leaseStreamPattern = "lease/<role>"

func init() {
	register[LeaseAcquired](1, leaseStreamPattern)
	register[LeaseTakenOver](1, leaseStreamPattern)
	register[LeaseReleased](1, leaseStreamPattern)
	register[LeaseReconciled](1, leaseStreamPattern)
}
