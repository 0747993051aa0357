package replication

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// A writer deposed by a takeover still believes the head is where it
// left it; once the new holder appended, the server refuses the deposed
// writer's append, whatever its local lease says.
func TestI31_DeposedWritersAppendIsRejectedByTheServer(t *testing.T) {
	c := replicationtest.StartCluster(t, 3)
	clock := events.NewManualClock(t0)
	ncA, ncB := c.Connect(), c.Connect()
	logA, logB := openLog(t, ncA, "deposed", 3), openLog(t, ncB, "deposed", 3)
	leasesA, leasesB := openLeases(t, ncA, clock), openLeases(t, ncB, clock)

	a, err := leasesA.Acquire(ctxFor(t, opTimeout), "deposed", "writer-a")
	if err != nil {
		t.Fatal(err)
	}
	headA := uint64(0)
	for i := range 2 {
		if headA, err = logA.Append(ctxFor(t, opTimeout), headA, [][]byte{rec("a", i)}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(events.StaleHeartbeatAfter + 1) // A stops heartbeating (paused, partitioned)
	b, err := leasesB.Acquire(ctxFor(t, opTimeout), "deposed", "writer-b")
	if err != nil || b.Epoch != a.Epoch+1 || b.Token == a.Token || b.Reason != ReasonStaleHeartbeat {
		t.Fatalf("takeover = %+v, %v; want epoch %d, a new token, stale_heartbeat", b, err, a.Epoch+1)
	}
	headB, err := logB.Head(ctxFor(t, opTimeout))
	if err != nil {
		t.Fatal(err)
	}
	// The new holder's first commit (its takeover record) moves the head.
	if _, err := logB.Append(ctxFor(t, opTimeout), headB, [][]byte{[]byte("b takes over at epoch 2")}); err != nil {
		t.Fatal(err)
	}
	_, err = logA.Append(ctxFor(t, opTimeout), headA, [][]byte{rec("a", 2), rec("a", 3)})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed writer's append = %v, want ErrFenced", err)
	}
	if _, err := leasesA.Renew(ctxFor(t, opTimeout), a); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("deposed writer's renewal = %v, want ErrLeaseLost", err)
	}
	got := readAll(t, logB)
	if len(got) != 3 || string(got[2].Records[0]) != "b takes over at epoch 2" {
		t.Fatalf("stream holds %d commits (last %q), want a's two then b's", len(got), got[len(got)-1].Records)
	}
}

// Retrying an append of the same commit (the answer was lost) stores it
// once; another commit at the same position is fenced.
func TestI31_RetriedAppendOfTheSameCommitIsStoredOnce(t *testing.T) {
	c := replicationtest.StartCluster(t, 3)
	l := openLog(t, c.Connect(), "dedupe", 3)
	commit := [][]byte{rec("w", 1), rec("w", 2), rec("w", 3)}
	for try := range 3 {
		seq, err := l.Append(ctxFor(t, opTimeout), 0, commit)
		if err != nil || seq != 1 {
			t.Fatalf("attempt %d: Append = %d, %v; want 1", try+1, seq, err)
		}
	}
	if _, err := l.Append(ctxFor(t, opTimeout), 0, [][]byte{rec("other", 1)}); !errors.Is(err, ErrFenced) {
		t.Fatalf("another commit at the same position = %v, want ErrFenced", err)
	}
	if seq, err := l.Append(ctxFor(t, opTimeout), 1, [][]byte{rec("w", 4)}); err != nil || seq != 2 {
		t.Fatalf("next commit = %d, %v; want 2", seq, err)
	}
	got := readAll(t, l)
	if len(got) != 2 || len(got[0].Records) != 3 || !bytes.Equal(got[0].Records[2], commit[2]) {
		t.Fatalf("stream = %d commits (first has %d records), want 2 (first with 3)", len(got), len(got[0].Records))
	}
}

func TestAppendRefusesACommitAboveTheMessageLimitBeforePublishing(t *testing.T) {
	c := replicationtest.StartCluster(t, 1)
	l := openLog(t, c.Connect(), "big", 1)
	big := make([]byte, l.MaxCommitBytes())
	if _, err := l.Append(ctxFor(t, opTimeout), 0, [][]byte{big}); !errors.Is(err, ErrCommitTooLarge) {
		t.Fatalf("Append of %d bytes = %v, want ErrCommitTooLarge", len(big), err)
	}
	if head, err := l.Head(ctxFor(t, opTimeout)); err != nil || head != 0 {
		t.Fatalf("head = %d, %v; want 0", head, err)
	}
}

func TestOpenRefusesAStreamOfAnotherStoreUnderTheSameName(t *testing.T) {
	c := replicationtest.StartCluster(t, 1)
	nc := c.Connect()
	openLog(t, nc, "my-store", 1)
	if _, err := Open(ctxFor(t, opTimeout), nc, Config{Store: "my_store", Replicas: 1}); !errors.Is(err, ErrConfigInvalid) {
		t.Fatalf("Open of a store whose stream name collides = %v, want ErrConfigInvalid", err)
	}
	if _, err := Open(ctxFor(t, opTimeout), nc, Config{Store: "a.b"}); !errors.Is(err, ErrConfigInvalid) {
		t.Fatalf("Open with a dotted store id = %v, want ErrConfigInvalid", err)
	}
}

// checkStream fails unless the stream holds exactly the acknowledged
// commits, in order, each once.
func checkStream(t *testing.T, got []Commit, acked map[uint64][]byte) {
	t.Helper()
	if len(got) != len(acked) {
		t.Fatalf("stream holds %d commits, %d were acknowledged", len(got), len(acked))
	}
	for i, c := range got {
		want, ok := acked[c.Seq]
		if c.Seq != uint64(i+1) || !ok || len(c.Records) != 1 || !bytes.Equal(c.Records[0], want) {
			t.Fatalf("commit %d at sequence %d = %q; acknowledged %q", i+1, c.Seq, c.Records, want)
		}
	}
}

// appendN appends commits one record each from head, resolving
// uncertain outcomes, and records what was acknowledged.
func appendN(t *testing.T, l *Log, head uint64, n int, acked map[uint64][]byte) uint64 {
	t.Helper()
	for range n {
		r := fmt.Appendf(nil, "commit-%d", head+1)
		seq, err := appendResolved(t, l, head, [][]byte{r})
		if err != nil {
			t.Fatalf("append after %d: %v", head, err)
		}
		acked[seq], head = r, seq
	}
	return head
}

func TestAStreamIsClaimedForOneStoreIDOnly(t *testing.T) {
	c := replicationtest.StartCluster(t, 1)
	l := openLog(t, c.Connect(), "claimed", 1)
	if id, err := l.StoreID(ctxFor(t, opTimeout)); err != nil || id != "" {
		t.Fatalf("unclaimed stream: %q %v", id, err)
	}
	if err := l.ClaimStoreID(ctxFor(t, opTimeout), "abc123"); err != nil {
		t.Fatal(err)
	}
	if err := l.ClaimStoreID(ctxFor(t, opTimeout), "abc123"); err != nil {
		t.Fatalf("claiming again for the same id: %v", err)
	}
	if err := l.ClaimStoreID(ctxFor(t, opTimeout), "other"); !errors.Is(err, ErrConfigInvalid) {
		t.Fatalf("claim for another id = %v", err)
	}
	if id, _ := openLog(t, c.Connect(), "claimed", 1).StoreID(ctxFor(t, opTimeout)); id != "abc123" {
		t.Fatalf("store id read by another connection %q", id)
	}
}
