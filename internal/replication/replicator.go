package replication

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// DefaultAppendTimeout bounds one replicated append.
const DefaultAppendTimeout = 10 * time.Second

// Replicator is the events.Replicator of replicated mode: a store's log
// (events.Log) stores each commit's records in the stream through it
// before its local commit.
type Replicator struct {
	Log     *Log
	Timeout time.Duration // per append; default DefaultAppendTimeout
}

var _ events.Replicator = (*Replicator)(nil)

// Append implements events.Replicator: ErrFenced is reported as
// events.ErrReplicaFenced, a definite refusal (ErrRejected,
// ErrCommitTooLarge, ErrIdempotencyConflict) as events.ErrReplicaRejected;
// anything else leaves the outcome unknown.
func (r *Replicator) Append(last uint64, records [][]byte) (uint64, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultAppendTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	head, err := r.Log.Append(ctx, last, records)
	switch {
	case err == nil:
		return head, nil
	case errors.Is(err, ErrFenced):
		return 0, fmt.Errorf("%w: %w", events.ErrReplicaFenced, err)
	case errors.Is(err, ErrRejected), errors.Is(err, ErrCommitTooLarge), errors.Is(err, ErrIdempotencyConflict):
		return 0, fmt.Errorf("%w: %w", events.ErrReplicaRejected, err)
	}
	return 0, err
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
