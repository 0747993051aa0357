package doctor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// store writes a closed store whose log holds the lease events and 20
// sync.diverged records (seq 2..21), and returns its dir.
func store(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w, err := events.OpenWriter(dir, events.WriterOptions{Operation: "test", HeartbeatInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		_, err := w.Append(events.Unit{Streams: []events.StreamAppend{{Stream: events.SyncStream("t"), ExpectedVersion: events.AnyVersion,
			Events: []events.Event{{Payload: events.SyncDiverged{Target: "t", Reason: strings.Repeat("r", i+1)}}}}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// flip changes a byte in every copy of the records whose reason is one of
// reasons (runs of "r": a match must not be part of a longer run).
func flip(t *testing.T, dir string, reasons ...string) {
	t.Helper()
	path := filepath.Join(dir, events.LogFileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reasons {
		needle, n := []byte(r), 0
		for off := 0; ; {
			i := bytes.Index(data[off:], needle)
			if i < 0 {
				break
			}
			end := off + i + len(r)
			if end < len(data) && data[end] != 'r' && (off+i == 0 || data[off+i-1] != 'r') {
				data[off+i] ^= 0x01
				n++
			}
			off = end
		}
		if n == 0 {
			t.Fatalf("reason of %d bytes not found", len(r))
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestI27_DoctorReportsEveryCorruptRecordAsDamage(t *testing.T) {
	dir := store(t)
	flip(t, dir, "rrr", "rrrr", "rrrrrrrrrr") // seqs 4, 5 and 11
	r := Check(dir)
	if r.Healthy() || !r.Damaged() {
		t.Fatalf("report %+v", r)
	}
	var found bool
	for _, f := range r.Findings {
		if f.Severity == Fail && f.Code == events.ErrCorruptRecord.Error() && strings.HasSuffix(f.Detail, "seq 4-5, 11") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no finding names seq 4-5, 11: %+v", r.Findings)
	}
}

func TestI27_DoctorReportsATruncatedLogAsDamage(t *testing.T) {
	dir := store(t)
	path := filepath.Join(dir, events.LogFileName)
	if err := os.Truncate(path, 8192); err != nil {
		t.Fatal(err)
	}
	r := Check(dir)
	if !r.Damaged() || r.Findings[1].Code != events.ErrLogCorrupt.Error() || !strings.Contains(r.Findings[1].Detail, "truncated") {
		t.Fatalf("report %+v", r.Findings)
	}
}

func TestDoctorHealthyStoreIsNotDamaged(t *testing.T) {
	r := Check(store(t))
	if !r.Healthy() || r.Damaged() {
		t.Fatalf("report %+v", r.Findings)
	}
}
