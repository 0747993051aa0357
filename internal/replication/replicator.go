package replication

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// DefaultAppendTimeout bounds one replicated append, retries included:
// long enough to ride through a stream leader's election and a client's
// reconnection to another server.
const DefaultAppendTimeout = 30 * time.Second

// appendAttempt bounds one try of an append; a try without an answer is
// retried with the same position and records (idempotent) until the
// append's timeout.
const appendAttempt = 3 * time.Second

// Replicator is the events.Replicator of replicated mode: a store's log
// (events.Log) stores each commit's records in the stream through it
// before its local commit.
type Replicator struct {
	Log     *Log
	Timeout time.Duration // per append, retries included; default DefaultAppendTimeout
}

var _ events.Replicator = (*Replicator)(nil)

// Append implements events.Replicator. A try without an answer
// (ErrUnavailable: no quorum while a leader is elected, a connection
// moving to another server) is retried with the same position and
// records, which is idempotent, until a definite answer or the timeout.
// ErrFenced is reported as events.ErrReplicaFenced, a definite refusal
// (ErrRejected, ErrCommitTooLarge, ErrIdempotencyConflict) as
// events.ErrReplicaRejected; an answer still missing at the timeout
// leaves the outcome unknown.
func (r *Replicator) Append(last uint64, records [][]byte) (uint64, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultAppendTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	head, err := r.appendRetrying(ctx, last, records)
	switch {
	case err == nil:
		return head, nil
	case errors.Is(err, ErrFenced):
		return 0, fencedError{err}
	case errors.Is(err, ErrRejected), errors.Is(err, ErrCommitTooLarge), errors.Is(err, ErrIdempotencyConflict):
		return 0, fmt.Errorf("%w: %w", events.ErrReplicaRejected, err)
	}
	return 0, err
}

// fencedError is a fenced append as the log reads it: one message (the
// code once), matching both events.ErrReplicaFenced and ErrFenced.
type fencedError struct{ err error }

func (f fencedError) Error() string        { return f.err.Error() }
func (f fencedError) Unwrap() error        { return f.err }
func (f fencedError) Is(target error) bool { return target == events.ErrReplicaFenced }

// appendRetrying tries the append until a definite answer or ctx ends,
// pausing between tries (100 ms, doubling up to 1 s).
func (r *Replicator) appendRetrying(ctx context.Context, last uint64, records [][]byte) (uint64, error) {
	pause := 100 * time.Millisecond
	for {
		try, cancel := context.WithTimeout(ctx, min(appendAttempt, time.Until(deadlineOf(ctx))))
		head, err := r.Log.Append(try, last, records)
		cancel()
		if err == nil || !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			return head, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

func deadlineOf(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(appendAttempt)
	}
	return d
}

// CatchUp applies to l every commit of the stream after l's replica head,
// through the stream's head as of the call: what a standby does before
// it follows, and what a writer does when it opens (a commit whose
// replication was uncertain is applied if the stream has it).
func CatchUp(ctx context.Context, stream *Log, l *events.Log) error {
	have, err := l.ReplicaHead()
	if err != nil {
		return err
	}
	return stream.ReadFrom(ctx, have+1, func(c Commit) error { return l.ApplyReplica(c.Seq, c.Records) })
}

// Follow applies to l every commit of the stream after l's replica head
// as it is stored, until ctx ends.
func Follow(ctx context.Context, stream *Log, l *events.Log) error {
	have, err := l.ReplicaHead()
	if err != nil {
		return err
	}
	return stream.Follow(ctx, have+1, func(c Commit) error { return l.ApplyReplica(c.Seq, c.Records) })
}
