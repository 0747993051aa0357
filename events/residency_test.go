package events

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rssFileKB is this process's file-backed resident set (RssFile), in kB.
func rssFileKB(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	t.Skip("no RssFile")
	return 0
}

// Reading a large log through its memory map makes its pages resident;
// ReleaseMapped drops them from this process's resident set without losing
// anything: the log still reads back whole.
func TestReleaseMappedDropsResidentPagesOfTheLog(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	l, err := OpenLog(filepath.Join(t.TempDir(), LogFileName), Options{Clock: NewManualClock(t0), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f := acquire(t, l, "w1").Fence()
	big := strings.Repeat("x", 4000)
	for i := range 40 { // 40 × 256 events × 4 kB ≈ 40 MB
		var evs []Event
		for range 256 {
			evs = append(evs, Event{Payload: SyncDiverged{Target: "blob", Reason: big}})
		}
		if _, err := l.Append(f, Unit{Streams: []StreamAppend{{Stream: "s" + strconv.Itoa(i), Events: evs}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	before := rssFileKB(t)
	n := 0
	if err := l.ReadFrom(1, func(e Event) error { n += count(e.Type() == TypeSyncDiverged); return nil }); err != nil || n != 40*256 {
		t.Fatalf("read %d events: %v", n, err)
	}
	touched := rssFileKB(t)
	if err := l.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	released := rssFileKB(t)
	if touched-before < 20<<10 || touched-released < 20<<10 {
		t.Fatalf("RssFile %d kB → read %d kB → released %d kB; want a >20 MB rise and fall", before, touched, released)
	}
	var again bytes.Buffer
	err = l.ReadFrom(1, func(e Event) error {
		if p, ok := e.Payload.(SyncDiverged); ok {
			again.WriteString(p.Reason)
		}
		return nil
	})
	if err != nil || again.Len() != 40*256*len(big) {
		t.Fatalf("after release: %d bytes read back, %v", again.Len(), err)
	}
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}
