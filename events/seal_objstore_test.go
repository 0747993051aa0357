package events

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/segstore/blobstore"
)

// memSegments is an in-memory object store (memblob) shown as
// mem://bucket; the same value opened again by a reopened log holds what
// the earlier process stored, as a real bucket would.
func memSegments() segstore.Store {
	return blobstore.New(memblob.OpenBucket(nil), segstore.Location{Scheme: "mem", Where: "bucket"})
}

// flakySegments is a segment store that can be taken down: while down,
// every operation fails with ErrUnavailable, naming a secret as a
// careless driver might.
type flakySegments struct {
	segstore.Store
	down atomic.Bool
}

func (f *flakySegments) fail() error {
	if f.down.Load() {
		return fmt.Errorf("%w: dial tcp: connection refused", segstore.ErrUnavailable)
	}
	return nil
}

func (f *flakySegments) Put(ctx context.Context, name string, data []byte) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.Put(ctx, name, data)
}

func (f *flakySegments) Get(ctx context.Context, name string) ([]byte, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.Get(ctx, name)
}

func (f *flakySegments) Stat(ctx context.Context, name string) (segstore.Info, error) {
	if err := f.fail(); err != nil {
		return segstore.Info{}, err
	}
	return f.Store.Stat(ctx, name)
}

// checkExactlyOnce checks that the log's events are seqs 1..head, each
// once, and that every sealed sequence is in exactly one of log.db and
// the segments.
func checkExactlyOnce(t *testing.T, l *Log) []Event {
	t.Helper()
	got := readAll(t, l, 1)
	for i, e := range got {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: an event is missing or twice", i, e.Seq)
		}
	}
	segs, err := l.Segments()
	must(t, err)
	for _, s := range segs {
		recs, err := l.loadSegment(s)
		must(t, err)
		inLog, err := l.logRange(s.First, s.Last)
		must(t, err)
		for _, r := range inLog {
			if recs.Get(u64(r.seq)) != nil {
				t.Fatalf("seq %d is in log.db and in segment %s", r.seq, s.Name)
			}
		}
		if len(recs)+len(inLog) != int(s.Last-s.First+1) {
			t.Fatalf("segment %s: %d sealed + %d kept for %d seqs", s.Name, len(recs), len(inLog), s.Last-s.First+1)
		}
	}
	return got
}

func TestI38_ASealToAnObjectStoreUploadsReadsBackThenRemovesAndReadersFetchThrough(t *testing.T) {
	segs := memSegments()
	w := sealWriterOn(t, 200, segs)
	l := w.Log()
	all := readAll(t, l, 1)
	rep, err := l.Seal(w.Fence(), 230)
	must(t, err)
	if rep.Path != "mem://bucket/"+rep.Segment.Name || rep.Replaced {
		t.Fatalf("seal report %+v", rep)
	}
	obj, err := segs.Get(context.Background(), rep.Segment.Name)
	must(t, err)
	if fileDigest(obj) != rep.Segment.Digest || int64(len(obj)) != rep.Segment.Size {
		t.Fatal("the object is not the segment the log vouches for")
	}
	got := checkExactlyOnce(t, l)
	if !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("the events read through the object store differ")
	}
	if after := fullVerify(t, l, nil); after.Segments != 1 || len(after.Stray) != 0 {
		t.Fatalf("verify from genesis: %+v", after)
	}
	if stream := streamOf(t, l, "entity/Part/1"); len(stream) == 0 || stream[0].Seq != all[0].Seq && stream[0].Stream != "entity/Part/1" {
		t.Fatalf("the stream read through the object store: %d events", len(stream))
	}
}

func TestI38_AMissingObjectIsSegmentMissingNamingTheSegmentNotTheBucketSecret(t *testing.T) {
	segs := memSegments()
	w := sealWriterOn(t, 200, segs)
	l := w.Log()
	rep, err := l.Seal(w.Fence(), 230)
	must(t, err)
	must(t, segs.Delete(context.Background(), rep.Segment.Name))
	err = l.ReadFrom(1, func(Event) error { return nil })
	var se *SegmentError
	if !errors.As(err, &se) || !errors.Is(err, ErrSegmentMissing) || se.Name != rep.Segment.Name {
		t.Fatalf("read of a missing object: %v", err)
	}
	if !strings.Contains(err.Error(), "mem://bucket") {
		t.Fatalf("the error does not say where it looked: %v", err)
	}
	if l.SegmentStoreErr() != nil {
		t.Fatalf("a missing object is not an unreachable store: %v", l.SegmentStoreErr())
	}
}

func TestI38_AnUnreachableObjectStoreIsATypedErrorAndLosesNothing(t *testing.T) {
	segs := &flakySegments{Store: memSegments()}
	w := sealWriterOn(t, 200, segs)
	l := w.Log()
	all := readAll(t, l, 1)
	segs.down.Store(true)
	if _, err := l.Seal(w.Fence(), 230); !errors.Is(err, ErrSegmentStoreUnavailable) {
		t.Fatalf("a seal while the store is down: %v", err)
	}
	if got, err := l.Segments(); err != nil || len(got) != 0 {
		t.Fatalf("the failed seal vouched for %v (%v)", got, err)
	}
	if !errors.Is(l.SegmentStoreErr(), ErrSegmentStoreUnavailable) {
		t.Fatalf("SegmentStoreErr: %v", l.SegmentStoreErr())
	}
	if got := readAll(t, l, 1); !reflect.DeepEqual(got, all) {
		t.Fatal("the records left log.db although the seal failed")
	}
	segs.down.Store(false)
	rep, err := l.Seal(w.Fence(), 230)
	must(t, err)
	segs.down.Store(true)
	err = l.ReadFrom(1, func(Event) error { return nil })
	var se *SegmentError
	if !errors.As(err, &se) || !errors.Is(err, ErrSegmentStoreUnavailable) || se.Name != rep.Segment.Name {
		t.Fatalf("a read while the store is down: %v", err)
	}
	if errors.Is(err, ErrSegmentMissing) {
		t.Fatal("an unreachable store is reported as a missing segment")
	}
	segs.down.Store(false)
	checkExactlyOnce(t, l)
	if l.SegmentStoreErr() != nil {
		t.Fatalf("SegmentStoreErr after the store came back: %v", l.SegmentStoreErr())
	}
}

func TestI38_ABackupAndRestoreCarryObjectStoreSegments(t *testing.T) {
	w := sealWriterOn(t, 200, memSegments())
	l := w.Log()
	_, err := l.Seal(w.Fence(), 230)
	must(t, err)
	all := readAll(t, l, 1)
	out := t.TempDir() + "/backup.db"
	info, err := l.Backup(context.Background(), out, false)
	must(t, err)
	if info.Segments != 1 {
		t.Fatalf("backup %+v", info)
	}
	to := memSegments()
	restored := t.TempDir() + "/new"
	rinfo, err := RestoreLogTo(out, restored, to)
	must(t, err)
	if rinfo.Segments != 1 {
		t.Fatalf("restore %+v", rinfo)
	}
	r, err := OpenLog(restored+"/"+LogFileName, Options{ReadOnly: true, Segments: to})
	must(t, err)
	defer r.Close()
	if got := checkExactlyOnce(t, r); !reflect.DeepEqual(got, all) {
		t.Fatal("the restored log's events differ")
	}
}
