package bench

import (
	"syscall"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Idle cost (row 11): what a store with nothing to do costs in CPU.
//
// One op is one idle minute of `hikoutei serve` at the default cadences,
// its passes run back to back: one inbound poll (60 s), one safety full
// scan (60 s), two surplus-row cleanups and two reconciliations with
// anti-entropy (30 s), and sixty dispatcher passes (1 s); the full scan
// and one cleanup share their grid read, as serve's poller does. cpu-s/min is
// the median over the ops of this process's CPU time (user + system,
// getrusage) over one such minute. The store is the first
// HIKOUTEI_BENCH_INBOUND_ROWS cities synced to both tabs (not timed) and
// one idle minute runs before the measured ones (the first passes after
// a change decide every row; an idle store is past them). With
// HIKOUTEI_BENCH_EMULATOR (as the runner serves it) the emulator's CPU is
// not in the figure.

// idleMinute runs one idle minute's passes as serve runs them: the full
// scan and one of the cleanups, due together, share one grid read
// (Poller.ScanAndCleanup).
func idleMinute(b *testing.B, s *hikoutei.Store, h *hikouteitest.Harness) {
	b.Helper()
	if r, err := h.Poll(ctx); err != nil || r.Escalated != 0 {
		b.Fatalf("idle poll: %+v %v", r, err)
	}
	_, p, _ := engine.Of(s).Workers()
	if r, n, err := p.ScanAndCleanup(ctx); err != nil || r.Stats.Events != 0 || n != 0 {
		b.Fatalf("idle full scan and cleanup: %+v %d %v", r, n, err)
	}
	if n, err := h.Cleanup(ctx); err != nil || n != 0 {
		b.Fatalf("idle cleanup: %d %v", n, err)
	}
	for range 2 {
		if _, err := h.Reconcile(ctx); err != nil {
			b.Fatalf("idle reconciliation: %v", err)
		}
	}
	for range 60 {
		if _, err := h.Dispatch(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if n := h.Unsettled(); n != 0 {
		b.Fatalf("an idle minute queued %d effects", n)
	}
}

// cpuTime is this process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleMinute reports cpu-s/min, the CPU one idle minute of
// passes costs (see above).
func BenchmarkIdleMinute(b *testing.B) {
	e := plainEmulator(b, "bench-idle")
	defer e.closer()
	s, h := syncNotedCities(b, e)
	defer s.Close()
	idleMinute(b, s, h) // not measured
	var cpu []float64
	for b.Loop() {
		c0 := cpuTime(b)
		idleMinute(b, s, h)
		cpu = append(cpu, (cpuTime(b) - c0).Seconds())
	}
	b.ReportMetric(median(cpu), "cpu-s/min")
}

// BenchmarkRawIdleMinute: the floor under BenchmarkIdleMinute — one raw
// values.batchGet a minute of a tab showing what the Input tab shows (the
// least a poller that notices a person's edit within a minute reads),
// written raw, not timed; cpu-s/min as above.
func BenchmarkRawIdleMinute(b *testing.B) {
	e := plainEmulator(b, "bench-idle-raw")
	defer e.closer()
	svc := rawService(b, e)
	cities := benchCities(b)
	tab := layout.InputTabName("City")
	addTab(b, svc, e.sheet, tab, len(cities)+1, 4)
	rawWriteRows(b, svc, e.sheet, tab, "D", []any{"key", "name", "note", "__hikoutei_row_id"}, len(cities), func(i int) []any {
		return []any{cities[i].Key, cities[i].Name, "", cities[i].Key}
	}, time.Now())
	var cpu []float64
	for b.Loop() {
		c0 := cpuTime(b)
		if _, err := rawBatchGet(svc, e.sheet, []string{tab}); err != nil {
			b.Fatal(err)
		}
		cpu = append(cpu, (cpuTime(b) - c0).Seconds())
	}
	b.ReportMetric(median(cpu), "cpu-s/min")
}
