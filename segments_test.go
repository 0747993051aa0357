package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/segstore/blobstore"
)

// memBucket is an in-memory object store shown as mem://bucket; opened
// again by a reopened store, it holds what the earlier one stored.
func memBucket() segstore.Store {
	return blobstore.New(memblob.OpenBucket(nil), segstore.Location{Scheme: "mem", Where: "bucket"})
}

// downable is a segment store that can be taken down.
type downable struct {
	segstore.Store
	down atomic.Bool
}

func (d *downable) Get(ctx context.Context, name string) ([]byte, error) {
	if d.down.Load() {
		return nil, fmt.Errorf("%w: get %s: dial tcp: connection refused", segstore.ErrUnavailable, name)
	}
	return d.Store.Get(ctx, name)
}

func withSegments(segs segstore.Store) func(*Options) {
	return func(o *Options) { o.SegmentStore = segs }
}

func TestI38_AStoreSealsIntoAnObjectStoreAndEveryReaderReadsThroughIt(t *testing.T) {
	dir, segs := t.TempDir(), memBucket()
	s := openStore(t, dir, withSegments(segs))
	loadAirports(t, s, 600)
	n := checkpoint(t, s)
	before := eventsFrom(t, s, 1)
	pin, err := s.ChainHead()
	mustT(t, err)
	mustT(t, s.Close())
	want := replayDigest(t, dir, n)
	s = openStore(t, dir, withSegments(segs))
	rep, err := s.Seal(ctx, SealOptions{Keep: 10, MinBatch: 1})
	mustT(t, err)
	mustT(t, s.Close())
	if rep.Path != "mem://bucket/"+rep.Segment {
		t.Fatalf("seal report %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, events.SegmentsDir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the seal wrote into the store's folder: %v", err)
	}
	target := filepath.Join(t.TempDir(), "replayed.sqlite")
	if _, err := Replay(ctx, dir, target, ReplayOptions{UpTo: n, Segments: segs}, Entity[Airport]("Airport")); err != nil || digest(t, target) != want {
		t.Fatalf("replay through the object store: %v", err)
	}
	if vr, err := VerifyDir(ctx, dir, VerifyOptions{Pin: &pin, Segments: segs}); err != nil || vr.Records != vr.Head || !vr.Pinned {
		t.Fatalf("verify through the object store: %+v, %v", vr, err)
	}
	s = openStore(t, dir, withSegments(segs))
	defer s.Close()
	if got := eventsFrom(t, s, 1); !reflect.DeepEqual(got[:len(before)], before) {
		t.Fatal("Events(1) through the object store differ from before the seal")
	}
	view, err := s.AsOf(ctx, AtSeq(n))
	mustT(t, err)
	mustT(t, view.Close())
	if vr, err := s.Verify(ctx, VerifyOptions{Pin: &pin}); err != nil || vr.Records != vr.Head {
		t.Fatalf("Verify: %+v, %v", vr, err)
	}
	u, err := s.Disk()
	mustT(t, err)
	if u.SegmentsScheme != "mem" || u.SegmentsDir != "mem://bucket" || u.Segments != 1 || u.SegmentBytes != rep.Size {
		t.Fatalf("disk usage %+v", u)
	}
	if h := s.Health(); h.Segments != nil {
		t.Fatalf("health: %v", h.Segments)
	}
}

func TestI38_AnUnreachableSegmentStoreShowsInHealthWithItsCodeAndCommitsGoOn(t *testing.T) {
	dir, segs := t.TempDir(), &downable{Store: memBucket()}
	s := openStore(t, dir, withSegments(segs))
	defer s.Close()
	loadAirports(t, s, 300)
	rep, err := s.Seal(ctx, SealOptions{Keep: 10, MinBatch: 1})
	mustT(t, err)
	segs.down.Store(true)
	var se *events.SegmentError
	for _, err := range s.Events(ctx, 1) {
		if !errors.Is(err, ErrSegmentStoreUnavailable) || !errors.As(err, &se) || se.Name != rep.Segment || errors.Is(err, ErrSegmentMissing) {
			t.Fatalf("Events(1) while the store is down: %v", err)
		}
		break
	}
	h := s.Health()
	if !errors.Is(h.Segments, ErrSegmentStoreUnavailable) || ErrorCode(h.Segments) != "segment_store_unavailable" {
		t.Fatalf("health while the store is down: %v (code %q)", h.Segments, ErrorCode(h.Segments))
	}
	commit(t, s, &readAirports(t)[400])
	segs.down.Store(false)
	eventsFrom(t, s, 1)
	if h := s.Health(); h.Segments != nil {
		t.Fatalf("health after the store answered: %v", h.Segments)
	}
}

func TestI38_AMissingObjectIsSegmentMissingNamingItWhereItWasLookedFor(t *testing.T) {
	dir, segs := t.TempDir(), memBucket()
	s := openStore(t, dir, withSegments(segs))
	defer s.Close()
	loadAirports(t, s, 300)
	rep, err := s.Seal(ctx, SealOptions{Keep: 10, MinBatch: 1})
	mustT(t, err)
	mustT(t, segs.Delete(ctx, rep.Segment))
	if _, err := s.Verify(ctx, VerifyOptions{}); !errors.Is(err, ErrSegmentMissing) || !strings.Contains(err.Error(), rep.Segment) ||
		!strings.Contains(err.Error(), "mem://bucket") {
		t.Fatalf("verify without the object: %v", err)
	}
}

func TestSegmentsURLOpensAnObjectStoreAndNeverShowsItsCredentials(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, func(o *Options) { o.Segments = "mem://seg-bucket/store-a" })
	loadAirports(t, s, 300)
	rep, err := s.Seal(ctx, SealOptions{Keep: 10, MinBatch: 1})
	mustT(t, err)
	if len(eventsFrom(t, s, 1)) == 0 || strings.Contains(rep.Path, "s3cr3t") {
		t.Fatalf("seal into mem://: %+v", rep)
	}
	if loc := s.SegmentsLocation(); loc.Scheme != "mem" || loc.Where != "seg-bucket/store-a" {
		t.Fatalf("location %+v", loc)
	}
	mustT(t, s.Close())
	for _, bad := range []string{"nosuch://alice:hunter2@b/p?key=s3cr3t", "file:relative/dir", "::"} {
		_, err := Open(ctx, dir, Options{Segments: bad, HeartbeatInterval: -1, AcquireWait: -1}, Entity[Airport]("Airport"))
		if !errors.Is(err, ErrSegmentStoreUnavailable) {
			t.Fatalf("Open with segments %q: %v", bad, err)
		}
		for _, secret := range []string{"hunter2", "s3cr3t", "alice"} {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error shows %q: %v", secret, err)
			}
		}
	}
}

// TestI38_CompactReadsTheSegmentsFromTheObjectStoreItIsGiven compacts a
// store whose segments live in an object store: without the store the
// copy's walk from genesis misses the segment (log.db unchanged), with
// CompactOptions.Segments it verifies and replaces log.db.
func TestI38_CompactReadsTheSegmentsFromTheObjectStoreItIsGiven(t *testing.T) {
	dir, segs := t.TempDir(), memBucket()
	s := openStore(t, dir, withSegments(segs))
	loadAirports(t, s, 600)
	pin, err := s.ChainHead()
	mustT(t, err)
	_, err = s.Seal(ctx, SealOptions{Keep: 10, MinBatch: 1})
	mustT(t, err)
	mustT(t, s.Close())
	if _, err := Compact(ctx, dir); !errors.Is(err, ErrSegmentMissing) {
		t.Fatalf("compact without the object store: %v, want segment_missing", err)
	}
	rep, err := Compact(ctx, dir, CompactOptions{Segments: segs})
	if err != nil || rep.Head.Seq < pin.Seq || rep.Records != rep.Head.Seq {
		t.Fatalf("compact through the object store: %+v, %v (head %v)", rep, err, pin)
	}
	if vr, err := VerifyDir(ctx, dir, VerifyOptions{Pin: &pin, Segments: segs}); err != nil || vr.Records != vr.Head {
		t.Fatalf("verify after the compaction: %+v, %v", vr, err)
	}
}
