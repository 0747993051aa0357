package events

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// manyStreamsLog is a writer whose log grew in rounds, each appending to
// a few of streams streams chosen at random (seed) and sealing (a seal a
// round, the record before the last few).
func manyStreamsLog(tb testing.TB, seed uint64, streams, rounds int, noSync bool) *Writer {
	tb.Helper()
	w, err := OpenWriter(tb.TempDir(), WriterOptions{Log: Options{Clock: NewManualClock(t0), NoSync: noSync},
		Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = w.Close() })
	r := rand.New(rand.NewPCG(seed, 1))
	for range rounds {
		var u Unit
		for range 1 + r.IntN(6) {
			u.Streams = append(u.Streams, StreamAppend{Stream: fmt.Sprintf("entity/Part/%d", r.IntN(streams)),
				ExpectedVersion: AnyVersion, Events: []Event{{Payload: note(1)}, {Payload: note(2)}}})
		}
		if _, err := w.Append(u); err != nil {
			tb.Fatal(err)
		}
		head, err := w.Log().Head()
		if err == nil {
			_, err = w.Log().Seal(w.Fence(), head-uint64(r.IntN(4)))
		}
		if err != nil && !errors.Is(err, ErrSealRefused) {
			tb.Fatal(err)
		}
	}
	return w
}

// segmentsHolding lists, by reading every segment, the ones holding a
// record of stream.
func segmentsHolding(t *testing.T, l *Log, stream string) map[string]bool {
	t.Helper()
	segs, err := l.Segments()
	must(t, err)
	out := map[string]bool{}
	for _, s := range segs {
		recs, err := l.loadSegment(s)
		must(t, err)
		for _, r := range recs {
			if rec, err := parseRaw(r.seq, r.raw); err == nil && rec.h.Stream == stream {
				out[s.Name] = true
			}
		}
	}
	return out
}

// readCounted reads stream from version from and counts the segments
// read and the index's fallbacks.
func readCounted(t *testing.T, l *Log, stream string, from uint64) ([]Event, SegmentReadStats, error) {
	t.Helper()
	before := l.SegmentReadStats()
	var got []Event
	err := l.ReadStream(stream, from, func(e Event) error { got = append(got, e); return nil })
	after := l.SegmentReadStats()
	return got, SegmentReadStats{Loaded: after.Loaded - before.Loaded, IndexFallbacks: after.IndexFallbacks - before.IndexFallbacks}, err
}

// fullScan reads stream from version from with the index turned off.
func fullScan(t *testing.T, l *Log, stream string, from uint64) []Event {
	t.Helper()
	got, _ := fullScanCounted(t, l, stream, from)
	return got
}

// fullScanCounted is fullScan, and what it read.
func fullScanCounted(t *testing.T, l *Log, stream string, from uint64) ([]Event, SegmentReadStats) {
	t.Helper()
	useSegStreams = false
	defer func() { useSegStreams = true }()
	got, st, err := readCounted(t, l, stream, from)
	must(t, err)
	return got, st
}

// TestI38_AStreamsSealedHistoryReadsOnlyTheSegmentsTheIndexNames seals
// logs of 40 streams at random points: reading each stream from version
// 1 returns exactly what a scan of every segment returns, reads exactly
// the segments holding the stream, and never falls back; a read of one
// sealed version (eventAt) reads one segment.
func TestI38_AStreamsSealedHistoryReadsOnlyTheSegmentsTheIndexNames(t *testing.T) {
	for seed := range uint64(4) {
		w := manyStreamsLog(t, seed, 40, 60, true)
		l := w.Log()
		segs, err := l.Segments()
		must(t, err)
		if len(segs) < 30 {
			t.Fatalf("seed %d: %d segments", seed, len(segs))
		}
		for i := range 40 {
			stream := fmt.Sprintf("entity/Part/%d", i)
			want := fullScan(t, l, stream, 1)
			got, st, err := readCounted(t, l, stream, 1)
			must(t, err)
			holding := segmentsHolding(t, l, stream)
			if !reflect.DeepEqual(got, want) || st.Loaded != uint64(len(holding)) || st.IndexFallbacks != 0 {
				t.Fatalf("seed %d, %s: %d events (a scan: %d), %d segments read, %d hold it, %d fallbacks",
					seed, stream, len(got), len(want), st.Loaded, len(holding), st.IndexFallbacks)
			}
			checkEventAtReadsOneSegment(t, l, stream, want)
		}
	}
}

// checkEventAtReadsOneSegment looks up a sealed version of want (its
// stream's events) through eventAt: one segment read.
func checkEventAtReadsOneSegment(t *testing.T, l *Log, stream string, want []Event) {
	t.Helper()
	if len(want) == 0 {
		return
	}
	v := want[len(want)/2].Version
	before := l.SegmentReadStats()
	e, found, err := l.eventAt(stream, v)
	must(t, err)
	read := l.SegmentReadStats().Loaded - before.Loaded
	if !found || e.Seq != want[len(want)/2].Seq || read > 1 {
		t.Fatalf("eventAt(%s, %d): found %v, seq %d (want %d), %d segments read", stream, v, found, e.Seq, want[len(want)/2].Seq, read)
	}
}

// sealedStreamOf picks a stream of l whose first version is sealed, in a
// segment other than the newest, and returns its events.
func sealedStreamOf(t *testing.T, l *Log) (string, []Event) {
	t.Helper()
	segs, err := l.Segments()
	must(t, err)
	for i := range 40 {
		stream := fmt.Sprintf("entity/Part/%d", i)
		want := fullScan(t, l, stream, 1)
		if len(want) > 0 && want[0].Seq < segs[len(segs)-1].First {
			return stream, want
		}
	}
	t.Fatal("no stream sealed before the newest segment")
	return "", nil
}

func TestI38_ASegmentTheIndexNamesMissingGivesSegmentMissingAndOthersStillRead(t *testing.T) {
	w := manyStreamsLog(t, 7, 40, 60, true)
	l := w.Log()
	stream, want := sealedStreamOf(t, l)
	segs, err := l.Segments()
	must(t, err)
	var gone SegmentSealed
	for _, s := range segs {
		if s.First <= want[0].Seq && want[0].Seq <= s.Last {
			gone = s
		}
	}
	must(t, os.Remove(filepath.Join(filepath.Dir(l.Path()), SegmentsDir, gone.Name)))
	_, _, err = readCounted(t, l, stream, 1)
	var se *SegmentError
	if !errors.Is(err, ErrSegmentMissing) || !errors.As(err, &se) || se.Name != gone.Name {
		t.Fatalf("reading %s with %s gone: %v", stream, gone.Name, err)
	}
	for i := range 40 { // a stream the missing segment does not hold reads whole
		other := fmt.Sprintf("entity/Part/%d", i)
		if segmentsHoldingNoLoad(t, l, other, gone) {
			continue
		}
		got, st, err := readCounted(t, l, other, 1)
		must(t, err)
		if st.IndexFallbacks != 0 || len(got) == 0 && other != stream {
			t.Fatalf("%s: %d events, %+v", other, len(got), st)
		}
		return
	}
	t.Fatal("every stream is in the missing segment")
}

// segmentsHoldingNoLoad reports whether the index names seg for stream.
func segmentsHoldingNoLoad(t *testing.T, l *Log, stream string, seg SegmentSealed) (named bool) {
	t.Helper()
	must(t, l.view(func(tx *bolt.Tx) error {
		named = l.readStreamSegments(tx, stream, 1, 1<<62).named[seg.First]
		return nil
	}))
	return named
}

// streamEntries lists the index keys of stream's runs.
func streamEntries(t *testing.T, l *Log, stream string) [][]byte {
	t.Helper()
	var keys [][]byte
	prefix := segStreamKey(stream, 0)[:len(stream)+2]
	must(t, l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSegStreams).Cursor()
		for k, _ := c.Seek(prefix); k != nil && len(k) == len(prefix)+8 && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	}))
	return keys
}

// The index is not vouched for by the chain: an entry removed, pointing
// at another segment, cut short or claiming fewer versions leaves a read
// whole (the segments it names did not give every version: it scans
// them all) and counts a fallback.
func TestI38_ADamagedSegmentStreamsEntryIsCaughtAndTheReadScansEverySegment(t *testing.T) {
	damages := map[string]func(b *bolt.Bucket, k, v []byte) error{
		"removed":     func(b *bolt.Bucket, k, _ []byte) error { return b.Delete(k) },
		"other":       func(b *bolt.Bucket, k, v []byte) error { return b.Put(k, append(u64(1), v[8:]...)) },
		"cut short":   func(b *bolt.Bucket, k, v []byte) error { return b.Put(k, v[:12]) },
		"fewer":       func(b *bolt.Bucket, k, v []byte) error { return b.Put(k, append(v[:8:8], u64(0)...)) },
		"key renamed": func(b *bolt.Bucket, k, v []byte) error { return firstErr(b.Delete(k), b.Put(segStreamKey("x", 1), v)) },
	}
	for name, damage := range damages {
		w := manyStreamsLog(t, 11, 40, 60, true)
		l := w.Log()
		stream, want := sealedStreamOf(t, l)
		keys := streamEntries(t, l, stream)
		must(t, l.update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketSegStreams)
			return damage(b, keys[0], append([]byte(nil), b.Get(keys[0])...))
		}))
		got, st, err := readCounted(t, l, stream, 1)
		must(t, err)
		if !reflect.DeepEqual(got, want) || st.IndexFallbacks != 1 {
			t.Fatalf("%s: %d events (want %d), %+v", name, len(got), len(want), st)
		}
		e, found, err := l.eventAt(stream, want[0].Version)
		if err != nil || !found || e.Seq != want[0].Seq {
			t.Fatalf("%s: eventAt(%s, %d): %v, %v", name, stream, want[0].Version, found, err)
		}
	}
}

func firstErr(errs ...error) error { return errors.Join(errs...) }

// oldManifestLog copies testdata/sealed-manifest-v5 (a log of format 5
// sealed three times by the build before the segment streams index) and
// opens its writer.
func oldManifestLog(t *testing.T) *Writer {
	t.Helper()
	dir := t.TempDir()
	must(t, os.CopyFS(dir, os.DirFS("testdata/sealed-manifest-v5")))
	must(t, os.Chmod(filepath.Join(dir, LogFileName), 0o600))
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// A log sealed before the index reads its segments as it did (every one
// of them from a stream's last sealed version back to its first, no
// fallback counted); its
// next seal indexes its own segment, which a stream sealed only there
// then reads alone, and the earlier ones stay read in full.
func TestI38_ALogSealedBeforeTheSegmentStreamsIndexReadsWholeAndIndexesItsNextSeals(t *testing.T) {
	for _, open := range []func(*testing.T) *Writer{oldManifestLog, oldSealedLog} {
		w := open(t)
		l := w.Log()
		all := readAll(t, l, 1)
		checkStreams(t, l, all)
		old, err := l.Segments()
		must(t, err)
		_, err = w.Append(unit("entity/Part/new", AnyVersion, 5))
		must(t, err)
		head, err := l.Head()
		must(t, err)
		_, err = l.Seal(w.Fence(), head+1)
		must(t, err)
		got, st, err := readCounted(t, l, "entity/Part/new", 1)
		must(t, err)
		if len(got) != 5 || st.Loaded != 1 || st.IndexFallbacks != 0 {
			t.Fatalf("the stream sealed by this build: %d events, %+v", len(got), st)
		}
		for _, stream := range []string{"entity/Part/1", "entity/Part/8"} {
			got, st, err = readCounted(t, l, stream, 1)
			must(t, err)
			want, scan := fullScanCounted(t, l, stream, 1)
			if len(want) == 0 && stream == "entity/Part/1" || !reflect.DeepEqual(got, want) || st != scan {
				t.Fatalf("%s, a stream of the %d earlier segments: %d events, %+v (a scan: %d, %+v)", stream, len(old), len(got), st, len(want), scan)
			}
		}
		checkStreams(t, l, readAll(t, l, 1))
	}
}

// Compact copies the index with the log: a stream's history still reads
// only its segments. A salvage leaves the index behind: the new log reads
// every segment, whole, without counting a fallback.
func TestI38_CompactKeepsTheSegmentStreamsIndexAndASalvageReadsWithoutIt(t *testing.T) {
	w := manyStreamsLog(t, 3, 40, 60, true)
	l := w.Log()
	stream, want := sealedStreamOf(t, l)
	holding := len(segmentsHolding(t, l, stream))
	dir := filepath.Dir(l.Path())
	must(t, w.Close())
	_, err := Compact(context.Background(), dir, Options{})
	must(t, err)
	cp, err := OpenLog(filepath.Join(dir, LogFileName), Options{ReadOnly: true})
	must(t, err)
	got, st, err := readCounted(t, cp, stream, 1)
	must(t, err)
	if !reflect.DeepEqual(got, want) || st.Loaded != uint64(holding) || st.IndexFallbacks != 0 {
		t.Fatalf("after Compact: %d events (want %d), %+v, %d segments hold it", len(got), len(want), st, holding)
	}
	must(t, cp.Close())
	dst := filepath.Join(t.TempDir(), "salvaged", LogFileName)
	must(t, os.MkdirAll(filepath.Dir(dst), 0o700))
	_, err = SalvageLog(filepath.Join(dir, LogFileName), dst, SalvageOptions{})
	must(t, err)
	sl, err := OpenLog(dst, Options{ReadOnly: true})
	must(t, err)
	defer sl.Close()
	got, st, err = readCounted(t, sl, stream, 1)
	must(t, err)
	indexed := false
	must(t, sl.view(func(tx *bolt.Tx) error { indexed = tx.Bucket(bucketSegStreams) != nil; return nil }))
	if !reflect.DeepEqual(got, want) || st.IndexFallbacks != 0 || indexed {
		t.Fatalf("after a salvage: %d events (want %d), %+v, index kept %v", len(got), len(want), st, indexed)
	}
}

// The indexed segments are read again after each seal: a segment sealed
// after a read filled the cache, between two of a stream's, is skipped.
func TestI38_ASegmentSealedAfterAReadIsSkippedByTheNextRead(t *testing.T) {
	w := manyStreamsLog(t, 9, 40, 20, true)
	l := w.Log()
	sealNow := func(stream string) {
		t.Helper()
		_, err := w.Append(unit(stream, AnyVersion, 3))
		must(t, err)
		head, err := l.Head()
		must(t, err)
		_, err = l.Seal(w.Fence(), head+1)
		must(t, err)
	}
	sealNow("entity/Part/a")
	_ = streamOf(t, l, "entity/Part/a") // fills the cache
	sealNow("entity/Part/b")
	sealNow("entity/Part/a")
	got, st, err := readCounted(t, l, "entity/Part/a", 1)
	must(t, err)
	if len(got) != 6 || st.Loaded != 2 || st.IndexFallbacks != 0 {
		t.Fatalf("entity/Part/a: %d events, %+v (want 6 events from 2 segments)", len(got), st)
	}
}
