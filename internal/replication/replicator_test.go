package replication

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// openStoreLog opens a fresh events.Log replicating through r (nil: a
// standby's log, which only applies replica commits).
func openStoreLog(t *testing.T, r events.Replicator) *events.Log {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(t.TempDir(), events.LogFileName), events.Options{Replicator: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func diverged(i int) events.Unit {
	return events.Unit{Streams: []events.StreamAppend{{Stream: "sync/t", ExpectedVersion: events.AnyVersion,
		Events: []events.Event{{Payload: events.SyncDiverged{Target: "t", Reason: string(rune('a' + i))}}}}}}
}

func readLog(t *testing.T, l *events.Log) []events.Event {
	t.Helper()
	var out []events.Event
	if err := l.ReadFrom(1, func(e events.Event) error { e.Token = ""; out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestI31_AStoreLogReplicatedOnAThreeNodeClusterIsFollowedExactlyAndADeposedWriterIsRefused(t *testing.T) {
	c := replicationtest.StartCluster(t, 3)
	stream := openLog(t, c.Connect(), "store1", 3)
	primary := openStoreLog(t, &Replicator{Log: stream, Timeout: opTimeout})
	lease, err := primary.AcquireLease(events.AcquireRequest{WriterID: "primary", Operation: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := primary.Append(lease.Fence(), diverged(i)); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	standby := openStoreLog(t, nil)
	if err := CatchUp(ctxFor(t, replicationtest.Deadline), openLog(t, c.Connect(), "store1", 3), standby); err != nil {
		t.Fatal(err)
	}
	if got, want := readLog(t, standby), readLog(t, primary); !reflect.DeepEqual(got, want) {
		t.Fatalf("the standby holds %d events, the primary %d", len(got), len(want))
	}
	// Another writer appends to the stream (it took over): the primary's
	// next commit is refused by the server and nothing is committed.
	head, _ := stream.Head(ctxFor(t, opTimeout))
	if _, err := openLog(t, c.Connect(), "store1", 3).Append(ctxFor(t, opTimeout), head, [][]byte{[]byte("x")}); err != nil {
		t.Fatal(err)
	}
	before, _ := primary.Head()
	_, err = primary.Append(lease.Fence(), diverged(9))
	if !errors.Is(err, events.ErrStaleWriterFence) || !errors.Is(err, events.ErrReplicaFenced) {
		t.Fatalf("deposed append = %v, want it fenced by the stream", err)
	}
	if after, _ := primary.Head(); after != before {
		t.Fatalf("a fenced commit moved the local head %d → %d", before, after)
	}
}

func TestAFencedAppendReadsWithItsCodeOnceAndMatchesBothSentinels(t *testing.T) {
	err := fencedError{fmt.Errorf("%w: sequence 52 holds another writer's commit", ErrFenced)}
	if !errors.Is(err, events.ErrReplicaFenced) || !errors.Is(err, ErrFenced) {
		t.Fatalf("%v does not match both sentinels", err)
	}
	if n := strings.Count(err.Error(), "replication_fenced"); n != 1 {
		t.Fatalf("%q names the code %d times", err.Error(), n)
	}
}
