package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// seal of a closed store moves its older records into a segment; audit
// verify walks from the first record across it, closed and running (a
// copy of the log beside the segments); a running store refuses seal.
func TestI38_SealCommandSealsAClosedStoreAndAuditVerifyWalksAcrossTheSegment(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 40)
	dir := s.Dir()
	if code, out := runCLI(t, "seal", "--dir", dir, "--keep", "5"); code == exitOK || !strings.Contains(out, "store_locked") {
		t.Fatalf("seal of a running store: exit %d:\n%s", code, out)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runSplit("seal", "--dir", dir, "--keep", "5", "--min-batch", "1", "--json")
	var rep sealJSON
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.First != 1 || rep.Records == 0 || rep.Seq != rep.Last+6 {
		t.Fatalf("seal --keep 5: exit %d:\n%s%s", code, out, errOut)
	}
	code, out = runCLI(t, "audit", "verify", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "head") {
		t.Fatalf("audit verify after the seal: exit %d:\n%s", code, out)
	}
	if code, out = runCLI(t, "doctor", "--dir", dir); code != exitOK {
		t.Fatalf("doctor after the seal: exit %d:\n%s", code, out)
	}
	if code, out = runCLI(t, "seal", "--dir", dir); code != exitUsage {
		t.Fatalf("seal without --below or --keep: exit %d:\n%s", code, out)
	}
	running, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Operation: "seal-test"}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	code, text := runCLIWithin(t, "audit", "verify", "--dir", dir)
	if code != exitOK || !strings.Contains(text, "verified a copy of its log") {
		t.Fatalf("audit verify of the running sealed store: exit %d:\n%s", code, text)
	}
}

// seal --keep 0 keeps no record back: it seals up to the head, its
// segment.sealed the next record; --below 0 names no record and is a
// usage error that says so, as is giving both flags.
func TestSealKeepZeroSealsUpToTheHeadAndBelowZeroIsRefused(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 40)
	for _, args := range [][]string{{"--below", "0"}, {"--below", "5", "--keep", "0"}} {
		code, out := runCLI(t, append([]string{"seal", "--dir", dir}, args...)...)
		if code != exitUsage || !strings.Contains(out, "--below") {
			t.Fatalf("seal %v: exit %d:\n%s", args, code, out)
		}
	}
	if _, out := runCLI(t, "seal", "--dir", dir, "--below", "0"); !strings.Contains(out, "--below 0 names no record") {
		t.Fatalf("seal --below 0:\n%s", out)
	}
	code, out, errOut := runSplit("seal", "--dir", dir, "--keep", "0", "--min-batch", "1", "--json")
	var rep sealJSON
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.First != 1 || rep.Seq != rep.Last+1 || rep.Skipped {
		t.Fatalf("seal --keep 0: exit %d:\n%s%s", code, out, errOut)
	}
}

// seal --keep N moves at least --min-batch records (by default
// DefaultRetentionMinBatch, the background seal's batch): with fewer to
// move, as when it runs again soon after a seal (the few records since),
// it seals nothing and says so (exit 0) instead of writing a tiny
// segment; --min-batch 1 seals whatever may go. --below names its point
// and takes no minimum.
func TestSealKeepSealsNothingBelowTheMinimumBatch(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 40)
	code, out := runCLI(t, "seal", "--dir", dir, "--keep", "0")
	if code != exitOK || !strings.Contains(out, "nothing sealed") || !strings.Contains(out, "--min-batch 10000") {
		t.Fatalf("seal --keep 0 of a small store: exit %d:\n%s", code, out)
	}
	if segs, _ := os.ReadDir(filepath.Join(dir, events.SegmentsDir)); len(segs) != 0 {
		t.Fatalf("a seal below the minimum batch wrote %d segment(s)", len(segs))
	}
	code, out, errOut := runSplit("seal", "--dir", dir, "--keep", "0", "--min-batch", "0", "--json")
	var zero sealJSON
	if code != exitOK || json.Unmarshal([]byte(out), &zero) != nil || !zero.Skipped || zero.MinBatch != hikoutei.DefaultRetentionMinBatch {
		t.Fatalf("seal --min-batch 0 (the default batch, as the background seal's 0): exit %d:\n%s%s", code, out, errOut)
	}
	if code, out = runCLI(t, "seal", "--dir", dir, "--keep", "0", "--min-batch", "1"); code != exitOK || !strings.Contains(out, "sealed seqs 1..") {
		t.Fatalf("seal --keep 0 --min-batch 1: exit %d:\n%s", code, out)
	}
	code, out, errOut = runSplit("seal", "--dir", dir, "--keep", "0", "--min-batch", "20", "--json")
	var rep sealJSON
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || !rep.Skipped || rep.Segment != "" || rep.Last < rep.First ||
		rep.Last-rep.First+1 >= 20 || rep.MinBatch != 20 {
		t.Fatalf("seal --keep 0 again soon after: exit %d:\n%s%s", code, out, errOut)
	}
	if segs, _ := os.ReadDir(filepath.Join(dir, events.SegmentsDir)); len(segs) != 1 {
		t.Fatalf("%d segments after a seal and a seal below the minimum, want 1", len(segs))
	}
	if code, out = runCLI(t, "seal", "--dir", dir, "--below", "5", "--min-batch", "20"); code != exitUsage || !strings.Contains(out, "--min-batch") {
		t.Fatalf("seal --below with --min-batch: exit %d:\n%s", code, out)
	}
	below := strconv.FormatUint(rep.Last+1, 10)
	if code, out = runCLI(t, "seal", "--dir", dir, "--below", below); code != exitOK || !strings.Contains(out, "sealed seqs") {
		t.Fatalf("seal --below %s of the few records since: exit %d:\n%s", below, code, out)
	}
}

// backup of a sealed store writes its segments beside the file; restore
// puts them back and verifies them, and refuses a backup lacking one,
// naming it, leaving nothing behind.
func TestI38_BackupAndRestoreOfASealedStoreCarryItsSegments(t *testing.T) {
	t.Parallel()
	dir := sealedItemStore(t)
	out := filepath.Join(t.TempDir(), "backup.db")
	if code, text := runCLI(t, "backup", "--dir", dir, "--out", out); code != exitOK || !strings.Contains(text, "1 sealed segments copied") {
		t.Fatalf("backup: exit %d:\n%s", code, text)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if code, text := runCLI(t, "restore", "--from", out, "--to", restored); code != exitOK || !strings.Contains(text, "1 sealed segments restored") {
		t.Fatalf("restore: exit %d:\n%s", code, text)
	}
	if code, text := runCLI(t, "audit", "verify", "--dir", restored); code != exitOK {
		t.Fatalf("audit verify of the restored store: exit %d:\n%s", code, text)
	}
	segs, err := os.ReadDir(events.BackupSegmentsDir(out))
	if err != nil || len(segs) != 1 {
		t.Fatalf("the backup's segments: %v %v", segs, err)
	}
	if err := os.Remove(filepath.Join(events.BackupSegmentsDir(out), segs[0].Name())); err != nil {
		t.Fatal(err)
	}
	lacking := filepath.Join(t.TempDir(), "lacking")
	code, text := runCLI(t, "restore", "--from", out, "--to", lacking)
	if code == exitOK || !strings.Contains(text, "segment_missing") || !strings.Contains(text, segs[0].Name()) {
		t.Fatalf("restore of a backup lacking its segment: exit %d:\n%s", code, text)
	}
	if _, err := os.Stat(lacking); !os.IsNotExist(err) {
		t.Fatalf("a refused restore left %s: %v", lacking, err)
	}
}

// salvage of a sealed store keeps the segments that verify; one it could
// not verify is named and its records reported lost.
func TestI38_SalvageOfASealedStoreKeepsItsSegmentsOrNamesTheOnesItCouldNot(t *testing.T) {
	t.Parallel()
	dir := sealedItemStore(t)
	to := filepath.Join(t.TempDir(), "salvaged")
	if code, out := runCLI(t, "salvage", "--from", dir, "--to", to); code != exitOK || !strings.Contains(out, "sealed segments kept") {
		t.Fatalf("salvage: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "audit", "verify", "--dir", to); code != exitOK {
		t.Fatalf("audit verify of the salvaged store: exit %d:\n%s", code, out)
	}
	segs, err := os.ReadDir(filepath.Join(dir, events.SegmentsDir))
	if err != nil || len(segs) != 1 {
		t.Fatalf("segments: %v %v", segs, err)
	}
	if err := os.Remove(filepath.Join(dir, events.SegmentsDir, segs[0].Name())); err != nil {
		t.Fatal(err)
	}
	to = filepath.Join(t.TempDir(), "without")
	code, out := runCLI(t, "salvage", "--from", dir, "--to", to)
	if code != exitDamage || !strings.Contains(out, "not kept") || !strings.Contains(out, segs[0].Name()) || !strings.Contains(out, "segment_missing") {
		t.Fatalf("salvage without the segment: exit %d:\n%s", code, out)
	}
}

// closedStoreOf is the folder of a closed store of n items.
func closedStoreOf(t *testing.T, n int) string {
	t.Helper()
	s := openItemStore(t, n)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Dir()
}

// sealedItemStore is a closed store of 40 items whose records, all but
// the last 5, were sealed through the CLI.
func sealedItemStore(t *testing.T) string {
	t.Helper()
	dir := closedStoreOf(t, 40)
	if code, out := runCLI(t, "seal", "--dir", dir, "--keep", "5", "--min-batch", "1"); code != exitOK {
		t.Fatalf("seal: exit %d:\n%s", code, out)
	}
	return dir
}

// A --min-batch too big to add to a sequence seals nothing: the count of
// records that may go is compared, not first+M (which wrapped past
// 2^64 and sealed every record).
func TestSealKeepWithTheLargestMinimumBatchSealsNothing(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 20)
	code, out := runCLI(t, "seal", "--dir", dir, "--keep", "0", "--min-batch", "18446744073709551615")
	if code != exitOK || !strings.Contains(out, "nothing sealed") {
		t.Fatalf("seal --keep 0 --min-batch 2^64-1: exit %d:\n%s", code, out)
	}
	if segs, _ := os.ReadDir(filepath.Join(dir, events.SegmentsDir)); len(segs) != 0 {
		t.Fatalf("a seal below the largest minimum batch wrote %d segment(s)", len(segs))
	}
}

// A seal with no record left that may go says only that: it suggests no
// --min-batch 1, which would be refused (seal_refused).
func TestSealKeepWithNoRecordToMoveSuggestsNothing(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 20)
	code, out := runCLI(t, "seal", "--dir", dir, "--keep", "100000")
	if code != exitOK || !strings.Contains(out, "nothing sealed: no record may go") || strings.Contains(out, "--min-batch 1") {
		t.Fatalf("seal --keep past the head: exit %d:\n%s", code, out)
	}
}
