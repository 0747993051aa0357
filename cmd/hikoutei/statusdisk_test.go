package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/disk"
)

// status --json of a sealed store shows the hot log's size, the sealed
// segments (count, bytes, folder) and the filesystem's space.
func TestStatusShowsTheDiskOfASealedStore(t *testing.T) {
	dir := sealedItemStore(t)
	code, out := runCLI(t, "status", "--dir", dir, "--json")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var st struct{ Disk diskStatus }
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	d := st.Disk
	if d.LogBytes <= 0 || d.Segments != 1 || d.SegmentBytes <= 0 || d.SegmentsDir != "segments" || d.ReadModelBytes <= 0 {
		t.Fatalf("disk = %+v\n%s", d, out)
	}
	if d.FSSpace != "unknown" && (d.FSTotalBytes == nil || d.FSFreeBytes == nil || *d.FSTotalBytes == 0) {
		t.Fatalf("filesystem space missing: %s", out)
	}
	code, out = runCLI(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, " 1 in segments/, ") || !strings.Contains(out, "hot log") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// A nearly full filesystem shows in status with its reason code: a
// warning above 90 % used, disk_full above 98 %.
func TestStatusWarnsOfANearlyFullDisk(t *testing.T) {
	dir := sealedItemStore(t)
	probe := disk.NewFixed(disk.Space{Free: 5 << 20, Total: 100 << 20})
	for _, c := range []struct {
		free uint64
		code string
	}{{50 << 20, ""}, {5 << 20, "disk_filling"}, {1 << 20, "disk_full"}} {
		probe.Set(disk.Space{Free: c.free, Total: 100 << 20})
		d, err := readDisk(dir, probe, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if d.Code != c.code {
			t.Fatalf("free %d: code %q, want %q (%s)", c.free, d.Code, c.code, d.Warning)
		}
		var buf bytes.Buffer
		printDisk(&buf, d)
		if c.code != "" && !strings.Contains(buf.String(), "DISK\t"+c.code+": ") {
			t.Fatalf("free %d: text\n%s", c.free, buf.String())
		}
	}
}

// A sealed segment renamed in the folder of a stopped store: status
// counts the vouched segments apart from the stray and names the missing
// one (segment_missing in the text); the stray's bytes are not counted
// as the segments'.
func TestStatusCountsVouchedSegmentsApartFromStrays(t *testing.T) {
	dir := sealedItemStore(t)
	folder := filepath.Join(dir, "segments")
	entries, err := os.ReadDir(folder)
	if err != nil || len(entries) != 1 {
		t.Fatalf("segments: %v %v", entries, err)
	}
	name := entries[0].Name()
	if err := os.Rename(filepath.Join(folder, name), filepath.Join(folder, "stray-"+name)); err != nil {
		t.Fatal(err)
	}
	_, out := runCLI(t, "status", "--dir", dir, "--json")
	var st struct{ Disk diskStatus }
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	// the stray's bytes are not the vouched segments' (segment_bytes: their total)
	if d := st.Disk; d.Segments != 0 || d.SegmentBytes != 0 || d.SegmentStrays != 1 || len(d.SegmentsMissing) != 1 ||
		d.SegmentsMissing[0] != name {
		t.Fatalf("disk = %+v", d)
	}
	_, out = runCLI(t, "status", "--dir", dir)
	if !strings.Contains(out, "SEGMENTS MISSING") || !strings.Contains(out, name) || !strings.Contains(out, " 0 in segments/") {
		t.Fatalf("status:\n%s", out)
	}
}
