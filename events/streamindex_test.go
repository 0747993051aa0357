package events

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// indexState counts the stream index entries and the links of l: all
// of them, and the stale ones (naming a record log.db does not hold), and
// reads the pruning mark.
func indexState(t *testing.T, l *Log) (entries, stale int, mark string) {
	t.Helper()
	must(t, l.view(func(tx *bolt.Tx) error {
		events := tx.Bucket(bucketEvents)
		mark = string(tx.Bucket(bucketMeta).Get(metaIndexPruned))
		count := func(seq []byte) {
			entries++
			if events.Get(seq) == nil {
				stale++
			}
		}
		if links := tx.Bucket(bucketLinks); links != nil {
			must(t, links.ForEach(func(k, _ []byte) error { count(k); return nil }))
		}
		return tx.Bucket(bucketIndex).ForEach(func(_, v []byte) error { count(v); return nil })
	}))
	return entries, stale, mark
}

// linkSeqs is the set of sequences with a stream link.
func linkSeqs(t *testing.T, l *Log) map[uint64]bool {
	t.Helper()
	out := map[uint64]bool{}
	must(t, l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLinks).ForEach(func(k, _ []byte) error {
			out[binary.BigEndian.Uint64(k)] = true
			return nil
		})
	}))
	return out
}

// streamsOf reads every stream of events through ReadStream from each
// version, and eventAt of each version, and checks them against events
// (everything ReadFrom delivered).
func checkStreams(t *testing.T, l *Log, all []Event) {
	t.Helper()
	byStream := map[string][]Event{}
	for _, e := range all {
		byStream[e.Stream] = append(byStream[e.Stream], e)
	}
	for stream, want := range byStream {
		for i := range want {
			var got []Event
			must(t, l.ReadStream(stream, want[i].Version, func(e Event) error { got = append(got, e); return nil }))
			if !reflect.DeepEqual(got, want[i:]) {
				t.Fatalf("ReadStream(%s, %d): %d events, want %d", stream, want[i].Version, len(got), len(want[i:]))
			}
			e, found, err := l.eventAt(stream, want[i].Version)
			must(t, err)
			if !found || e.Seq != want[i].Seq || e.Stream != stream || e.Version != want[i].Version { // not resolved (values_of)
				t.Fatalf("eventAt(%s, %d): found %v, seq %d, want seq %d", stream, want[i].Version, found, e.Seq, want[i].Seq)
			}
		}
		if _, found, err := l.eventAt(stream, want[len(want)-1].Version+1); err != nil || found {
			t.Fatalf("eventAt past %s's version: found %v, %v", stream, found, err)
		}
	}
}

func TestI38_ASealRemovesTheStreamIndexEntriesOfTheRecordsItMovesAndReadsFindThemInTheSegment(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	all := readAll(t, l, 1)
	_, _, mark := indexState(t, l)
	if mark != string(indexPruneDone) {
		t.Fatalf("a new log's pruning mark: %q", mark)
	}
	before := linkSeqs(t, l)
	rep, err := l.Seal(w.Fence(), 230)
	must(t, err)
	_, stale, _ := indexState(t, l)
	after := linkSeqs(t, l)
	for seq := range before {
		if kept := seq > rep.Segment.Last; after[seq] != kept || stale != 0 {
			t.Fatalf("link of %d after a seal to %d: %v (%d stale)", seq, rep.Segment.Last, after[seq], stale)
		}
	}
	checkStreams(t, l, readAll(t, l, 1))
	// A sealed stream goes on from its version.
	v, err := l.StreamVersion("entity/Part/1")
	must(t, err)
	res, err := w.Append(unit("entity/Part/1", v, 2))
	must(t, err)
	if res[0].Err != nil {
		t.Fatalf("append after the seal at version %d: %v", v, res[0].Err)
	}
	if now, err := l.StreamVersion("entity/Part/1"); err != nil || now != v+2 {
		t.Fatalf("version after the append: %d, %v (want %d)", now, err, v+2)
	}
	checkStreams(t, l, readAll(t, l, 1))
	if got := readAll(t, l, 1); !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("ReadFrom after the seal differs")
	}
}

// oldSealedLog copies testdata/sealed-index-v1 (a log sealed by the build
// before this one, whose stream index kept an entry for every sealed
// record) into a new directory and opens its writer.
func oldSealedLog(t *testing.T) *Writer {
	t.Helper()
	dir := t.TempDir()
	must(t, os.CopyFS(dir, os.DirFS("testdata/sealed-index-v1")))
	must(t, os.Chmod(filepath.Join(dir, LogFileName), 0o600))
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func TestI38_ALogSealedByAnEarlierBuildReadsThroughItsIndexAndItsNextSealPrunesIt(t *testing.T) {
	w := oldSealedLog(t)
	l := w.Log()
	all := readAll(t, l, 1)
	_, stale, mark := indexState(t, l)
	if stale == 0 || mark != "" {
		t.Fatalf("the earlier build's log: %d stale index entries, mark %q", stale, mark)
	}
	checkStreams(t, l, all)
	head, err := l.Head()
	must(t, err)
	_, err = l.Seal(w.Fence(), head-2)
	must(t, err)
	if _, stale, mark := indexState(t, l); stale != 0 || mark != string(indexPruneDone) {
		t.Fatalf("after a seal: %d stale index entries, mark %q", stale, mark)
	}
	got := readAll(t, l, 1)
	if !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("ReadFrom after the seal differs")
	}
	checkStreams(t, l, got)
	rep := fullVerify(t, l, nil)
	if rep.Segments != 2 {
		t.Fatalf("verify: %+v", rep)
	}
}

func TestI38_PruningAnEarlierBuildsIndexGoesAChunkASealAndReadsStayWhole(t *testing.T) {
	defer func(n int) { indexPruneChunk = n }(indexPruneChunk)
	indexPruneChunk = 40
	w := oldSealedLog(t)
	l := w.Log()
	entries, stale, _ := indexState(t, l)
	for i := 0; stale > 0; i++ {
		if i > entries/indexPruneChunk+1 {
			t.Fatalf("%d seals left %d stale entries", i, stale)
		}
		_, err := w.Append(unit("entity/Part/3", AnyVersion, 3))
		must(t, err)
		head, err := l.Head()
		must(t, err)
		_, err = l.Seal(w.Fence(), head)
		must(t, err)
		var mark string
		_, stale, mark = indexState(t, l)
		if (stale == 0) != (mark == string(indexPruneDone)) || stale != 0 && !bytes.HasPrefix([]byte(mark), indexPruneNext) {
			t.Fatalf("after seal %d: %d stale, mark %q", i, stale, mark)
		}
	}
	checkStreams(t, l, readAll(t, l, 1))
	if _, err := l.VerifyChain(context.Background(), ChainVerifyOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The values_of of an effect.queued refers to its commit's
// entity.persisted by stream version: a seal between the two leaves the
// reference to the segment, and reads from the effect resolve it there.
func TestI38_AReferenceIntoASealedPartOfItsCommitResolvesThroughTheSegment(t *testing.T) {
	w := sealWriter(t, 50)
	l := w.Log()
	u, values := persistedAndQueued()
	res, err := w.Append(u)
	must(t, err)
	queued := res[0].Last
	_, err = l.Seal(w.Fence(), queued) // the persisted event sealed, the effect kept
	must(t, err)
	if raw := rawRecord(t, l, queued-1); raw != nil {
		t.Fatal("the persisted event is still in log.db")
	}
	got := readAll(t, l, queued)
	if q, ok := got[0].Payload.(EffectQueued); !ok || got[0].Seq != queued || !reflect.DeepEqual(q.Values, values) {
		t.Fatalf("the effect read after its persisted event was sealed: %+v", got[0])
	}
	checkStreams(t, l, readAll(t, l, 1))
}

func TestI38_CompactRemovesEveryIndexEntryAnEarlierBuildKeptForSealedRecords(t *testing.T) {
	w := oldSealedLog(t)
	l := w.Log()
	dir := filepath.Dir(l.Path())
	must(t, w.Close()) // appends the lease's release
	l, err := OpenLog(filepath.Join(dir, LogFileName), Options{ReadOnly: true})
	must(t, err)
	all := readAll(t, l, 1)
	must(t, l.Close())
	rep, err := Compact(context.Background(), dir, Options{})
	must(t, err)
	if rep.After >= rep.Before {
		t.Fatalf("compact: %d bytes before, %d after", rep.Before, rep.After)
	}
	l, err = OpenLog(filepath.Join(dir, LogFileName), Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	if _, stale, mark := indexState(t, l); stale != 0 || mark != string(indexPruneDone) {
		t.Fatalf("after compact: %d stale index entries, mark %q", stale, mark)
	}
	if got := readAll(t, l, 1); !reflect.DeepEqual(got, all) {
		t.Fatalf("ReadFrom after compact differs: %d events, want %d; last %+v", len(got), len(all), got[len(got)-1])
	}
	checkStreams(t, l, all)
}

// A log of format 3 (testdata/sealed-index-v1: segments, a stream index
// with entries of sealed records) reads whole read-only; opened for
// writing it gets its links and format 4 in place, appends to its
// streams link on top of their indexed versions, and every version of
// every stream stays readable, through seals across the upgrade and
// after a reopen.
func TestI38_ALogOfFormat3UpgradesInPlaceAndEveryStreamVersionStaysReadable(t *testing.T) {
	dir := t.TempDir()
	must(t, os.CopyFS(dir, os.DirFS("testdata/sealed-index-v1")))
	path := filepath.Join(dir, LogFileName)
	must(t, os.Chmod(path, 0o600))
	if f := formatOf(t, path); f != "3" {
		t.Fatalf("the earlier build's log is of format %q", f)
	}
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	old := readAll(t, l, 1)
	checkStreams(t, l, old)
	must(t, l.Close())
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer func() { _ = w.Close() }()
	l = w.Log()
	must(t, l.view(func(tx *bolt.Tx) error {
		if f := string(tx.Bucket(bucketMeta).Get(metaFormat)); f != strconv.Itoa(LogFormat) || tx.Bucket(bucketLinks) == nil {
			t.Fatalf("after the upgrade: format %q, links %v", f, tx.Bucket(bucketLinks) != nil)
		}
		return nil
	}))
	appendToEveryEntity(t, w, old)
	all := readAll(t, l, 1)
	if !reflect.DeepEqual(all[:len(old)], old) {
		t.Fatal("ReadFrom after the upgrade differs")
	}
	checkStreams(t, l, all)
	head, err := l.Head()
	must(t, err)
	for _, below := range []uint64{old[len(old)-1].Seq + 3, head - 2} { // a seal across the upgrade, then most of the rest
		_, err := l.Seal(w.Fence(), below)
		must(t, err)
		checkStreams(t, l, readAll(t, l, 1))
	}
	fullVerify(t, l, nil)
	all = readAll(t, l, 1)
	must(t, w.Close())
	l, err = OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	got := readAll(t, l, 1) // and the lease's release Close appended
	if !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("ReadFrom after the reopen differs")
	}
	checkStreams(t, l, got)
}

// appendToEveryEntity appends three versions to each entity stream of
// evs, and a new stream.
func appendToEveryEntity(t *testing.T, w *Writer, evs []Event) {
	t.Helper()
	seen := map[string]bool{"entity/Part/new": true}
	for _, e := range evs {
		if strings.HasPrefix(e.Stream, "entity/") {
			seen[e.Stream] = true
		}
	}
	for i := range 3 {
		for stream := range seen {
			res, err := w.Append(unit(stream, AnyVersion, i+1))
			must(t, err)
			must(t, res[0].Err)
		}
	}
}

// A log marked format 4 without its links is damaged: opening it says so.
func TestLogFormat4WithoutItsLinksIsRefusedAsDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogFileName)
	l, err := OpenLog(path, Options{})
	must(t, err)
	must(t, l.Close())
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketLinks) }))
	must(t, db.Close())
	_, err = OpenLog(path, Options{ReadOnly: true})
	var lc *LogCorruptError
	if !errors.As(err, &lc) || !strings.Contains(err.Error(), "stream_links missing") {
		t.Fatalf("format 4 without links: %v", err)
	}
}

// A salvage of a format-4 log indexes what it copies in the stream
// index; appends after it link on top, and every version reads.
func TestI38_ASalvagedLogIndexesWhatItCopiedAndLinksWhatIsAppendedAfter(t *testing.T) {
	dir := t.TempDir()
	src := buildLog(t, dir, 300)
	_, dst, err := salvageTo(t, src, SalvageOptions{})
	must(t, err)
	w, err := OpenWriter(filepath.Dir(dst), WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer func() { _ = w.Close() }()
	l := w.Log()
	copied := readAll(t, l, 1)
	must(t, l.view(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketIndex).Stats().KeyN; n < len(copied)-5 { // but the writer's lease events
			t.Fatalf("the salvaged log's stream index holds %d entries of %d records", n, len(copied))
		}
		return nil
	}))
	checkStreams(t, l, copied)
	appendToEveryEntity(t, w, []Event{{Stream: "entity/Part/1"}})
	for _, e := range copied[:5] {
		res, err := w.Append(unit(e.Stream, AnyVersion, 2))
		must(t, err)
		must(t, res[0].Err)
	}
	checkStreams(t, l, readAll(t, l, 1))
}

// A log of format 5 (testdata/links-v5, written by the build before
// format 6: a link for every record, 16-byte stream heads, one seal)
// reads whole read-only; opened for writing it is marked 6, its new
// streams' first records get no link and the heads it writes are
// compact, and every version of every stream, old and new, stays
// readable through a seal and a reopen, the chain verifying.
func TestI38_ALogOfFormat5KeepsItsLinksAndHeadsAndGoesOnInFormat6(t *testing.T) {
	dir := t.TempDir()
	must(t, os.CopyFS(dir, os.DirFS("testdata/links-v5")))
	path := filepath.Join(dir, LogFileName)
	must(t, os.Chmod(path, 0o600))
	if f := formatOf(t, path); f != "5" {
		t.Fatalf("the earlier build's log is of format %q", f)
	}
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	old := readAll(t, l, 1)
	checkStreams(t, l, old)
	oldLinks := linkSeqs(t, l)
	must(t, l.Close())
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer func() { _ = w.Close() }()
	l = w.Log()
	must(t, l.view(func(tx *bolt.Tx) error {
		if f := string(tx.Bucket(bucketMeta).Get(metaFormat)); f != strconv.Itoa(LogFormat) {
			t.Fatalf("after the upgrade: format %q", f)
		}
		return nil
	}))
	appendToEveryEntity(t, w, old)
	all := readAll(t, l, 1)
	if !reflect.DeepEqual(all[:len(old)], old) {
		t.Fatal("ReadFrom after the upgrade differs")
	}
	checkStreams(t, l, all)
	checkFormat6(t, l, all[len(old):], oldLinks)
	head, err := l.Head()
	must(t, err)
	_, err = l.Seal(w.Fence(), head-2)
	must(t, err)
	checkStreams(t, l, readAll(t, l, 1))
	fullVerify(t, l, nil)
	all = readAll(t, l, 1)
	must(t, w.Close())
	if f := formatOf(t, path); f != strconv.Itoa(LogFormat) { // a seal never lowers it
		t.Fatalf("after a seal: format %q", f)
	}
	l, err = OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	got := readAll(t, l, 1) // and the lease's release Close appended
	if !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("ReadFrom after the reopen differs")
	}
	checkStreams(t, l, got)
	fullVerify(t, l, nil)
}

// checkFormat6 checks the records appended by this build (added): a link
// for each but a stream's first record, whose link is implied; the older
// links all kept; the streams written have compact heads.
func checkFormat6(t *testing.T, l *Log, added []Event, oldLinks map[uint64]bool) {
	t.Helper()
	links := linkSeqs(t, l)
	for seq := range oldLinks {
		if !links[seq] {
			t.Fatalf("the link of %d, written by the earlier build, is gone", seq)
		}
	}
	for _, e := range added {
		if links[e.Seq] != (e.Version > 1) {
			t.Fatalf("%s version %d (seq %d): link %v", e.Stream, e.Version, e.Seq, links[e.Seq])
		}
	}
	must(t, l.view(func(tx *bolt.Tx) error {
		for _, e := range added {
			v := tx.Bucket(bucketStreams).Get([]byte(e.Stream))
			if len(v) == 8 || len(v) == 16 {
				t.Fatalf("the head of %s: %x, not compact", e.Stream, v)
			}
		}
		return nil
	}))
}

// headValue's forms all read back; the varints never take the length of a
// fixed form (8 or 16 bytes), where the 16-byte form is written instead.
func TestStreamHeadValuesRoundTrip(t *testing.T) {
	for _, c := range [][2]uint64{{1, 1}, {1, 0}, {7, 300}, {1 << 20, 1 << 40}, {1 << 35, 1 << 35}, {1 << 63, 1<<64 - 1}, {1<<64 - 1, 1}} {
		b := headValue(c[0], c[1])
		v, last, ok := parseHead(b)
		if !ok || v != c[0] || last != c[1] {
			t.Fatalf("headValue(%d, %d) = %x reads %d, %d, %v", c[0], c[1], b, v, last, ok)
		}
	}
	if b := headValue(1, 40000); len(b) != 4 {
		t.Fatalf("headValue(1, 40000) = %x: %d bytes, want 4", b, len(b))
	}
	for _, bad := range [][]byte{{0x80}, {1}, {1, 2, 3}, {0x80, 0x80}} {
		if _, _, ok := parseHead(bad); ok {
			t.Fatalf("parseHead(%x) accepted", bad)
		}
	}
}
