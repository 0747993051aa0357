package hikoutei

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// A sealed segment deleted under a running store shows in Health as
// segment_missing naming the file at the next check of the store's clock,
// the stray file renamed to is counted apart, and putting it back clears.
func TestI38_ASegmentDeletedUnderARunningStoreShowsInHealthAndClearsWhenBack(t *testing.T) {
	dir := t.TempDir()
	_, _, rep := sealedStore(t, dir, 300, 10)
	clock := events.NewManualClock(t0)
	s := openStore(t, dir, func(o *Options) { o.Clock = clock })
	defer s.Close()
	if h := s.Health(); h.Segments != nil {
		t.Fatalf("health with every segment: %v", h.Segments)
	}
	path := filepath.Join(dir, "segments", rep.Segment)
	stray := path + ".moved"
	mustT(t, os.Rename(path, stray))
	clock.Advance(segmentCheckEvery)
	h := s.Health()
	var se *events.SegmentError
	if !errors.Is(h.Segments, ErrSegmentMissing) || !errors.As(h.Segments, &se) || se.Name != rep.Segment {
		t.Fatalf("health with the segment renamed away: %v", h.Segments)
	}
	if p := s.SegmentsPresence(); p.Vouched != 1 || len(p.Missing) != 1 || p.Strays != 1 {
		t.Fatalf("presence: %+v", p)
	}
	if h.DiskUsage == nil || h.DiskUsage.SegmentsMissing != 1 || h.DiskUsage.SegmentStrays != 1 {
		t.Fatalf("disk usage: %+v", h.DiskUsage)
	}
	mustT(t, os.Rename(stray, path))
	if h := s.Health(); h.Segments == nil {
		t.Fatal("cleared before the next check")
	}
	clock.Advance(segmentCheckEvery)
	if h := s.Health(); h.Segments != nil || len(s.SegmentsPresence().Missing) != 0 {
		t.Fatalf("health once the segment is back: %v", h.Segments)
	}
}

// Opening a store whose vouched segment is absent reports it at once.
func TestI38_ASegmentMissingAtOpenShowsInHealth(t *testing.T) {
	dir := t.TempDir()
	_, _, rep := sealedStore(t, dir, 300, 10)
	mustT(t, os.Remove(filepath.Join(dir, "segments", rep.Segment)))
	s := openStore(t, dir)
	defer s.Close()
	if h := s.Health(); !errors.Is(h.Segments, ErrSegmentMissing) || !strings.Contains(h.Segments.Error(), rep.Segment) {
		t.Fatalf("health at open: %v", h.Segments)
	}
}

// The temporary file of a segment upload killed in a fileblob bucket
// (NAME.<hex nanoseconds>.tmp) is removed at Open once it is an hour
// old; a younger one (an upload maybe in progress) and names not of that
// form stay, counted as strays.
func TestI38_OpenRemovesOldUploadLitterOnly(t *testing.T) {
	dir := t.TempDir()
	_, _, rep := sealedStore(t, dir, 300, 10)
	folder := filepath.Join(dir, "segments")
	litter := func(at time.Time) string {
		return rep.Segment + "." + strconv.FormatInt(at.UnixNano(), 16) + ".tmp"
	}
	old, young := litter(t0.Add(-2*time.Hour)), litter(t0.Add(-time.Minute))
	for _, n := range []string{old, young, "notours.seg.zst.1.tmp"} {
		mustT(t, os.WriteFile(filepath.Join(folder, n), []byte("part"), 0o600))
	}
	s := openStore(t, dir)
	defer s.Close()
	for n, want := range map[string]bool{old: false, young: true, "notours.seg.zst.1.tmp": true, rep.Segment: true} {
		if _, err := os.Stat(filepath.Join(folder, n)); (err == nil) != want {
			t.Fatalf("%s present = %v after Open, want %v", n, err == nil, want)
		}
	}
	if p := s.SegmentsPresence(); p.Strays != 2 || len(p.Missing) != 0 || p.Vouched != 1 {
		t.Fatalf("presence: %+v", p)
	}
}
