package events

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

func getLease(tx *bolt.Tx, role string) (Lease, bool, error) {
	raw := tx.Bucket(bucketLease).Get([]byte(role))
	if raw == nil {
		return Lease{}, false, nil
	}
	v, err := DecodeCanonical(raw)
	if err != nil {
		return Lease{}, false, fmt.Errorf("lease record %q: %w", role, err)
	}
	m, _ := v.(map[string]any)
	l, err := leaseFromMap(m)
	if err != nil {
		return Lease{}, false, fmt.Errorf("lease record %q: %w", role, err)
	}
	return l, true, nil
}

func putLease(tx *bolt.Tx, l Lease) error {
	b, err := EncodeCanonical(l.toMap())
	if err != nil {
		return err
	}
	return tx.Bucket(bucketLease).Put([]byte(l.Role), b)
}

// Lease returns the lease record of role, and false if none was ever taken.
func (l *Log) Lease(role string) (Lease, bool, error) {
	var out Lease
	var ok bool
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		out, ok, err = getLease(tx, role)
		return err
	})
	return out, ok, err
}

// AcquireRequest describes a writer asking for a role's lease.
type AcquireRequest struct {
	Role      string        // default DefaultRole
	WriterID  string        // required: this writer's id
	Host      string        // recorded for audits and lease.toml
	PID       int64         // recorded for audits and lease.toml
	Operation string        // what the writer is doing ("serve", "demo", …)
	TTL       time.Duration // default DefaultLeaseTTL
	// Leftover, when non-nil, is a lease.toml left by a run that did not
	// close cleanly; the acquisition records its reconciliation (I22).
	Leftover *LeaseFile
	// Elected: in replicated mode the lease across hosts (a JetStream KV
	// record) elected this writer, at epoch MinEpoch. The local lease,
	// which a standby holds only as replicated, is then taken whatever its
	// state (reason "elected"), at an epoch of at least MinEpoch, so the
	// epoch rises across hosts. The replicated log still fences the
	// takeover: its events are appended after the stream's head.
	Elected  bool
	MinEpoch uint64
}

// AcquireLease takes the role's lease when it is vacant (never taken or
// released) or when the takeover rule allows it (I02: expired, or heartbeat
// older than StaleHeartbeatAfter while lease_until is in the future). Every
// acquisition bumps the epoch and mints a new fencing token; the lease events
// are appended in the same transaction. Errors: *LeaseHeldError
// (ErrLeaseHeld) while a live holder's lease may not be taken over.
func (l *Log) AcquireLease(req AcquireRequest) (Lease, error) {
	if req.Role == "" {
		req.Role = DefaultRole
	}
	if req.TTL <= 0 {
		req.TTL = DefaultLeaseTTL
	}
	var out Lease
	err := l.update(func(tx *bolt.Tx) error {
		now := l.clock.Now()
		cur, _, err := getLease(tx, req.Role)
		if err != nil {
			return err
		}
		out, err = l.acquireTx(tx, cur, req, now)
		return err
	})
	return out, err
}

func (l *Log) acquireTx(tx *bolt.Tx, cur Lease, req AcquireRequest, now time.Time) (Lease, error) {
	reason := cur.TakeoverReason(now)
	if req.Elected && reason == "" {
		reason = "elected"
	}
	if reason == "" {
		return Lease{}, &LeaseHeldError{Role: req.Role, WriterID: cur.WriterID, Epoch: cur.Epoch,
			TakeoverAt: cur.TakeoverAt().UTC().Format(time.RFC3339Nano)}
	}
	// Above the floor too: epochs a lost history of the log handed out
	// (RaiseEpochFloor) are never reused.
	floor := getU64(tx.Bucket(bucketMeta), metaEpochFloor)
	next := Lease{Role: req.Role, WriterID: req.WriterID, Epoch: max(cur.Epoch+1, req.MinEpoch, floor+1), Token: newToken(),
		LeaseUntil: now.Add(req.TTL), HeartbeatAt: now, State: LeaseStateHeld,
		Host: req.Host, PID: req.PID, Operation: req.Operation}
	if err := putLease(tx, next); err != nil {
		return Lease{}, err
	}
	evs := acquireEvents(cur, next, reason, req.Leftover)
	return next, l.appendInTx(tx, next.Fence(), now, LeaseStream(req.Role), evs)
}

func acquireEvents(cur, next Lease, reason string, leftover *LeaseFile) []Event {
	var evs []Event
	if leftover != nil {
		evs = append(evs, Event{Payload: LeaseReconciled{State: LeaseStateReconciled, WriterID: leftover.Holder.WriterID,
			Host: leftover.Holder.Host, PID: leftover.Holder.PID, Operation: leftover.Operation,
			AcquiredAt: leftover.AcquiredAt, ByWriterID: next.WriterID}})
	}
	g := LeaseGrant{State: LeaseStateHeld, WriterID: next.WriterID, Epoch: next.Epoch, Host: next.Host, PID: next.PID,
		Operation: next.Operation, Reason: reason, PreviousWriterID: cur.WriterID, PreviousEpoch: cur.Epoch,
		LeaseUntil: next.LeaseUntil.UTC()}
	var p Payload = LeaseAcquired(g)
	if cur.State == LeaseStateHeld {
		p = LeaseTakenOver(g)
	}
	return append(evs, Event{Payload: p})
}

// appendInTx appends evs to one stream inside an already fenced transaction.
func (l *Log) appendInTx(tx *bolt.Tx, f Fence, now time.Time, stream string, evs []Event) error {
	u := Unit{Streams: []StreamAppend{{Stream: stream, ExpectedVersion: AnyVersion, Events: evs}}}
	a := newAppender(tx, f, now, l.repl != nil)
	if err := a.startChain(l); err != nil {
		return err
	}
	enc, _ := encodeUnit(u, nil)
	res, err := a.unit(&u, enc)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return err
	}
	if err := l.replicate(a); err != nil {
		return err
	}
	return a.finish()
}

// RenewLease extends the caller's own live lease to now+ttl and stamps
// heartbeat_at = now. It never acquires or takes over (I03): a lease that is
// no longer the caller's fails with ErrStaleWriterFence, and one that expired
// with ErrLeaseExpired (the caller must acquire again, with a new epoch).
func (l *Log) RenewLease(f Fence, ttl time.Duration) (Lease, error) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	var out Lease
	err := l.update(func(tx *bolt.Tx) error {
		now := l.clock.Now()
		cur, _, err := getLease(tx, f.Role)
		if err != nil {
			return err
		}
		if err := cur.checkFence(f, now); err != nil {
			return err
		}
		cur.LeaseUntil, cur.HeartbeatAt = now.Add(ttl), now
		out = cur
		return putLease(tx, cur)
	})
	return out, err
}

// ReleaseLease gives up the caller's lease (even if it has just expired, as
// long as nobody took it over) and records lease.released, so the next
// writer acquires at once without waiting (clean close).
// Errors: ErrStaleWriterFence when f is not the current lease.
func (l *Log) ReleaseLease(f Fence) error {
	return l.update(func(tx *bolt.Tx) error {
		now := l.clock.Now()
		cur, _, err := getLease(tx, f.Role)
		if err != nil {
			return err
		}
		if cur.State != LeaseStateHeld || !cur.matches(f) {
			return fmt.Errorf("%w: release by role %q epoch %d", ErrStaleWriterFence, f.Role, f.Epoch)
		}
		cur.State, cur.LeaseUntil = LeaseStateReleased, now
		if err := putLease(tx, cur); err != nil {
			return err
		}
		return l.appendInTx(tx, f, now, LeaseStream(f.Role), []Event{{
			Payload: LeaseReleased{State: LeaseStateReleased, WriterID: cur.WriterID, Epoch: cur.Epoch}}})
	})
}
