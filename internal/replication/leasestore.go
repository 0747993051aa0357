package replication

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
)

// leaseHistory is how many past records per store the bucket keeps (an
// audit trail of takeovers).
const leaseHistory = 16

// casBackoff bounds the pause between read-decide-write rounds that lost
// a compare-and-set race. A round is lost while another writer's change
// is accepted but not yet applied (the read does not show it yet), which
// lasts one replication round trip.
const (
	casBackoffMin = time.Millisecond
	casBackoffMax = 50 * time.Millisecond
)

// LeaseConfig configures a LeaseStore.
type LeaseConfig struct {
	// Replicas of the bucket; default DefaultReplicas (3).
	Replicas int
	// TTL is how far an acquisition or renewal pushes lease_until;
	// default events.DefaultLeaseTTL (30 s).
	TTL time.Duration
	// Clock is the time source; default events.SystemClock.
	Clock Clock
}

// LeaseStore keeps writer leases in the KV bucket LeaseBucket. Every
// change is a compare-and-set on the key's revision (Create for a first
// record, Update with the revision read), so two concurrent acquirers
// cannot both win. Records are never deleted (the epoch only rises), and
// the bucket has no TTL: expiry is a decision on lease_until, not the
// disappearance of the key.
type LeaseStore struct {
	kv    jetstream.KeyValue
	ttl   time.Duration
	clock Clock
}

// OpenLeases returns the lease store over nc, creating the bucket (file
// storage, cfg.Replicas) when missing. Errors: ErrConfigInvalid,
// ErrUnavailable, ErrRejected.
func OpenLeases(ctx context.Context, nc *nats.Conn, cfg LeaseConfig) (*LeaseStore, error) {
	if cfg.Replicas == 0 {
		cfg.Replicas = DefaultReplicas
	}
	if err := validateReplicas(cfg.Replicas); err != nil {
		return nil, err
	}
	s := &LeaseStore{ttl: cfg.TTL, clock: cfg.Clock}
	if s.ttl <= 0 {
		s.ttl = events.DefaultLeaseTTL
	}
	if s.clock == nil {
		s.clock = events.SystemClock{}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("%w: jetstream: %v", ErrUnavailable, err)
	}
	if err := createBucket(ctx, js, cfg.Replicas); err != nil {
		return nil, err
	}
	if s.kv, err = js.KeyValue(ctx, LeaseBucket); err != nil {
		return nil, classify(err, "lease bucket")
	}
	return s, nil
}

// createBucket creates the bucket's stream when missing, as a KV bucket
// with history leaseHistory but WITHOUT direct gets: every read is then
// answered by the stream leader, which has applied every acknowledged
// write, never by a replica that lags (a stale read would only cost a
// lost compare-and-set round, but a decision should see the newest
// record). An existing bucket is used as it is.
func createBucket(ctx context.Context, js jetstream.JetStream, replicas int) error {
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:              "KV_" + LeaseBucket,
		Description:       "hikoutei writer leases (one key per store)",
		Subjects:          []string{"$KV." + LeaseBucket + ".>"},
		MaxMsgsPerSubject: leaseHistory,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		Discard:           jetstream.DiscardNew,
		Storage:           jetstream.FileStorage,
		Replicas:          replicas,
		AllowRollup:       true,
		DenyDelete:        true,
		Duplicates:        2 * time.Minute,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return classify(err, "lease bucket")
	}
	return nil
}

// Current returns store's lease record and its revision (nil, 0: none).
// Errors: ErrLeaseCorrupt, ErrUnavailable, ErrRejected.
func (s *LeaseStore) Current(ctx context.Context, store string) (*LeaseRecord, uint64, error) {
	if err := validateStore(store); err != nil {
		return nil, 0, err
	}
	e, err := s.kv.Get(ctx, store)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, classify(err, "lease of "+store)
	}
	r, err := decodeLease(store, e.Value())
	if err != nil {
		return nil, 0, err
	}
	return &r, e.Revision(), nil
}

// Acquire takes store's lease for holder (a per-process writer id) when
// DecideAcquire allows it, and returns the record written: epoch bumped,
// a new fencing token. Calling it again after ErrUnavailable is safe:
// if the earlier attempt landed, the holder's live lease is returned.
// Errors: *LeaseHeldError (ErrLeaseHeld), ErrLeaseCorrupt,
// ErrUnavailable, ErrRejected.
func (s *LeaseStore) Acquire(ctx context.Context, store, holder string) (LeaseRecord, error) {
	token := NewToken()
	return s.cas(ctx, store, func(cur *LeaseRecord, now time.Time) (LeaseRecord, error) {
		return DecideAcquire(store, cur, holder, token, now, s.ttl)
	})
}

// Renew extends mine while it is still the caller's own live lease
// (DecideRenew, I03) and returns the renewed record. Errors:
// ErrLeaseLost (taken over, released or expired: stop writing),
// ErrLeaseCorrupt, ErrUnavailable (the renewal may or may not have
// landed; the lease is still the caller's until its lease_until).
func (s *LeaseStore) Renew(ctx context.Context, mine LeaseRecord) (LeaseRecord, error) {
	return s.cas(ctx, mine.Store, func(cur *LeaseRecord, now time.Time) (LeaseRecord, error) {
		return DecideRenew(cur, mine, now, s.ttl)
	})
}

// Release ends mine (DecideRelease); the next acquisition takes the
// vacant lease at once and bumps the epoch. Errors: as Renew.
func (s *LeaseStore) Release(ctx context.Context, mine LeaseRecord) error {
	_, err := s.cas(ctx, mine.Store, func(cur *LeaseRecord, now time.Time) (LeaseRecord, error) {
		return DecideRelease(cur, mine, now)
	})
	return err
}

// decideFunc computes the record to write from the current one.
type decideFunc func(cur *LeaseRecord, now time.Time) (LeaseRecord, error)

// cas reads the record, decides, and writes the decision conditionally
// on the revision read, again (after a short pause) when another writer
// changed the key in between, until ctx ends. A decision equal to the
// current record writes nothing.
func (s *LeaseStore) cas(ctx context.Context, store string, decide decideFunc) (LeaseRecord, error) {
	for pause := casBackoffMin; ; pause = min(2*pause, casBackoffMax) {
		cur, rev, err := s.Current(ctx, store)
		if err != nil {
			return LeaseRecord{}, err
		}
		next, err := decide(cur, s.clock.Now())
		if err != nil || (cur != nil && next == *cur) {
			return next, err
		}
		err = s.write(ctx, store, rev, next)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return LeaseRecord{}, classify(err, "lease of "+store)
		}
		if err := pauseFor(ctx, pause); err != nil {
			return LeaseRecord{}, fmt.Errorf("%w: lease of %q: compare-and-set rounds kept losing to other writers: %v", ErrUnavailable, store, err)
		}
	}
}

// pauseFor waits d (wall time: a retry pause, not a lease decision) or
// until ctx ends.
func pauseFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// write stores r: Create when there was no record (rev 0), else Update
// conditional on rev.
func (s *LeaseStore) write(ctx context.Context, store string, rev uint64, r LeaseRecord) error {
	b, err := encodeLease(r)
	if err != nil {
		return fmt.Errorf("%w: encode lease: %v", ErrRejected, err)
	}
	if rev == 0 {
		_, err = s.kv.Create(ctx, store, b)
		return err
	}
	_, err = s.kv.Update(ctx, store, b, rev)
	return err
}
