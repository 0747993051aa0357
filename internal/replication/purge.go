package replication

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
)

// First returns the stream's first sequence: the oldest commit it holds
// (1 for a stream never purged; the head + 1 when it holds none).
// Errors: ErrUnavailable, ErrRejected.
func (l *Log) First(ctx context.Context) (uint64, error) {
	s, err := l.js.Stream(ctx, l.stream)
	if err != nil {
		return 0, classify(err, "stream "+l.stream)
	}
	st := s.CachedInfo().State
	if st.Msgs == 0 {
		return st.LastSeq + 1, nil
	}
	return max(st.FirstSeq, 1), nil
}

// CommitOf returns the stream sequence of the commit that holds the log
// record seq, searching the commits the stream holds (each holds the
// records after its predecessor's, in order). ok is false when the
// stream holds no commit with a record at or before seq. Errors:
// ErrCorruptCommit, as First.
func (l *Log) CommitOf(ctx context.Context, seq uint64) (commit uint64, ok bool, err error) {
	lo, err := l.First(ctx)
	if err != nil {
		return 0, false, err
	}
	hi, err := l.Head(ctx)
	if err != nil {
		return 0, false, err
	}
	for lo <= hi { // the last commit whose first record is at or before seq
		mid := lo + (hi-lo)/2
		first, err := l.firstRecord(ctx, mid)
		if err != nil {
			return 0, false, err
		}
		if first <= seq {
			commit, ok, lo = mid, true, mid+1
		} else {
			hi = mid - 1
		}
	}
	return commit, ok, nil
}

// firstRecord is the log sequence of commit n's first record.
func (l *Log) firstRecord(ctx context.Context, n uint64) (uint64, error) {
	s, err := l.js.Stream(ctx, l.stream)
	if err != nil {
		return 0, classify(err, "stream "+l.stream)
	}
	msg, err := s.GetMsg(ctx, n)
	if err != nil {
		return 0, classify(err, "read sequence "+strconv.FormatUint(n, 10))
	}
	recs, err := DecodeCommit(msg.Data)
	if err != nil || len(recs) == 0 {
		return 0, fmt.Errorf("%w: %s sequence %d: %v", ErrCorruptCommit, l.stream, n, err)
	}
	seq, err := events.RecordSeq(recs[0])
	if err != nil {
		return 0, fmt.Errorf("%w: %s sequence %d: %v", ErrCorruptCommit, l.stream, n, err)
	}
	return seq, nil
}

// errPurgeDenied: the stream denies purges (an earlier build created
// it); it keeps every commit.
var errPurgeDenied = errors.New("the stream denies purges (created by an earlier build)")

// Purge drops the commits before keep (JetStream's purge up to a
// sequence keeps that sequence). Idempotent: commits already gone are
// not an error. Errors: ErrRejected wrapping the denial of a stream
// that denies purges; ErrUnavailable.
func (l *Log) Purge(ctx context.Context, keep uint64) error {
	s, err := l.js.Stream(ctx, l.stream)
	if err != nil {
		return classify(err, "stream "+l.stream)
	}
	if s.CachedInfo().Config.DenyPurge {
		return fmt.Errorf("%w: purge %s: %w", ErrRejected, l.stream, errPurgeDenied)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSequence(keep)); err != nil {
		return classify(err, "purge "+l.stream)
	}
	return nil
}

// IsPurgeDenied reports whether err is Purge's refusal of a stream that
// denies purges.
func IsPurgeDenied(err error) bool { return errors.Is(err, errPurgeDenied) }
