package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// --segments file:///FOLDER keeps a store's segments outside it: seal
// writes there, status says where they live and counts them, audit
// verify, doctor, replay, backup and restore read them there, and
// without the flag the walk says which segment is missing.
func TestI38_SegmentsFlagKeepsSegmentsElsewhereAndEveryCommandReadsThem(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 40)
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	away := filepath.Join(t.TempDir(), "segs")
	url := "file://" + away
	code, out, errOut := runSplit("seal", "--dir", dir, "--keep", "5", "--min-batch", "1", "--segments", url, "--json")
	var rep sealJSON
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Records == 0 {
		t.Fatalf("seal --segments: exit %d:\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(away, rep.Segment)); err != nil {
		t.Fatalf("the segment is not in the folder --segments names: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, events.SegmentsDir)); !os.IsNotExist(err) {
		t.Fatalf("the seal wrote into the store's folder: %v", err)
	}
	code, out, errOut = runSplit("status", "--dir", dir, "--segments", url, "--json")
	var st struct {
		Disk diskStatus `json:"disk"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || st.Disk.Segments != 1 || st.Disk.SegmentsDir != away ||
		st.Disk.SegmentsScheme != "dir" || st.Disk.SegmentBytes != rep.Bytes {
		t.Fatalf("status --segments: exit %d: %+v\n%s%s", code, st.Disk, out, errOut)
	}
	for _, args := range [][]string{{"audit", "verify", "--dir", dir}, {"doctor", "--dir", dir}, {"audit", "--dir", dir, "--to", "3"},
		{"replay", "--dir", dir, "--out", filepath.Join(t.TempDir(), "r.sqlite")}} {
		if code, out := runCLI(t, append(args, "--segments", url)...); code != exitOK {
			t.Fatalf("%v --segments: exit %d:\n%s", args, code, out)
		}
	}
	if code, out := runCLI(t, "audit", "verify", "--dir", dir); code == exitOK || !strings.Contains(out, "segment_missing") || !strings.Contains(out, rep.Segment) {
		t.Fatalf("audit verify without --segments: exit %d:\n%s", code, out)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if code, out := runCLI(t, "backup", "--dir", dir, "--out", backup, "--segments", url); code != exitOK || !strings.Contains(out, "1 sealed segments copied") {
		t.Fatalf("backup --segments: exit %d:\n%s", code, out)
	}
	into := filepath.Join(t.TempDir(), "restored-segs")
	restored := filepath.Join(t.TempDir(), "new")
	if code, out := runCLI(t, "restore", "--from", backup, "--to", restored, "--segments", "file://"+into); code != exitOK {
		t.Fatalf("restore --segments: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(into, rep.Segment)); err != nil {
		t.Fatalf("restore did not put the segment where --segments says: %v", err)
	}
}

func TestSegmentsFlagRefusesABadURLWithoutRepeatingIt(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 3)
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"file:relative?token=hunter2", "no-scheme-hunter2"} {
		code, out := runCLI(t, "seal", "--dir", dir, "--keep", "1", "--segments", bad)
		if code != exitUsage || !strings.Contains(out, "invalid_segments_url") || strings.Contains(out, "hunter2") {
			t.Fatalf("seal --segments %q: exit %d:\n%s", bad, code, out)
		}
	}
	code, out := runCLI(t, "seal", "--dir", dir, "--keep", "1", "--segments", "s3://bucket/prefix")
	if code == exitOK || !strings.Contains(out, "segment_store_unavailable") || !strings.Contains(out, "s3") {
		t.Fatalf("seal --segments s3:// without the driver linked: exit %d:\n%s", code, out)
	}
}

// downSegments is a segment store whose reads fail while down.
type downSegments struct {
	segstore.Store
	down atomic.Bool
}

func (d *downSegments) Get(ctx context.Context, name string) ([]byte, error) {
	if d.down.Load() {
		return nil, fmt.Errorf("%w: get %s: connection refused", segstore.ErrUnavailable, name)
	}
	return d.Store.Get(ctx, name)
}

// status of a running store shows where its segments live (without
// --segments: the running store says) and that the store holding them
// does not answer, with its code.
func TestI38_StatusOfARunningStoreShowsWhereSegmentsLiveAndAnUnreachableStore(t *testing.T) {
	t.Parallel()
	dir := storeWithItems(t, 40)
	away := filepath.Join(t.TempDir(), "segs")
	segs := &downSegments{Store: segstore.NewDir(away)}
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Operation: "status-test", SegmentStore: segs}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Seal(t.Context(), hikoutei.SealOptions{Keep: 5, MinBatch: 1}); err != nil {
		t.Fatal(err)
	}
	segs.down.Store(true)
	for _, err := range s.Events(t.Context(), 1) {
		if !errors.Is(err, hikoutei.ErrSegmentStoreUnavailable) {
			t.Fatalf("Events(1) while the store is down: %v", err)
		}
		break
	}
	code, out := runCLIWithin(t, "status", "--dir", dir, "--json")
	var st struct {
		Disk                    diskStatus `json:"disk"`
		SegmentsUnreachableCode string     `json:"segments_unreachable_code"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || st.Disk.SegmentsDir != away || st.Disk.SegmentsScheme != "dir" ||
		st.SegmentsUnreachableCode != "segment_store_unavailable" {
		t.Fatalf("status of the running store: exit %d:\n%s", code, out)
	}
}

// TestI38_AnInMemoryBucketIsRefusedBeforeASealMovesAnything: every
// process starts a mem:// bucket empty, so `seal --segments mem://`
// removed the records from log.db into a bucket gone at the command's
// exit (audit verify then failed segment_missing for good). Every command
// refuses it with a usage error, and the log keeps every record.
func TestI38_AnInMemoryBucketIsRefusedBeforeASealMovesAnything(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 40)
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"seal", "--dir", dir, "--keep", "5"}, {"status", "--dir", dir},
		{"audit", "verify", "--dir", dir}, {"compact", "--dir", dir}} {
		code, out, errOut := runSplit(append(args, "--segments", "mem://")...)
		if code != exitUsage || !strings.Contains(errOut, "invalid_segments_url") {
			t.Fatalf("%v --segments mem://: exit %d, want %d:\n%s%s", args, code, exitUsage, out, errOut)
		}
	}
	code, out := runCLI(t, "audit", "verify", "--dir", dir)
	if code != exitOK || strings.Contains(out, "segment") {
		t.Fatalf("audit verify after the refused seal: exit %d:\n%s", code, out)
	}
}

// TestI38_AuditVerifyAndDoctorNameAStraySegment: a file in the segments
// folder that no seal of the store vouches for (another store's, a seal
// that did not commit) is ignored by readers; audit verify (text and
// --json) and doctor (a warning, exit 0) name it instead of keeping quiet.
func TestI38_AuditVerifyAndDoctorNameAStraySegment(t *testing.T) {
	t.Parallel()
	dir := sealedItemStore(t)
	stray := "00000000000000000001-00000000000000000009-0123456789abcdef-fedcba9876543210.seg.zst"
	if err := os.WriteFile(filepath.Join(dir, events.SegmentsDir, stray), []byte("another store's segment"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, "audit", "verify", "--dir", dir); code != exitOK || !strings.Contains(out, "stray segment") || !strings.Contains(out, stray) {
		t.Fatalf("audit verify: exit %d:\n%s", code, out)
	}
	code, out, errOut := runSplit("audit", "verify", "--dir", dir, "--json")
	var rep struct {
		Segments int      `json:"segments"`
		Stray    []string `json:"stray"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Segments != 1 || len(rep.Stray) != 1 || rep.Stray[0] != stray {
		t.Fatalf("audit verify --json: exit %d: %+v\n%s%s", code, rep, out, errOut)
	}
	if code, out := runCLI(t, "doctor", "--dir", dir); code != exitOK || !strings.Contains(out, "warn") || !strings.Contains(out, stray) {
		t.Fatalf("doctor: exit %d:\n%s", code, out)
	}
}
