package events

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// sealWriter builds a log of n sync records with a snapshot.taken record
// (a stream a seal keeps in log.db) after every 40th, and returns its
// writer (closed at cleanup).
func sealWriter(t *testing.T, n int) *Writer {
	t.Helper()
	return sealWriterOn(t, n, nil)
}

// sealWriterOn is sealWriter keeping the segments in segs (nil: the
// store's folder).
func sealWriterOn(t *testing.T, n int, segs segstore.Store) *Writer {
	t.Helper()
	dir := t.TempDir()
	buildLog(t, dir, n)
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0), Segments: segs}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	t.Cleanup(func() { _ = w.Close() })
	for i := range 3 {
		_, err := w.Append(Unit{Streams: []StreamAppend{{Stream: SnapshotStream, ExpectedVersion: AnyVersion,
			Events: []Event{{Payload: SnapshotTaken{Seq: uint64(i), Digest: "sha256:00", StoreID: w.Log().StoreID()}}}}}})
		must(t, err)
		_, err = w.Append(unit("entity/Part/1", AnyVersion, 40))
		must(t, err)
	}
	return w
}

// streamOf reads every event of stream.
func streamOf(t *testing.T, l *Log, stream string) []Event {
	t.Helper()
	var out []Event
	must(t, l.ReadStream(stream, 1, func(e Event) error { out = append(out, e); return nil }))
	return out
}

// fullVerify walks the chain from the genesis value.
func fullVerify(t *testing.T, l *Log, pin *ChainPin) *ChainReport {
	t.Helper()
	rep, err := l.VerifyChain(context.Background(), ChainVerifyOptions{Pin: pin})
	must(t, err)
	return rep
}

func TestI38_SealedRecordsLeaveTheLogAndTheChainVerifiesFromGenesisAcrossThem(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	before := fullVerify(t, l, nil)
	pin := ChainPin{Seq: before.Head, Hash: before.HeadHash}
	all := readAll(t, l, 1)
	rep, err := l.Seal(w.Fence(), 230)
	must(t, err)
	s := rep.Segment
	if s.First != 1 || s.Last != 229 || s.Kept == 0 || s.Records+s.Kept != 229 || rep.Event.Seq != before.Head+1 {
		t.Fatalf("seal: %+v, event seq %d (head was %d)", s, rep.Event.Seq, before.Head)
	}
	if info, err := os.Stat(rep.Path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("segment file: %v %v", info, err)
	}
	// Each record is in exactly one place: the segment or log.db.
	inLog, err := l.logRange(1, s.Last)
	must(t, err)
	seg, err := l.loadSegment(s)
	must(t, err)
	if uint64(len(inLog)) != s.Kept || uint64(len(seg)) != s.Records || len(mergeRecords(seg, inLog)) != 229 ||
		seg.Get(u64(inLog[0].seq)) != nil {
		t.Fatalf("log.db keeps %d records of 1..229, the segment holds %d", len(inLog), len(seg))
	}
	after := fullVerify(t, l, &pin)
	if after.Segments != 1 || !after.Pinned || after.Head != before.Head+1 || after.Records != before.Records+1 {
		t.Fatalf("verify from genesis after the seal: %+v (before %+v)", after, before)
	}
	if got := readAll(t, l, 1); !reflect.DeepEqual(got[:len(all)], all) || len(got) != len(all)+1 {
		t.Fatalf("ReadFrom(1) after the seal: %d events, want %d then the seal", len(got), len(all))
	}
}

func TestI38_ReadersReadThroughSegmentsInOrderWithNoGapOrDuplicate(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	all := readAll(t, l, 1)
	part, snaps := streamOf(t, l, "entity/Part/1"), streamOf(t, l, SnapshotStream)
	_, err := l.Seal(w.Fence(), 100)
	must(t, err)
	_, err = l.Seal(w.Fence(), 250)
	must(t, err)
	segs, err := l.Segments()
	must(t, err)
	if len(segs) != 2 || segs[1].First != 100 || segs[1].FirstLink != segs[0].LastHash {
		t.Fatalf("segments: %+v", segs)
	}
	for _, from := range []uint64{1, 50, 99, 100, 101, 249, 250, 251, uint64(len(all))} {
		got := readAll(t, l, from)
		for i, e := range all[from-1:] {
			if !reflect.DeepEqual(got[i], e) {
				t.Fatalf("ReadFrom(%d): event %d is seq %d, want %d", from, i, got[i].Seq, e.Seq)
			}
		}
		if want := len(all[from-1:]) + 2; len(got) != want { // and the two seals
			t.Fatalf("ReadFrom(%d): %d events, want %d", from, len(got), want)
		}
	}
	if got := streamOf(t, l, "entity/Part/1"); !reflect.DeepEqual(got, part) {
		t.Fatalf("ReadStream of a sealed stream: %d events, want %d", len(got), len(part))
	}
	if got := streamOf(t, l, SnapshotStream); !reflect.DeepEqual(got, snaps) {
		t.Fatalf("ReadStream of a kept stream: %d events, want %d", len(got), len(snaps))
	}
	fullVerify(t, l, nil)
}

func TestI38_OpenAndACheckpointWalkReadNoSegment(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	dir := filepath.Dir(l.Path())
	rep, err := l.Seal(w.Fence(), 230)
	must(t, err)
	_, err = w.Append(unit("entity/Part/2", AnyVersion, 5))
	must(t, err)
	must(t, w.Close())
	must(t, os.Rename(filepath.Join(dir, SegmentsDir), filepath.Join(dir, "elsewhere")))
	l2, err := OpenLog(filepath.Join(dir, LogFileName), Options{})
	must(t, err)
	defer l2.Close()
	open, err := l2.VerifyChain(context.Background(), ChainVerifyOptions{FromCheckpoint: true})
	must(t, err)
	head, err := l2.Head()
	must(t, err)
	if open.From != rep.Segment.Last || open.Records != head-rep.Segment.Last || open.Head != head {
		t.Fatalf("the walk at open: %+v (the segment ends at %d)", open, rep.Segment.Last)
	}
	if got := readAll(t, l2, rep.Segment.Last+1); uint64(len(got)) != head-rep.Segment.Last {
		t.Fatalf("reading after the segment: %d events", len(got))
	}
}

func TestI38_AMissingOrDamagedSegmentIsNamedByItsTypedError(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	rep, err := l.Seal(w.Fence(), 230)
	must(t, err)
	file, err := os.ReadFile(rep.Path)
	must(t, err)
	check := func(want error) {
		t.Helper()
		var se *SegmentError
		_, verr := l.VerifyChain(context.Background(), ChainVerifyOptions{})
		rerr := l.ReadFrom(1, func(Event) error { return nil })
		serr := l.ReadStream("entity/Part/1", 1, func(Event) error { return nil })
		for _, err := range []error{verr, rerr, serr} {
			if !errors.Is(err, want) || !errors.As(err, &se) || se.Name != rep.Segment.Name {
				t.Fatalf("want %v naming %s, got %v", want, rep.Segment.Name, err)
			}
		}
		if _, err := l.VerifyChain(context.Background(), ChainVerifyOptions{FromCheckpoint: true}); err != nil {
			t.Fatalf("the walk from the seal: %v", err)
		}
	}
	must(t, os.Remove(rep.Path))
	check(ErrSegmentMissing)
	damaged := append([]byte(nil), file...)
	damaged[len(damaged)/2] ^= 1
	must(t, os.WriteFile(rep.Path, damaged, 0o600))
	check(ErrSegmentDamaged)
	must(t, os.WriteFile(rep.Path, file, 0o600))
	fullVerify(t, l, nil)
}

func TestI38_ALogOfAnEarlierBuildOpensAndSeals(t *testing.T) {
	dir := t.TempDir()
	path := buildLog(t, dir, 150)
	unchain(t, path) // format 2: no record carries a link
	old, err := verifyPath(t, path, nil)
	must(t, err)
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer w.Close()
	all := readAll(t, w.Log(), 1)
	_, err = w.Log().Seal(w.Fence(), 100)
	must(t, err)
	rep := fullVerify(t, w.Log(), &ChainPin{Seq: old.Head, Hash: old.HeadHash})
	if rep.Segments != 1 || !rep.Pinned {
		t.Fatalf("after sealing an upgraded log: %+v", rep)
	}
	if got := readAll(t, w.Log(), 1); !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("the events read through differ from the ones before the seal")
	}
	if _, err := w.Log().VerifyChain(context.Background(), ChainVerifyOptions{FromCheckpoint: true}); err != nil {
		t.Fatal(err)
	}
}

func TestI38_ASealThatWouldMoveNothingIsRefused(t *testing.T) {
	w := sealWriter(t, 50)
	_, err := w.Log().Seal(w.Fence(), 1)
	if !errors.Is(err, ErrSealRefused) {
		t.Fatalf("sealing below 1: %v", err)
	}
	_, err = w.Log().Seal(w.Fence(), 20)
	must(t, err)
	if _, err := w.Log().Seal(w.Fence(), 10); !errors.Is(err, ErrSealRefused) {
		t.Fatalf("sealing what is sealed: %v", err)
	}
}
