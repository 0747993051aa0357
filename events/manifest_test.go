package events

import (
	"bytes"
	"reflect"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// manifestState is the meta array's bytes and the bucket's entries.
func manifestState(t *testing.T, l *Log) (legacy []byte, entries int) {
	t.Helper()
	must(t, l.view(func(tx *bolt.Tx) error {
		legacy = bytes.Clone(tx.Bucket(bucketMeta).Get(metaSegments))
		if mb := tx.Bucket(bucketManifest); mb != nil {
			entries = mb.Stats().KeyN
		}
		return nil
	}))
	return legacy, entries
}

// TestI38_EachSealAddsOneManifestEntryAndRewritesNoEarlierOne seals a new
// log ten times: the manifest is ten bucket entries (no meta array), each
// seal's entry is the segment it vouches for, and the log is format 5.
func TestI38_EachSealAddsOneManifestEntryAndRewritesNoEarlierOne(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	all := readAll(t, l, 1)
	var sealed []SegmentSealed
	for i := range 10 {
		head, err := l.Head()
		must(t, err)
		rep, err := l.Seal(w.Fence(), head-uint64(9-i))
		must(t, err)
		sealed = append(sealed, rep.Segment)
		_, err = w.Append(unit("entity/Part/1", AnyVersion, 12))
		must(t, err)
		if legacy, n := manifestState(t, l); legacy != nil || n != i+1 {
			t.Fatalf("after seal %d: meta array %q, %d bucket entries", i+1, legacy, n)
		}
	}
	if got, err := l.Segments(); err != nil || !reflect.DeepEqual(got, sealed) {
		t.Fatalf("Segments: %v (%v), want what the seals reported", got, err)
	}
	must(t, l.view(func(tx *bolt.Tx) error {
		if f := string(tx.Bucket(bucketMeta).Get(metaFormat)); f != strconv.Itoa(LogFormat) { // at least manifestFormat, never lowered
			t.Fatalf("format %q", f)
		}
		return nil
	}))
	if got := checkExactlyOnce(t, l); !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("the events after ten seals differ")
	}
	if rep := fullVerify(t, l, nil); rep.Segments != 10 {
		t.Fatalf("verify: %+v", rep)
	}
}

// TestI38_ALogSealedByAnEarlierBuildKeepsItsManifestArrayAndAddsEntries
// opens testdata/sealed-index-v1 (a log whose manifest is the meta array
// an earlier build rewrote at each seal): two more seals leave the array's
// bytes as they were and add two bucket entries; Segments, reads from
// genesis, the chain, doctor's verification and a salvage see the three
// segments in order.
func TestI38_ALogSealedByAnEarlierBuildKeepsItsManifestArrayAndAddsEntries(t *testing.T) {
	w := oldSealedLog(t)
	l := w.Log()
	before, n := manifestState(t, l)
	old, err := l.Segments()
	must(t, err)
	if before == nil || n != 0 || len(old) != 1 {
		t.Fatalf("the earlier build's manifest: array %d bytes, %d entries, %d segments", len(before), n, len(old))
	}
	all := readAll(t, l, 1)
	for range 2 {
		_, err := w.Append(unit("entity/Part/1", AnyVersion, 30))
		must(t, err)
		head, err := l.Head()
		must(t, err)
		_, err = l.Seal(w.Fence(), head-2)
		must(t, err)
	}
	after, n := manifestState(t, l)
	segs, err := l.Segments()
	must(t, err)
	if !bytes.Equal(after, before) || n != 2 || len(segs) != 3 || segs[0] != old[0] || segs[1].First != old[0].Last+1 || segs[2].First != segs[1].Last+1 {
		t.Fatalf("after two seals: array changed %v, %d entries, segments %+v", !bytes.Equal(after, before), n, segs)
	}
	if got := checkExactlyOnce(t, l); !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatal("the events after the seals differ")
	}
	if rep := fullVerify(t, l, nil); rep.Segments != 3 {
		t.Fatalf("verify: %+v", rep)
	}
	path := l.Path()
	must(t, w.Close())
	v, err := VerifyLogFile(path)
	must(t, err)
	if !v.Healthy() || v.Sealed.Count() != segs[2].Last {
		t.Fatalf("doctor's verification: healthy %v, sealed %v", v.Healthy(), v.Sealed)
	}
}

// TestI38_DoctorsVerificationOfALogSealedManyTimesIsHealthy seals a log
// until its manifest bucket outgrows an inline page: VerifyLogFile (doctor)
// walks that bucket's pages once, so a healthy log is not reported as
// "page reached twice" (it was, after the third seal of a real store).
func TestI38_DoctorsVerificationOfALogSealedManyTimesIsHealthy(t *testing.T) {
	w := sealWriter(t, 200)
	l := w.Log()
	for range 10 {
		head, err := l.Head()
		must(t, err)
		_, err = l.Seal(w.Fence(), head-2)
		must(t, err)
		_, err = w.Append(unit("entity/Part/1", AnyVersion, 12))
		must(t, err)
	}
	path := l.Path()
	must(t, w.Close())
	v, err := VerifyLogFile(path)
	must(t, err)
	if !v.Healthy() {
		t.Fatalf("doctor's verification of a log sealed ten times: %v", v.Problems)
	}
}

// CompareSegments names the vouched segments a list lacks, in the
// manifest's order, and counts the listed names the manifest does not
// vouch for.
func TestCompareSegmentsNamesTheMissingAndCountsTheStrays(t *testing.T) {
	segs := []SegmentSealed{{Name: "a.seg.zst"}, {Name: "b.seg.zst"}, {Name: "c.seg.zst"}}
	listed := []segstore.Info{{Name: "b.seg.zst"}, {Name: "b.seg.zst.tmp"}, {Name: "x"}}
	missing, strays := CompareSegments(segs, listed)
	if !reflect.DeepEqual(missing, []string{"a.seg.zst", "c.seg.zst"}) || strays != 2 {
		t.Fatalf("missing %v, strays %d", missing, strays)
	}
	if missing, strays := CompareSegments(nil, nil); missing != nil || strays != 0 {
		t.Fatalf("nothing vouched, nothing listed: missing %v, strays %d", missing, strays)
	}
}
