package events

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// sealedClosedLog seals a log twice and closes it; it returns its path,
// its events and its segments.
func sealedClosedLog(t *testing.T) (string, []Event, []SegmentSealed) {
	t.Helper()
	w := sealWriter(t, 200)
	_, err := w.Log().Seal(w.Fence(), 100)
	must(t, err)
	_, err = w.Log().Seal(w.Fence(), 230)
	must(t, err)
	all := readAll(t, w.Log(), 1)
	segs, err := w.Log().Segments()
	must(t, err)
	path := w.Log().Path()
	must(t, w.Close())
	return path, all, segs
}

func TestI38_SalvageOfASealedStoreKeepsItsSegmentsAndLosesNothing(t *testing.T) {
	src, all, segs := sealedClosedLog(t)
	dst := filepath.Join(t.TempDir(), LogFileName)
	rep, err := SalvageLog(src, dst, SalvageOptions{})
	must(t, err)
	if len(rep.Lost) != 0 || len(rep.SegmentsLost) != 0 || !reflect.DeepEqual(rep.Segments, []string{segs[0].Name, segs[1].Name}) {
		t.Fatalf("salvage: lost %s, segments %v, not kept %v", rep.Lost, rep.Segments, rep.SegmentsLost)
	}
	l, err := OpenLog(dst, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	if vr := fullVerify(t, l, nil); vr.Segments != 2 || vr.Head != rep.Head || vr.Records != rep.Head {
		t.Fatalf("verify of the salvaged log: %+v", vr)
	}
	// (closing the writer appended its lease's release after all)
	if got := readAll(t, l, 1); len(got) != len(all)+1 || !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatalf("the salvaged log reads %d events, the source %d", len(got), len(all))
	}
}

func TestI38_SalvageNamesTheSegmentsItCouldNotVerifyAndCountsTheirRecordsLost(t *testing.T) {
	src, _, segs := sealedClosedLog(t)
	must(t, os.Remove(filepath.Join(filepath.Dir(src), SegmentsDir, segs[1].Name)))
	dst := filepath.Join(t.TempDir(), LogFileName)
	rep, err := SalvageLog(src, dst, SalvageOptions{})
	must(t, err)
	if len(rep.SegmentsLost) != 1 || rep.SegmentsLost[0].Name != segs[1].Name || !reflect.DeepEqual(rep.Segments, []string{segs[0].Name}) {
		t.Fatalf("salvage: segments %v, not kept %v", rep.Segments, rep.SegmentsLost)
	}
	// its records are lost, but for copies a scan of free pages found
	var span SeqRanges
	span.AddRange(segs[1].First, segs[1].Last)
	if len(rep.Lost) == 0 || len(rep.Lost.Minus(span)) != 0 || rep.Lost.Count()+rep.FromScan.Count() < segs[1].Records {
		t.Fatalf("lost %s, from scan %s; the missing segment held %d records of %d..%d", rep.Lost, rep.FromScan, segs[1].Records, segs[1].First, segs[1].Last)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dst), SegmentsDir, segs[1].Name)); !os.IsNotExist(err) {
		t.Fatalf("the segment not kept is beside the new log: %v", err)
	}
	l, err := OpenLog(dst, Options{ReadOnly: true})
	must(t, err)
	must(t, l.Close())
}

// TestI38_ASalvageWhoseFirstSegmentIsGoneLeavesNoRecordBetweenSegments:
// with the first of two segments missing, a scan of free pages found its
// records and copied them into log.db, "lost: none" — between the two
// segments, where neither readers nor the chain walk look (audit verify
// failed chain_broken at the kept segment). They count as lost instead:
// the chain restarts after them and every record of log.db is read.
func TestI38_ASalvageWhoseFirstSegmentIsGoneLeavesNoRecordBetweenSegments(t *testing.T) {
	w := sealWriter(t, 2000) // the first seal frees more pages than what follows reuses
	_, err := w.Log().Seal(w.Fence(), 1500)
	must(t, err)
	_, err = w.Log().Seal(w.Fence(), 1900)
	must(t, err)
	segs, err := w.Log().Segments()
	must(t, err)
	src := w.Log().Path()
	must(t, w.Close())
	must(t, os.Remove(filepath.Join(filepath.Dir(src), SegmentsDir, segs[0].Name)))
	dst := filepath.Join(t.TempDir(), LogFileName)
	rep, err := SalvageLog(src, dst, SalvageOptions{})
	must(t, err)
	if !rep.Lost.ContainsAll(segs[0].First, segs[0].Last) || len(rep.Segments) != 1 {
		t.Fatalf("salvage: lost %s (the missing segment held %d..%d), kept %v", rep.Lost, segs[0].First, segs[0].Last, rep.Segments)
	}
	l, err := OpenLog(dst, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	vr, err := l.VerifyChain(context.Background(), ChainVerifyOptions{AcceptSalvageHoles: true})
	if err != nil || vr.Head != rep.Head || len(vr.Restarts) != 1 || vr.Restarts[0].At != segs[1].First {
		t.Fatalf("verify of the salvaged log: %+v, %v", vr, err)
	}
	inLog, err := l.logRange(1, rep.Head)
	must(t, err)
	for _, r := range inLog {
		if r.seq <= segs[1].Last && !(r.seq >= segs[1].First) {
			t.Fatalf("record %d is in log.db below the kept segment %d..%d", r.seq, segs[1].First, segs[1].Last)
		}
	}
}

// TestI38_ReadsSkipARecordOfAKeptSegmentThatASalvageCountedLost: a kept
// segment cannot drop a record, so one a salvage counted lost (an
// effect.queued whose commit's values were in a lost segment: reading it
// failed event_payload_malformed, and so did replay and the rebuild at
// open) is skipped by sequential reads, as log.db's lost records are.
func TestI38_ReadsSkipARecordOfAKeptSegmentThatASalvageCountedLost(t *testing.T) {
	src, all, segs := sealedClosedLog(t)
	gone := segs[1].First + 1
	l, err := OpenLog(src, Options{})
	must(t, err)
	must(t, l.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(metaSalvageLost, []byte(strconv.FormatUint(gone, 10)))
	}))
	got := readAll(t, l, 1)
	must(t, l.Close())
	if len(got) != len(all) { // one skipped; closing the writer appended its lease's release
		t.Fatalf("read %d events, want %d", len(got), len(all))
	}
	for _, e := range got {
		if e.Seq == gone {
			t.Fatalf("seq %d, counted lost, was read", gone)
		}
	}
}
