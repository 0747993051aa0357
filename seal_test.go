package hikoutei

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/retention"
)

// sealedStore loads n airports (and renames a few) into a store in dir,
// returns its events and chain head, then seals all but the newest keep
// records (the store is closed).
func sealedStore(t *testing.T, dir string, n int, keep uint64) ([]Event, ChainPin, SealReport) {
	t.Helper()
	s := openStore(t, dir)
	loadAirports(t, s, n)
	ap := readAirports(t)
	for i := range 20 {
		a := ap[i]
		a.Name += " (renamed)"
		commit(t, s, &a)
	}
	before := eventsFrom(t, s, 1)
	pin, err := s.ChainHead()
	mustT(t, err)
	rep, err := s.Seal(ctx, SealOptions{Keep: keep, MinBatch: 1})
	mustT(t, err)
	mustT(t, s.Close())
	return before, pin, rep
}

func eventsFrom(t *testing.T, s *Store, from uint64) []Event {
	t.Helper()
	var out []Event
	for e, err := range s.Events(ctx, from) {
		mustT(t, err)
		out = append(out, e)
	}
	return out
}

func TestI38_SealThenVerifyFromGenesisAndReadEventsAcrossTheBoundary(t *testing.T) {
	dir := t.TempDir()
	before, pin, rep := sealedStore(t, dir, 600, 10)
	if rep.First != 1 || rep.Last+10 != pin.Seq || rep.Records+rep.Kept != rep.Last || rep.Seq != pin.Seq+1 {
		t.Fatalf("seal: %+v (head was %d)", rep, pin.Seq)
	}
	vr, err := VerifyDir(ctx, dir, VerifyOptions{Pin: &pin})
	mustT(t, err)
	if !vr.Pinned || vr.Head <= pin.Seq || vr.Records != vr.Head {
		t.Fatalf("verify from genesis across the segment: %+v", vr)
	}
	s := openStore(t, dir)
	defer s.Close()
	for _, from := range []uint64{1, 2, rep.Last - 1, rep.Last, rep.Last + 1, pin.Seq} {
		got := eventsFrom(t, s, from)
		if !reflect.DeepEqual(got[:len(before[from-1:])], before[from-1:]) {
			t.Fatalf("Events(%d) across the segment differ from before the seal", from)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Seq != got[i-1].Seq+1 {
				t.Fatalf("Events(%d): seq %d after %d", from, got[i].Seq, got[i-1].Seq)
			}
		}
	}
}

func TestI38_SealThenReplayAndRebuildEqualTheReadModelBefore(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 600)
	n := checkpoint(t, s)
	live := digest(t, s.ReadModelPath())
	mustT(t, s.Close())
	want := replayDigest(t, dir, n)
	if want != live {
		t.Fatal("the replay before the seal differs from the live read model")
	}
	s = openStore(t, dir)
	rep, err := s.Seal(ctx, SealOptions{Below: n - 5, MinBatch: 1})
	mustT(t, err)
	mustT(t, s.Close())
	if replayDigest(t, dir, n) != want {
		t.Fatal("the replay from the segments differs from the one before the seal")
	}
	mustT(t, removeReadModel(filepath.Join(dir, "read.sqlite")))
	s = openStore(t, dir) // rebuilds the read model from the segment and log.db
	defer s.Close()
	head, err := s.ChainHead()
	mustT(t, err)
	if cp := checkpoint(t, s); cp != head.Seq || cp <= rep.Seq {
		t.Fatalf("rebuilt to %d, want the head %d (the seal is %d)", cp, head.Seq, rep.Seq)
	}
	view, err := s.AsOf(ctx, AtSeq(n))
	mustT(t, err)
	defer view.Close()
	mustT(t, s.Close())
	if replayDigest(t, dir, n) != want {
		t.Fatal("the rebuilt store's replay differs")
	}
}

func TestI38_OpenReadsNoSegmentAndAMissingOneIsNamed(t *testing.T) {
	dir := t.TempDir()
	_, pin, rep := sealedStore(t, dir, 300, 10)
	away := filepath.Join(t.TempDir(), "segments")
	mustT(t, os.Rename(filepath.Join(dir, events.SegmentsDir), away))
	s := openStore(t, dir)
	commit(t, s, &readAirports(t)[400])
	if _, err := s.Verify(ctx, VerifyOptions{}); !errors.Is(err, ErrSegmentMissing) {
		t.Fatalf("verify without the segment: %v", err)
	}
	var se *events.SegmentError
	for _, err := range s.Events(ctx, 1) {
		if !errors.As(err, &se) || se.Name != rep.Segment {
			t.Fatalf("Events(1) without the segment: %v", err)
		}
		break
	}
	mustT(t, s.Close())
	mustT(t, os.Rename(away, filepath.Join(dir, events.SegmentsDir)))
	if _, err := VerifyDir(ctx, dir, VerifyOptions{Pin: &pin}); err != nil {
		t.Fatalf("verify with the segment back: %v", err)
	}
}

// A named subscription whose checkpoint is behind the seal catches up
// through the segment, in log order, then goes on live.
func TestI38_ASubscriptionBehindTheSealReadsThroughTheSegment(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	commitAirports(t, s, 0, 30)
	ch, stop := runSub(s, "audit")
	receive(t, ch, 1, 3)
	mustT(t, ignoreCanceled(stop()))
	cp := status(t, s, "audit").Checkpoint
	rep, err := s.Seal(ctx, SealOptions{Keep: 5, MinBatch: 1})
	mustT(t, err)
	if cp >= rep.Last {
		t.Fatalf("the subscription's checkpoint %d is not behind the seal %+v", cp, rep)
	}
	ch, stop = runSub(s, "audit")
	receive(t, ch, cp+1, head(t, s))
	commitAirports(t, s, 30, 3)
	receive(t, ch, rep.Seq+1, head(t, s))
	mustT(t, ignoreCanceled(stop()))
}

// A backup of a sealed store carries its segments: restored into a new
// folder, the chain verifies from the first record and Events(1) returns
// every event, as before the seal.
func TestI38_SealBackupRestoreVerifiesFromGenesisAndReadsEveryEvent(t *testing.T) {
	dir := t.TempDir()
	before, pin, rep := sealedStore(t, dir, 300, 10)
	s := openStore(t, dir)
	out := filepath.Join(t.TempDir(), "backup.db")
	info, err := s.Backup(ctx, out, false)
	mustT(t, err)
	want := eventsFrom(t, s, 1)
	mustT(t, s.Close())
	if info.Segments != 1 {
		t.Fatalf("backup %+v", info)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	rinfo, err := events.RestoreLog(out, restored)
	mustT(t, err)
	if rinfo.Segments != 1 || rinfo.Head != info.Head {
		t.Fatalf("restore %+v, backup %+v", rinfo, info)
	}
	vr, err := VerifyDir(ctx, restored, VerifyOptions{Pin: &pin})
	mustT(t, err)
	if !vr.Pinned || vr.Head != info.Head || vr.Records != vr.Head {
		t.Fatalf("verify of the restored store from genesis: %+v", vr)
	}
	// the backup names the writer that held the store: opening takes over
	r := openStore(t, restored, func(o *Options) { o.Clock = events.NewManualClock(t0.Add(time.Hour)) })
	defer r.Close()
	got := eventsFrom(t, r, 1)
	if len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) || !reflect.DeepEqual(got[:len(before)], before) || got[rep.Last].Seq != rep.Last+1 {
		t.Fatalf("Events(1) of the restored store: %d events, want %d", len(got), len(want))
	}
}

// Stats counts the segments reads read: none after Open, one a segment
// for a read of every event from the first.
func TestI38_StatsCountTheSegmentsReadsRead(t *testing.T) {
	dir := t.TempDir()
	_, _, rep := sealedStore(t, dir, 200, 10)
	s := openStore(t, dir)
	defer s.Close()
	st, err := s.Stats(ctx)
	mustT(t, err)
	if st.SegmentsRead != 0 || st.SegmentIndexFallbacks != 0 {
		t.Fatalf("after Open: %d segments read, %d fallbacks", st.SegmentsRead, st.SegmentIndexFallbacks)
	}
	if got := eventsFrom(t, s, 1); len(got) == 0 || got[0].Seq != 1 || rep.Records == 0 {
		t.Fatalf("events from 1: %d", len(got))
	}
	st, err = s.Stats(ctx)
	mustT(t, err)
	if st.SegmentsRead != 1 || st.SegmentIndexFallbacks != 0 {
		t.Fatalf("after reading from the first event: %d segments read, %d fallbacks", st.SegmentsRead, st.SegmentIndexFallbacks)
	}
}

// Store.Seal and the background seal decide "enough records to seal" by
// one rule (retention.Enough), zero meaning DefaultRetentionMinBatch for
// both: with a minimum of 0 and one record short of it both wait, at the
// minimum both seal.
func TestSealAndTheBackgroundSealShareTheMinimumBatch(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	commitAirports(t, s, 0, 30)
	st, err := s.e.SealState()
	mustT(t, err)
	const keep = 5
	first, last, err := s.sealSpan(st.Head - keep + 1)
	mustT(t, err)
	span := last - first + 1
	for _, m := range []uint64{0, span + 1, span} {
		due := retention.Policy{KeepRecords: keep, MinBatch: m}.Point(st) != 0
		rep, err := s.Seal(ctx, SealOptions{Keep: keep, MinBatch: m})
		mustT(t, err)
		if rep.Skipped == due || rep.MinBatch != retention.MinBatch(m) {
			t.Fatalf("MinBatch %d (%d records may go): Seal %+v, background seal due %v", m, span, rep, due)
		}
	}
}
