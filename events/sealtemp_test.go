package events

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestI38_AKillDuringASegmentWriteLeavesNoTempFileAfterTheNextOpen pins
// what the crash campaign found with background seals: a kill inside
// segstore.Dir.Put (seal.after_write, or any instant before the rename)
// left NAME.seg.zst.tmp in the segments folder, and only a later seal of
// exactly the same records would ever overwrite it; a retention policy's
// next seal covers another range, so the file stayed for good. The next
// writer removes it; a complete file no seal vouches for is left alone
// (listed as stray).
func TestI38_AKillDuringASegmentWriteLeavesNoTempFileAfterTheNextOpen(t *testing.T) {
	w := sealWriter(t, 50)
	dir := filepath.Dir(w.Log().Path())
	must(t, w.Close())
	segs := filepath.Join(dir, SegmentsDir)
	must(t, os.MkdirAll(segs, 0o700))
	tmp := filepath.Join(segs, segmentName(1, 20, ChainHash{}, ChainHash{})+".tmp")
	stray := filepath.Join(segs, segmentName(1, 21, ChainHash{}, ChainHash{}))
	for _, f := range []string{tmp, stray} {
		must(t, os.WriteFile(f, []byte("partial"), 0o600))
	}
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer w.Close()
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the temporary file of a killed segment write is still there: %v", err)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatalf("a complete stray segment was removed: %v", err)
	}
}

// TestI38_ASealRemovesTheStrayFileOfAnEarlierSealThatStartedAtTheSameRecord
// pins what the crash campaign found with background seals: a kill after
// a seal stored its segment and before it committed (seal.after_sync,
// seal.after_read_back, seal.before_commit) left a complete file no seal
// vouches for, and only a seal of exactly the same records replaced it;
// a retention policy's next seal starts at the same record but ends
// elsewhere, so 16 such files stayed in a 200-kill campaign. The next
// seal that commits from that record removes them; a file that starts
// elsewhere is left alone.
func TestI38_ASealRemovesTheStrayFileOfAnEarlierSealThatStartedAtTheSameRecord(t *testing.T) {
	w := sealWriter(t, 200)
	segs := filepath.Join(filepath.Dir(w.Log().Path()), SegmentsDir)
	must(t, os.MkdirAll(segs, 0o700))
	same := filepath.Join(segs, segmentName(1, 180, Genesis(w.Log().StoreID()), ChainHash{}))
	other := filepath.Join(segs, segmentName(2, 180, ChainHash{}, ChainHash{}))
	for _, f := range []string{same, other} {
		must(t, os.WriteFile(f, []byte("an uncommitted seal's segment"), 0o600))
	}
	rep, err := w.Log().Seal(w.Fence(), 230)
	must(t, err)
	if _, err := os.Stat(same); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the stray segment of an uncommitted seal from seq 1 is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a stray segment starting elsewhere was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(segs, rep.Segment.Name)); err != nil {
		t.Fatalf("the new segment: %v", err)
	}
	fullVerify(t, w.Log(), nil)
}

// TestI38_ASealLeavesAnotherStoresSegmentFromTheSameRecordAlone: two
// stores pointed at one folder both seal from seq 1; the second seal took
// the first store's segment for a stray of its own and deleted it (its
// 20,619 records, gone from that store's log.db, were lost). Only a file
// whose chain starts from this log's first link is removed.
func TestI38_ASealLeavesAnotherStoresSegmentFromTheSameRecordAlone(t *testing.T) {
	w := sealWriter(t, 200)
	segs := filepath.Join(filepath.Dir(w.Log().Path()), SegmentsDir)
	must(t, os.MkdirAll(segs, 0o700))
	theirs := filepath.Join(segs, segmentName(1, 180, Genesis("another-store"), ChainHash{}))
	must(t, os.WriteFile(theirs, []byte("another store's sealed segment"), 0o600))
	_, err := w.Log().Seal(w.Fence(), 230)
	must(t, err)
	if _, err := os.Stat(theirs); err != nil {
		t.Fatalf("another store's segment from seq 1 was removed: %v", err)
	}
}
