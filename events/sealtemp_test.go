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
