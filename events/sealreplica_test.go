package events

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// replicatedSealPair is a replicated primary with history (a snapshot
// record, kept in log.db, between entity commits) and a standby that
// followed it.
func replicatedSealPair(t *testing.T) (*memReplica, *Log, Fence, *Log) {
	t.Helper()
	return replicatedSealPairOn(t, nil, nil)
}

// replicatedSealPairOn is replicatedSealPair with the hosts' segment
// stores (nil: each its folder).
func replicatedSealPairOn(t *testing.T, psegs, ssegs segstore.Store) (*memReplica, *Log, Fence, *Log) {
	t.Helper()
	r := &memReplica{}
	primary, err := OpenLog(filepath.Join(t.TempDir(), LogFileName), Options{Clock: NewManualClock(t0), Replicator: r, Segments: psegs})
	must(t, err)
	t.Cleanup(func() { primary.Close() })
	f := acquire(t, primary, "w1").Fence()
	for i := range 3 {
		_, err := primary.Append(f, Unit{Streams: []StreamAppend{{Stream: SnapshotStream, ExpectedVersion: AnyVersion,
			Events: []Event{{Payload: SnapshotTaken{Seq: uint64(i), Digest: "sha256:00", StoreID: primary.StoreID()}}}}}})
		must(t, err)
		_, err = primary.Append(f, unit("entity/Part/1", AnyVersion, 20))
		must(t, err)
	}
	standby, err := OpenLog(filepath.Join(t.TempDir(), LogFileName), Options{Clock: NewManualClock(t0), StoreID: primary.StoreID(),
		Segments: ssegs})
	must(t, err)
	t.Cleanup(func() { standby.Close() })
	must(t, r.Follow(standby))
	return r, primary, f, standby
}

// countingPuts counts the Puts of a segment store.
type countingPuts struct {
	segstore.Store
	puts atomic.Int64
}

func (c *countingPuts) Put(ctx context.Context, name string, data []byte) error {
	c.puts.Add(1)
	return c.Store.Put(ctx, name, data)
}

func TestI38_AStandbySharingThePrimarysObjectStoreChecksTheSegmentThereAndUploadsNothing(t *testing.T) {
	shared := memSegments()
	ssegs := &countingPuts{Store: shared}
	r, primary, f, standby := replicatedSealPairOn(t, shared, ssegs)
	rep, err := primary.Seal(f, 40)
	must(t, err)
	must(t, r.Follow(standby))
	if segs, _ := standby.Segments(); len(segs) != 1 || segs[0] != rep.Segment {
		t.Fatalf("the standby's segments %+v, want %+v", segs, rep.Segment)
	}
	if n := ssegs.puts.Load(); n != 0 {
		t.Fatalf("the standby uploaded %d objects to the store it shares with the primary", n)
	}
	for _, l := range []*Log{primary, standby} {
		checkExactlyOnce(t, l)
		fullVerify(t, l, nil)
	}
}

func segmentFile(t *testing.T, l *Log, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(l.segmentPath(name))
	must(t, err)
	return b
}

func TestI38_AReplicatedSealIsAppliedByTheStandbyWhichBuildsTheSameSegmentFromItsOwnRecords(t *testing.T) {
	r, primary, f, standby := replicatedSealPair(t)
	rep, err := primary.Seal(f, 40)
	must(t, err)
	must(t, r.Follow(standby))
	for _, l := range []*Log{primary, standby} {
		segs, err := l.Segments()
		must(t, err)
		if len(segs) != 1 || segs[0] != rep.Segment {
			t.Fatalf("manifest %+v, want the primary's %+v", segs, rep.Segment)
		}
		checkExactlyOnce(t, l)
		if v := fullVerify(t, l, nil); v.Segments != 1 {
			t.Fatalf("verify: %+v", v)
		}
	}
	if !bytes.Equal(segmentFile(t, primary, rep.Segment.Name), segmentFile(t, standby, rep.Segment.Name)) {
		t.Fatal("the standby's segment differs from the primary's")
	}
	if got, want := readAll(t, standby, 1), withoutTokens(readAll(t, primary, 1)); !reflect.DeepEqual(got, want) {
		t.Fatalf("the standby reads %d events, the primary %d: they differ", len(got), len(want))
	}
	must(t, r.Follow(standby)) // a replay applies nothing twice
}

func TestI38_AStandbyWhoseSegmentWouldDifferRefusesTheSealTypedAndKeepsItsRecords(t *testing.T) {
	r, primary, f, standby := replicatedSealPair(t)
	_, err := primary.Seal(f, 40)
	must(t, err)
	n := r.Head()
	seal, err := decodeAnySeq(r.Commit(n)[0])
	must(t, err)
	p := seal.Payload.(SegmentSealed)
	p.Digest = "sha256:" + string(bytes.Repeat([]byte("0"), 64))
	seal.Payload = p
	forged, err := MarshalRecord(seal)
	must(t, err)
	head, _ := standby.Head()
	err = standby.ApplyReplica(n, [][]byte{forged})
	if !errors.Is(err, ErrReplicaSegmentMismatch) {
		t.Fatalf("a seal whose file this host cannot build: %v, want replica_segment_mismatch", err)
	}
	if h, _ := standby.Head(); h != head {
		t.Fatalf("head moved %d -> %d", head, h)
	}
	if segs, _ := standby.Segments(); len(segs) != 0 {
		t.Fatalf("segments %+v after a refused seal", segs)
	}
	checkExactlyOnce(t, standby)
	must(t, r.Follow(standby)) // the real commit still applies
}

// decodeAnySeq decodes rec at the sequence it claims.
func decodeAnySeq(rec []byte) (Event, error) {
	c, err := parseRaw(0, rec)
	if err != nil {
		return Event{}, err
	}
	return DecodeRecord(c.h.Seq, rec)
}

// BenchmarkApplyReplica measures a standby applying replica commits of
// 10 records each (the cost replicaSeals adds: a look at each record's
// stream).
func BenchmarkApplyReplica(b *testing.B) {
	r := &memReplica{}
	primary, err := OpenLog(filepath.Join(b.TempDir(), LogFileName), Options{Clock: NewManualClock(t0), Replicator: r, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer primary.Close()
	l, err := primary.AcquireLease(AcquireRequest{WriterID: "w1", Operation: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for range 2000 {
		if _, err := primary.Append(l.Fence(), unit("entity/Part/1", AnyVersion, 10)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		standby, err := OpenLog(filepath.Join(b.TempDir(), LogFileName), Options{Clock: NewManualClock(t0), StoreID: primary.StoreID(), NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := r.Follow(standby); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		standby.Close()
		b.StartTimer()
	}
}
