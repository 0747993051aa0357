package observe_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/observe"
)

const mib = 1 << 20

// openOnDisk opens a store whose filesystem is probe, on clock.
func openOnDisk(t *testing.T, m *observe.Metrics, probe hikoutei.DiskProbe, clock events.Clock) *hikoutei.Store {
	t.Helper()
	o := hikoutei.Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, Observer: m, DiskProbe: probe,
		NATS: &hikoutei.NATSOptions{Disabled: true}, Logger: quietLogger()}
	s, err := hikoutei.Open(t.Context(), t.TempDir(), o, hikoutei.Entity[airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	m.Watch(s)
	return s
}

// healthz is the store's /healthz answer.
func healthz(t *testing.T, s *hikoutei.Store) (int, observe.HealthReport) {
	t.Helper()
	rec := httptest.NewRecorder()
	observe.HealthHandler(s).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	var r observe.HealthReport
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return rec.Code, r
}

// The store's hot log, sealed segments and filesystem space are gauges.
func TestMetricsShowTheStoresDisk(t *testing.T) {
	m := observe.New()
	probe := hikouteitest.NewDisk(50*mib, 100*mib)
	s := openOnDisk(t, m, probe, events.NewManualClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)))
	for _, id := range []string{"LAX", "SFO", "JFK"} {
		commit(t, s, airport{ID: id, Name: id})
	}
	if _, err := s.Seal(ctx, hikoutei.SealOptions{Keep: 2, MinBatch: 1}); err != nil {
		t.Fatal(err)
	}
	fams := gather(t, m)
	if v := value(fams, "hikoutei_log_bytes"); v <= 0 {
		t.Fatalf("hikoutei_log_bytes = %v", v)
	}
	if v := value(fams, "hikoutei_sealed_segments"); v != 1 {
		t.Fatalf("hikoutei_sealed_segments = %v, want 1", v)
	}
	if v := value(fams, "hikoutei_sealed_segment_bytes"); v <= 0 {
		t.Fatalf("hikoutei_sealed_segment_bytes = %v", v)
	}
	if a, z := value(fams, "hikoutei_filesystem_avail_bytes"), value(fams, "hikoutei_filesystem_size_bytes"); a != 50*mib || z != 100*mib {
		t.Fatalf("filesystem avail %v size %v", a, z)
	}
	if v := value(fams, "hikoutei_health_fault", "part=disk"); v != -1 {
		t.Fatalf("a disk with room reported a fault (%v)", v)
	}
}

// A disk that fills within the horizon at the store's growth (measured
// on the store's clock) warns with disk_filling and when it fills,
// /healthz still 200; a nearly full one is disk_full and fails /healthz.
func TestHealthWarnsBeforeTheDiskHoldingTheStoreIsFull(t *testing.T) {
	m := observe.New()
	probe := hikouteitest.NewDisk(20*mib, 100*mib)
	clock := events.NewManualClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	s := openOnDisk(t, m, probe, clock)
	before, err := s.Disk()
	if err != nil || before.Warning != nil {
		t.Fatalf("at open: %+v, %v", before, err)
	}
	for i := range 300 {
		commit(t, s, airport{ID: string(rune('A'+i%26)) + string(rune('A'+i/26)), Name: "x"})
	}
	clock.Advance(time.Hour)
	code, r := healthz(t, s)
	after := s.Health().DiskUsage
	if after == nil || after.LogBytes+after.ReadModelBytes <= before.LogBytes+before.ReadModelBytes {
		t.Fatalf("the store did not grow: %+v then %+v", before, after)
	}
	if code != 200 || r.DiskCode != "disk_filling" || r.DiskFullAt == nil || r.Status != "ok" {
		t.Fatalf("growing store: %d %+v", code, r)
	}
	if in := r.DiskFullAt.Sub(clock.Now()); in <= 0 || in > 7*24*time.Hour {
		t.Fatalf("full in %v, want within the horizon", in)
	}
	probe.Set(mib, 100*mib)
	if code, r = healthz(t, s); code != 503 || r.DiskCode != "disk_full" || r.Status != "failing" {
		t.Fatalf("nearly full: %d %+v", code, r)
	}
	if v := value(gather(t, m), "hikoutei_health_fault", "part=disk", "code=disk_full"); v != 1 {
		t.Fatalf("hikoutei_health_fault{part=disk} = %v", v)
	}
}

// Read models the store set aside are gauges and a notice of /healthz
// (read_model_set_aside), which stays 200.
func TestMetricsAndHealthShowTheSetAsideReadModels(t *testing.T) {
	m := observe.New()
	s := openOnDisk(t, m, hikouteitest.NewDisk(50*mib, 100*mib), events.NewManualClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)))
	if v := value(gather(t, m), "hikoutei_read_model_set_aside_copies"); v != 0 {
		t.Fatalf("hikoutei_read_model_set_aside_copies = %v before any, want 0", v)
	}
	at := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	for name, n := range map[string]int{"read.sqlite.unusable-20261101T080000.000000000Z": 300,
		"read.sqlite.unusable-20261101T080000.000000000Z-wal": 20, "read.sqlite.before-rebuild-20261120T080000.000000000Z": 400} {
		if err := os.WriteFile(filepath.Join(s.Dir(), name), make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fams := gather(t, m)
	for name, want := range map[string]float64{"hikoutei_read_model_set_aside_copies": 2, "hikoutei_read_model_set_aside_bytes": 720,
		"hikoutei_read_model_set_aside_oldest_timestamp_seconds": float64(at.Unix())} {
		if v := value(fams, name); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	code, r := healthz(t, s)
	if code != 200 || r.SetAsideCode != "read_model_set_aside" || r.SetAside == "" {
		t.Fatalf("healthz = %d, set_aside %q (%q); want 200 with read_model_set_aside", code, r.SetAside, r.SetAsideCode)
	}
}
