package replication

import (
	"errors"
	"fmt"
)

// Sentinel errors; each text is a stable snake_case code. Returned errors
// wrap them with detail; match with errors.Is.
var (
	// ErrConfigInvalid: a Config or LeaseConfig is unusable (bad store
	// name, replicas out of range) or an existing stream does not match.
	ErrConfigInvalid = errors.New("replication_config_invalid")
	// ErrFenced: the stream's last sequence is not the one the writer
	// expected: another writer appended. The commit was NOT stored. The
	// writer is not at the head; it must stop writing (it was deposed, or
	// must catch up under a lease it still holds).
	ErrFenced = errors.New("replication_fenced")
	// ErrUnavailable: no definite answer from the stream (no quorum, no
	// leader, timeout, connection lost). The commit's fate is UNCERTAIN:
	// it may or may not be stored. The caller must not acknowledge it and
	// must not append anything else; it resolves the commit by calling
	// Append again with the same expected sequence and the same records
	// until it gets a definite answer (success: it is stored at the
	// returned sequence; ErrFenced: it is not stored).
	ErrUnavailable = errors.New("replication_unavailable")
	// ErrSequenceUnreadable: the stream took the sequence an append's
	// answer depends on, but its message did not become readable within
	// Config.SettleWithin or before the append's context ended (a
	// proposal the leader counted that no quorum stored yet). It comes with ErrUnavailable: the fate is UNCERTAIN,
	// resolved as that sentinel says.
	ErrSequenceUnreadable = errors.New("replication_sequence_unreadable")
	// ErrRejected: the server refused the commit for a reason other than
	// fencing (e.g. the stream is missing). The commit was NOT stored.
	ErrRejected = errors.New("replication_rejected")
	// ErrCommitTooLarge: the encoded commit exceeds the server's maximum
	// message size (MaxCommitBytes). Nothing was published.
	ErrCommitTooLarge = errors.New("replication_commit_too_large")
	// ErrIdempotencyConflict: the stream holds a message with this
	// commit's idempotency key but other content. Nothing was published.
	ErrIdempotencyConflict = errors.New("replication_idempotency_conflict")
	// ErrStreamNotFound: OpenExisting found no stream for the store.
	ErrStreamNotFound = errors.New("replication_stream_not_found")
	// ErrCorruptCommit: a stream message is not a well-formed commit.
	ErrCorruptCommit = errors.New("replication_corrupt_commit")
	// ErrGap: a reader saw a stream sequence other than the next one.
	// ErrStreamPurged: a reader needs commits the stream no longer holds:
	// they were purged once every host had sealed them (Purge). A log
	// behind that point is brought up from a backup of a host, not from
	// the stream. See *PurgedError.
	ErrStreamPurged = errors.New("replication_stream_purged")
	ErrGap          = errors.New("replication_gap")
	// ErrLeaseHeld: another holder's live lease may not be taken over yet
	// (I02). See *LeaseHeldError.
	ErrLeaseHeld = errors.New("replication_lease_held")
	// ErrLeaseLost: the caller's lease is no longer its own live lease
	// (taken over, released or expired); a renewal never re-acquires (I03).
	ErrLeaseLost = errors.New("replication_lease_lost")
	// ErrLeaseCorrupt: the lease key holds something that is not a lease.
	ErrLeaseCorrupt = errors.New("replication_lease_corrupt")
)

// LeaseHeldError names the live holder that refused an acquisition and
// when its lease may be taken over at the earliest.
type LeaseHeldError struct {
	Store  string
	Holder string
	Epoch  uint64
	// TakeoverAt is the earliest instant the rule allows a takeover if the
	// holder stops renewing.
	TakeoverAt string
}

// Error returns "replication_lease_held: store S: held by H (epoch E) ...".
func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("%s: store %q: held by %q (epoch %d); takeover possible from %s", ErrLeaseHeld, e.Store, e.Holder, e.Epoch, e.TakeoverAt)
}

// Unwrap returns ErrLeaseHeld.
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// PurgedError names the commit a reader needed and the stream's first.
type PurgedError struct {
	Stream      string
	Need, First uint64
}

// Error returns "replication_stream_purged: …".
func (e *PurgedError) Error() string {
	return fmt.Sprintf("%s: %s needs commit %d, the stream starts at %d (the commits before it were sealed and purged): "+
		"restore a backup of a host of the store taken after commit %d, then follow the stream",
		ErrStreamPurged, e.Stream, e.Need, e.First, e.First-1)
}

// Unwrap returns ErrStreamPurged.
func (e *PurgedError) Unwrap() error { return ErrStreamPurged }
