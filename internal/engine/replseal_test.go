package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// commitAirports commits n airports, one commit each, named from prefix.
func commitAirports(t *testing.T, s *hikoutei.Store, prefix string, n int) {
	t.Helper()
	for i := range n {
		a := airport(fmt.Sprintf("%s%03d", prefix, i))
		commit(t, s, &a)
	}
}

// caughtUp waits until s holds the stream's head.
func (x *replicated) caughtUp(s *hikoutei.Store) {
	x.t.Helper()
	head := x.head()
	eventually(x.t, "the standby holds the stream's head", func() bool { return replicaHead(x.t, s) >= head })
}

// sealKeeping seals all but the newest keep records of s.
func sealKeeping(t *testing.T, s *hikoutei.Store, keep uint64) hikoutei.SealReport {
	t.Helper()
	rep, err := s.Seal(ctx, hikoutei.SealOptions{Keep: keep, MinBatch: 1})
	mustT(t, err)
	return rep
}

// exactlyOnce checks that s delivers every event 1..head once, that
// log.db and the segments together hold exactly head records (so none is
// in both), and that the chain verifies from the genesis value across
// the segments.
func exactlyOnce(t *testing.T, s *hikoutei.Store) {
	t.Helper()
	var n uint64
	for ev, err := range s.Events(ctx, 1) {
		mustT(t, err)
		if n++; ev.Seq != n {
			t.Fatalf("%s: event %d has seq %d: missing or twice", s.Dir(), n, ev.Seq)
		}
	}
	l := engine.Of(s).Log()
	if head, _ := l.Head(); head != n {
		t.Fatalf("%s: read %d events, head %d", s.Dir(), n, head)
	}
	segs, err := l.Segments()
	mustT(t, err)
	var sealed uint64
	for _, g := range segs {
		sealed += g.Records
	}
	inLog, err := l.VerifyChecksums()
	mustT(t, err)
	if inLog+sealed != n {
		t.Fatalf("%s: log.db holds %d records, the segments %d, of %d", s.Dir(), inLog, sealed, n)
	}
	rep, err := s.Verify(ctx, hikoutei.VerifyOptions{})
	mustT(t, err)
	if rep.Head != n || rep.Records != n {
		t.Fatalf("%s: verify %+v, want every record 1..%d walked", s.Dir(), rep, n)
	}
}

// sameSegments checks that both hosts' segment folders hold the same files.
func sameSegments(t *testing.T, a, b *hikoutei.Store, segs []events.SegmentSealed) {
	t.Helper()
	for _, g := range segs {
		fa, err := os.ReadFile(filepath.Join(a.Dir(), events.SegmentsDir, g.Name))
		mustT(t, err)
		fb, err := os.ReadFile(filepath.Join(b.Dir(), events.SegmentsDir, g.Name))
		mustT(t, err)
		if !bytes.Equal(fa, fb) {
			t.Fatalf("segment %s differs between the hosts", g.Name)
		}
	}
}

func segmentsOf(t *testing.T, s *hikoutei.Store) []events.SegmentSealed {
	t.Helper()
	segs, err := s.Segments()
	mustT(t, err)
	return segs
}

func TestI38_AReplicatedStoreSealsOnEveryHostItsStreamDropsWhatAllSealedAndTheStoreFailsOver(t *testing.T) {
	x := newReplicated(t)
	primary := x.mustOpen(t.TempDir(), false)
	commitAirports(t, primary, "A", 20)
	standby := x.mustOpen(t.TempDir(), true)
	commitAirports(t, primary, "B", 10)
	x.caughtUp(standby)

	first := sealKeeping(t, primary, 5)
	x.caughtUp(standby)
	if got := segmentsOf(t, standby); len(got) != 1 || got[0].Name != first.Segment {
		t.Fatalf("the standby's segments %+v, want the primary's %s", got, first.Segment)
	}
	if f, _ := x.stream.First(ctxWithin(t, replicationtest.Deadline)); f != 1 {
		t.Fatalf("after the first seal the stream starts at %d: it keeps the newest segment's commits", f)
	}
	commitAirports(t, primary, "C", 10)
	second := sealKeeping(t, primary, 5)
	x.caughtUp(standby)
	segs := segmentsOf(t, primary)
	if got := segmentsOf(t, standby); len(got) != 2 || got[1] != segs[1] {
		t.Fatalf("the standby's segments %+v, the primary's %+v", got, segs)
	}
	sameSegments(t, primary, standby, segs)
	for _, s := range []*hikoutei.Store{primary, standby} {
		exactlyOnce(t, s)
	}

	// The stream dropped the commits of the first segment's records.
	sctx := ctxWithin(t, replicationtest.Deadline)
	streamFirst, err := x.stream.First(sctx)
	mustT(t, err)
	lastOfFirst, _, err := x.stream.CommitOf(sctx, first.Last)
	mustT(t, err)
	keep, _, err := x.stream.CommitOf(sctx, second.First)
	mustT(t, err)
	if streamFirst <= lastOfFirst || streamFirst != keep {
		t.Fatalf("stream starts at %d: want past commit %d (record %d) and at commit %d (record %d)",
			streamFirst, lastOfFirst, first.Last, keep, second.First)
	}
	if h := primary.Health().Replication; h.SealedThrough != second.Last || h.StreamFirst != streamFirst || h.Purge != nil {
		t.Fatalf("primary's replication health %+v, want sealed through %d, stream from %d", h, second.Last, streamFirst)
	}
	if h := standby.Health().Replication; h.SealedThrough != second.Last {
		t.Fatalf("standby's replication health %+v, want sealed through %d", h, second.Last)
	}

	// A host that joins now needs commits the stream no longer has.
	if _, err := x.open(t.TempDir(), true); !errors.Is(err, hikoutei.ErrReplicationStreamPurged) {
		t.Fatalf("a new standby after the purge: %v, want replication_stream_purged", err)
	}

	// Failover: the standby takes over, appends, seals and verifies.
	waitWatching(t, x.clock)
	x.clock.Advance(events.StaleHeartbeatAfter + time.Second)
	eventually(t, "the standby takes over", func() bool { return engine.Of(standby).Role() == engine.RolePrimary })
	commitAirports(t, standby, "D", 10)
	third := sealKeeping(t, standby, 3)
	if third.First != second.Last+1 {
		t.Fatalf("the new primary's seal starts at %d, want %d", third.First, second.Last+1)
	}
	commitAirports(t, standby, "E", 3)
	exactlyOnce(t, standby)
	if f, _ := x.stream.First(ctxWithin(t, replicationtest.Deadline)); f <= streamFirst {
		t.Fatalf("after the new primary's seal the stream starts at %d, before it at %d", f, streamFirst)
	}
	for _, id := range []string{"A000", "B009", "C005", "D009", "E002"} {
		if _, err := hikoutei.Get[Airport](ctx, standby, id); err != nil {
			t.Fatalf("%s after the failover: %v", id, err)
		}
	}
}
