package replication

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// settleWithin is the bound of the waits below (on their manual clock).
const settleWithin = 5 * time.Second

// settlingLog is a one-server log whose waits run on a manual clock and
// whose reads of a message answer "not found" (a sequence the stream
// took but cannot return yet: a proposal counted by the leader, not yet
// stored by a quorum) while unreadable says so.
func settlingLog(t *testing.T, store string) (*Log, *events.ManualClock, *atomic.Int64) {
	t.Helper()
	c := replicationtest.StartCluster(t, 1)
	clock := events.NewManualClock(t0)
	l, err := Open(ctxFor(t, deadline), c.Connect(), Config{Store: store, Replicas: 1, Clock: clock, SettleWithin: settleWithin})
	if err != nil {
		t.Fatal(err)
	}
	unreadable := new(atomic.Int64)
	read := l.getMsg
	l.getMsg = func(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, error) {
		if unreadable.Add(-1) >= 0 {
			return nil, jetstream.ErrMsgNotFound
		}
		return read(ctx, seq)
	}
	return l, clock, unreadable
}

// appendOn runs Append in the background and advances clock by step each
// time the append waits on it (a condition, not a sleep), until it
// returns.
func appendOn(t *testing.T, l *Log, clock *events.ManualClock, step time.Duration, last uint64, records [][]byte) (uint64, time.Duration, error) {
	t.Helper()
	type answer struct {
		seq uint64
		err error
	}
	done := make(chan answer, 1)
	go func() {
		seq, err := l.Append(ctxFor(t, deadline), last, records)
		done <- answer{seq, err}
	}()
	start := clock.Now()
	for {
		n, changed := clock.Waiters()
		if n > 0 {
			clock.Advance(step)
			continue
		}
		select {
		case a := <-done:
			return a.seq, clock.Now().Sub(start), a.err
		case <-changed:
		}
	}
}

// An append whose answer depends on the commit at its sequence (here a
// retry the server answers as a duplicate) waits while that sequence is
// taken but not yet readable, looking again on the log's clock, and
// answers once it reads the commit: its own, so the append succeeded.
func TestI31_AnAppendWaitsForATakenSequenceToBecomeReadable(t *testing.T) {
	l, clock, unreadable := settlingLog(t, "settle")
	commit := [][]byte{rec("w", 1)}
	if seq, err := l.Append(ctxFor(t, opTimeout), 0, commit); err != nil || seq != 1 {
		t.Fatalf("Append = %d, %v", seq, err)
	}
	unreadable.Store(3)
	seq, waited, err := appendOn(t, l, clock, 100*time.Millisecond, 0, commit)
	if err != nil || seq != 1 || waited == 0 {
		t.Fatalf("retried append while its sequence was not readable = %d, %v after %s; want 1 once readable", seq, err, waited)
	}
	// Another writer's commit at the sequence, readable after a wait: fenced.
	unreadable.Store(2)
	if _, _, err := appendOn(t, l, clock, 100*time.Millisecond, 0, [][]byte{rec("other", 1)}); !errors.Is(err, ErrFenced) {
		t.Fatalf("another commit at a sequence that became readable = %v, want ErrFenced", err)
	}
}

// A sequence still unreadable when the wait's bound passes leaves the
// append uncertain (ErrUnavailable: retry it) with its own reason code,
// naming the sequence.
func TestI31_ASequenceUnreadablePastTheBoundIsUncertainWithItsReason(t *testing.T) {
	l, clock, unreadable := settlingLog(t, "unreadable")
	commit := [][]byte{rec("w", 1)}
	if _, err := l.Append(ctxFor(t, opTimeout), 0, commit); err != nil {
		t.Fatal(err)
	}
	unreadable.Store(1 << 40)
	_, waited, err := appendOn(t, l, clock, time.Second, 0, commit)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrSequenceUnreadable) || !strings.Contains(err.Error(), "sequence 1") {
		t.Fatalf("append whose sequence never became readable = %v, want replication_unavailable: replication_sequence_unreadable naming it", err)
	}
	if waited < settleWithin {
		t.Fatalf("gave up after %s, want the bound %s", waited, settleWithin)
	}
}

// A try of an append that ends (its context: the Replicator's 3 s
// attempt, shorter than the bound) while the sequence is still taken but
// unreadable is uncertain with the same reason code: it is why the try
// had no answer (without it, replication_sequence_unreadable never
// showed, as every try ends before the 30 s bound).
func TestI31_ATryEndingWhileItsSequenceIsUnreadableCarriesTheReason(t *testing.T) {
	l, clock, unreadable := settlingLog(t, "unreadable-try")
	commit := [][]byte{rec("w", 1)}
	if _, err := l.Append(ctxFor(t, opTimeout), 0, commit); err != nil {
		t.Fatal(err)
	}
	unreadable.Store(1 << 40)
	try, cancel := context.WithCancel(ctxFor(t, deadline))
	done := make(chan error, 1)
	go func() {
		_, err := l.Append(try, 0, commit)
		done <- err
	}()
	for {
		n, changed := clock.Waiters()
		if n > 0 {
			break
		}
		<-changed
	}
	cancel()
	err := <-done
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrSequenceUnreadable) || !strings.Contains(err.Error(), "sequence 1") {
		t.Fatalf("a try ended while its sequence was unreadable = %v, want replication_unavailable: replication_sequence_unreadable naming it", err)
	}
}
