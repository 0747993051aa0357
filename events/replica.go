package events

import (
	"errors"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Replicator is the store of record of replicated mode (a JetStream
// stream, internal/replication): every commit's records are stored there
// before the local transaction commits, and a standby's log follows it
// (ApplyReplica). Records go in their replica form (ReplicaRecord: the
// fencing token left out, so it never leaves the store).
type Replicator interface {
	// Append stores one commit's records after replica commit last (the
	// replicated log's head as this log knows it) and returns the new
	// head. It fails with an error matching ErrReplicaFenced when another
	// writer appended after last, or ErrReplicaRejected for another
	// refusal (nothing stored either way); any other error leaves the
	// outcome unknown.
	Append(last uint64, records [][]byte) (uint64, error)
}

// metaReplica is the replica commit the log holds up to.
var metaReplica = []byte("replica_head")

// ReplicaRecord is e's record without its fencing token, as replicated.
func ReplicaRecord(e Event) ([]byte, error) {
	e.Token = ""
	return MarshalRecord(e)
}

// ReplicaHead returns the replica commit the log holds up to (0 when it
// never replicated).
func (l *Log) ReplicaHead() (uint64, error) {
	var head uint64
	err := l.view(func(tx *bolt.Tx) error { head = getU64(tx.Bucket(bucketMeta), metaReplica); return nil })
	return head, err
}

// replicate stores the records a.put staged through the Replicator
// before the transaction commits, and records the new replica head in it.
func (l *Log) replicate(a *appender) error {
	if l.repl == nil || len(a.replica) == 0 {
		return nil
	}
	meta := a.tx.Bucket(bucketMeta)
	head, err := l.repl.Append(getU64(meta, metaReplica), a.replica)
	if errors.Is(err, ErrReplicaFenced) {
		return fmt.Errorf("%w: %w", ErrStaleWriterFence, err)
	}
	if errors.Is(err, ErrReplicaRejected) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrReplicaUncertain, err)
	}
	return meta.Put(metaReplica, u64(head))
}

// ApplyReplica writes one replica commit (a standby following the
// replicated log) as it was stored: the records must continue the log's
// head with their stream versions, and replica must be the replica head
// + 1; a replica commit the log already holds is skipped. No lease is
// needed: the replicated log was fenced when the commit was stored.
// Errors: *ReplicaGapError (ErrReplicaGap), *CorruptRecordError, bbolt
// errors; nothing is written on error.
func (l *Log) ApplyReplica(replica uint64, records [][]byte) error {
	if l.closed.Load() {
		return ErrLogClosed
	}
	seals, err := l.replicaSeals(replica, records)
	if err != nil {
		return err
	}
	return l.guarded("apply replica", func() error {
		return l.update(func(tx *bolt.Tx) error {
			err := applyReplica(tx, replica, records)
			if errors.Is(err, errReplicaHeld) {
				return nil // the log holds it: nothing to do, nothing to seal
			}
			if err != nil {
				return err
			}
			return seals.remove(tx)
		})
	})
}

func applyReplica(tx *bolt.Tx, replica uint64, records [][]byte) error {
	meta := tx.Bucket(bucketMeta)
	have := getU64(meta, metaReplica)
	if replica <= have {
		return errReplicaHeld
	}
	if replica != have+1 {
		return &ReplicaGapError{Have: have, Got: replica}
	}
	a := &appender{tx: tx, head: getU64(meta, metaHead), versions: map[string]uint64{}, stored: map[string]uint64{}, lasts: map[string]uint64{}}
	for _, rec := range records {
		if err := a.putReplica(rec); err != nil {
			return err
		}
	}
	if err := a.finish(); err != nil {
		return err
	}
	return meta.Put(metaReplica, u64(replica))
}

// putReplica stores one replicated record after checking that it
// continues the log (its seq) and its stream (its version).
func (a *appender) putReplica(rec []byte) error {
	e, err := DecodeRecord(a.head+1, rec)
	if err != nil {
		return err
	}
	if v := a.version(e.Stream); e.Version != v+1 {
		return &ReplicaGapError{Have: a.head, Got: e.Seq, Stream: e.Stream}
	}
	a.head, a.versions[e.Stream] = e.Seq, e.Version
	if err := appendBucket(a.tx).Put(u64(e.Seq), rec); err != nil {
		return err
	}
	if err := a.linkStream(e.Stream, &e); err != nil {
		return err
	}
	return replicaLease(a.tx, e)
}

// replicaLease keeps a standby's lease bucket as the replicated lease
// events say (without the holder's token, which never leaves its store):
// the epoch a takeover must rise above, and who held it.
func replicaLease(tx *bolt.Tx, e Event) error {
	role, ok := strings.CutPrefix(e.Stream, LeaseStream(""))
	if !ok {
		return nil
	}
	cur, _, err := getLease(tx, role)
	if err != nil {
		return err
	}
	switch p := e.Payload.(type) {
	case LeaseAcquired:
		cur = grantedLease(role, LeaseGrant(p))
	case LeaseTakenOver:
		cur = grantedLease(role, LeaseGrant(p))
	case LeaseReleased:
		cur.State, cur.LeaseUntil = LeaseStateReleased, e.At
	default:
		return nil
	}
	return putLease(tx, cur)
}

func grantedLease(role string, g LeaseGrant) Lease {
	return Lease{Role: role, WriterID: g.WriterID, Epoch: g.Epoch, LeaseUntil: g.LeaseUntil, State: LeaseStateHeld,
		Host: g.Host, PID: g.PID, Operation: g.Operation}
}

// ReplicaGapError: a replica commit or record does not continue the log
// (a commit skipped, or a record out of its stream's order).
type ReplicaGapError struct {
	Have, Got uint64
	Stream    string // set when a record's stream version did not follow
}

func (e *ReplicaGapError) Error() string {
	if e.Stream != "" {
		return fmt.Sprintf("%s: record %d does not continue stream %q", ErrReplicaGap, e.Got, e.Stream)
	}
	return fmt.Sprintf("%s: have %d, got %d", ErrReplicaGap, e.Have, e.Got)
}

func (e *ReplicaGapError) Unwrap() error { return ErrReplicaGap }

// SeedReplicaHead records that the replicated log holds this log's
// history as its commits 1..head: a store that ran unreplicated stored
// its records there (in replica form, in order) before its first
// replicated commit. Only a log that never replicated may be seeded.
// Errors: ErrReplicaGap when the log already has a replica head.
func (l *Log) SeedReplicaHead(head uint64) error {
	if l.closed.Load() {
		return ErrLogClosed
	}
	return l.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if have := getU64(meta, metaReplica); have != 0 {
			return &ReplicaGapError{Have: have, Got: head}
		}
		return meta.Put(metaReplica, u64(head))
	})
}
