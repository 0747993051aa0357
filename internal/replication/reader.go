package replication

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ApplyFunc receives one commit. An error stops the reader and is
// returned as is. The commit's records alias a buffer that is not reused.
type ApplyFunc func(Commit) error

// ReadFrom delivers the commits from sequence from (1 = the first)
// through the stream's head as of the call, in order, then returns nil.
// A standby catches up with it before it follows. Errors: fn's error,
// ErrStreamPurged (*PurgedError), ErrGap, ErrCorruptCommit, ErrUnavailable, ErrRejected, ctx.Err().
func (l *Log) ReadFrom(ctx context.Context, from uint64, fn ApplyFunc) error {
	head, err := l.Head(ctx)
	if err != nil {
		return err
	}
	from = max(from, 1)
	if from > head {
		return nil
	}
	if err := l.held(ctx, from); err != nil {
		return err
	}
	return l.consume(ctx, from, head, fn)
}

// Follow delivers the commits from sequence from, in order, and keeps
// delivering new ones as they are stored, until ctx ends (then it
// returns ctx.Err()) or fn fails. It reads through an ordered consumer,
// which the client recreates after the last delivered sequence when a
// server fails, so a node restart neither skips nor repeats a commit.
// Errors: as ReadFrom.
func (l *Log) Follow(ctx context.Context, from uint64, fn ApplyFunc) error {
	if err := l.held(ctx, max(from, 1)); err != nil {
		return err
	}
	return l.consume(ctx, max(from, 1), 0, fn)
}

// held checks that the stream still holds commit from (a purge keeps
// the commits from its point on). Errors: *PurgedError, as Head.
func (l *Log) held(ctx context.Context, from uint64) error {
	first, err := l.First(ctx)
	if err == nil && from < first {
		err = &PurgedError{Stream: l.stream, Need: from, First: first}
	}
	return err
}

// consume reads from `from` until `until` (0 = never).
func (l *Log) consume(ctx context.Context, from, until uint64, fn ApplyFunc) error {
	cons, err := l.js.OrderedConsumer(ctx, l.stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   from,
	})
	if err != nil {
		return classify(err, "ordered consumer on "+l.stream)
	}
	it, err := cons.Messages()
	if err != nil {
		return classify(err, "ordered consumer on "+l.stream)
	}
	defer it.Stop()
	for next := from; until == 0 || next <= until; next++ {
		c, err := l.nextCommit(ctx, it, next)
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// nextCommit waits for the message at sequence want.
func (l *Log) nextCommit(ctx context.Context, it jetstream.MessagesContext, want uint64) (Commit, error) {
	msg, err := it.Next(jetstream.NextContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return Commit{}, ctx.Err()
		}
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return Commit{}, fmt.Errorf("%w: follower of %s stopped", ErrUnavailable, l.stream)
		}
		return Commit{}, classify(err, "read "+l.stream)
	}
	meta, err := msg.Metadata()
	if err != nil {
		return Commit{}, fmt.Errorf("%w: %s: message without metadata: %v", ErrCorruptCommit, l.stream, err)
	}
	if got := meta.Sequence.Stream; got != want {
		return Commit{}, fmt.Errorf("%w: %s: read sequence %d, expected %d", ErrGap, l.stream, got, want)
	}
	recs, err := DecodeCommit(msg.Data())
	if err != nil {
		return Commit{}, fmt.Errorf("%s sequence %d: %w", l.stream, want, err)
	}
	return Commit{Seq: want, Records: recs, Stored: meta.Timestamp}, nil
}
