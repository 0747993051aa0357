package replication

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// writer appends commits one after another until stopped, resolving
// uncertain outcomes by retrying the same commit, and reports each
// acknowledged sequence.
type writer struct {
	l     *Log
	acked map[uint64][]byte // owned by the writer goroutine until done
	seqs  chan uint64
	stop  chan struct{}
	done  chan error
}

func startWriter(l *Log) *writer {
	w := &writer{l: l, acked: map[uint64][]byte{}, seqs: make(chan uint64, 1024), stop: make(chan struct{}), done: make(chan error, 1)}
	go func() { w.done <- w.run() }()
	return w
}

func (w *writer) run() error {
	head := uint64(0)
	for {
		select {
		case <-w.stop:
			return nil
		default:
		}
		r := fmt.Appendf(nil, "commit-%d", head+1)
		seq, err := w.appendUntilDefinite(head, r)
		if err != nil {
			return err
		}
		w.acked[seq], head = r, seq
		w.seqs <- seq
	}
}

func (w *writer) appendUntilDefinite(head uint64, r []byte) (uint64, error) {
	end := time.Now().Add(deadline)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		seq, err := w.l.Append(ctx, head, [][]byte{r})
		cancel()
		if err == nil || !errors.Is(err, ErrUnavailable) {
			return seq, err
		}
		if time.Now().After(end) {
			return 0, fmt.Errorf("commit %d still uncertain after %s: %w", head+1, deadline, err)
		}
	}
}

// waitAcked waits until the writer acknowledged sequence n.
func (w *writer) waitAcked(t *testing.T, n uint64) {
	t.Helper()
	end := time.After(deadline)
	for {
		select {
		case s := <-w.seqs:
			if s >= n {
				return
			}
		case err := <-w.done:
			t.Fatalf("writer stopped before sequence %d: %v", n, err)
		case <-end:
			t.Fatalf("sequence %d not acknowledged within %s", n, deadline)
		}
	}
}

// finish stops the writer and returns what it acknowledged.
func (w *writer) finish(t *testing.T) map[uint64][]byte {
	t.Helper()
	close(w.stop)
	go func() {
		for range w.seqs { // drain so the writer never blocks
		}
	}()
	if err := <-w.done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	close(w.seqs)
	return w.acked
}

// Killing the stream's leader node under a steady load of appends and
// restarting it loses no acknowledged commit and duplicates none.
func TestI31_NodeKilledAndRestartedUnderLoadLosesNoAcknowledgedCommit(t *testing.T) {
	c := replicationtest.StartCluster(t, 3)
	l := openLog(t, c.Connect(), "restart", 3)
	w := startWriter(l)
	w.waitAcked(t, 50)
	victim := c.StreamLeader(l.Stream())
	if victim < 0 {
		t.Fatal("no stream leader")
	}
	c.Stop(victim)
	w.waitAcked(t, 150)
	c.Restart(victim)
	w.waitAcked(t, 250)
	acked := w.finish(t)
	c.WaitStreamCurrent(l.Stream())
	checkStream(t, readAll(t, l), acked)
}

// A follower delivers every commit once, in order, while each node in
// turn (so also the one serving its consumer) is stopped and restarted.
func TestI31_FollowerReceivesEveryCommitInOrderAcrossNodeRestarts(t *testing.T) {
	c := replicationtest.StartCluster(t, 3)
	l := openLog(t, c.Connect(), "follow", 3)
	follower := openLog(t, c.Connect(), "follow", 3)
	got := make(chan Commit, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	followErr := make(chan error, 1)
	go func() { followErr <- follower.Follow(ctx, 1, func(cm Commit) error { got <- cm; return nil }) }()

	acked := map[uint64][]byte{}
	head := appendN(t, l, 0, 30, acked)
	for i := range c.Nodes {
		c.Stop(i)
		head = appendN(t, l, head, 30, acked)
		c.Restart(i)
		c.WaitStreamCurrent(l.Stream())
	}
	head = appendN(t, l, head, 30, acked)
	var seen []Commit
	end := time.After(deadline)
	for uint64(len(seen)) < head {
		select {
		case cm := <-got:
			seen = append(seen, cm)
		case err := <-followErr:
			t.Fatalf("Follow stopped after %d commits: %v", len(seen), err)
		case <-end:
			t.Fatalf("follower delivered %d of %d commits within %s", len(seen), head, deadline)
		}
	}
	checkStream(t, seen, acked)
	cancel()
	if err := <-followErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after cancel = %v, want context.Canceled", err)
	}
}
