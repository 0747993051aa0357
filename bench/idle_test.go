package bench

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Idle cost (rows 11 and 11b): what a store with nothing to do costs in
// CPU.
//
// One op is one idle minute of `hikoutei serve` at the default cadences,
// its passes run back to back: one inbound poll (60 s), one safety full
// scan (60 s), two surplus-row cleanups and two reconciliations with
// anti-entropy (30 s), and sixty dispatcher passes (1 s); the full scan
// and one cleanup share their grid read, as serve's poller does. cpu-s/min is
// the median over the ops of this process's CPU time (user + system,
// getrusage) over one such minute. The store is the first
// HIKOUTEI_BENCH_INBOUND_ROWS cities synced to both tabs (not timed) by
// its running workers, as row 5's backfill syncs (backfillNotedCities),
// against an emulator without latency or quota; the store is then closed,
// the emulator's spreadsheets move into one with Google's latency and
// quota model (ModelSwitch), and the store opens again with the provider
// serve builds (default pacing and request timeout). One idle minute runs
// before the measured ones (the first passes after a change decide every
// row; an idle store is past them). With HIKOUTEI_BENCH_EMULATOR the
// emulator is the runner's ModelSwitch and its CPU is not in the figure.

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

// cpuProfile, when the environment variable env (HIKOUTEI_BENCH_IDLE_PROFILE,
// HIKOUTEI_BENCH_SYNC_PROFILE) names a file, writes a CPU profile there
// of what runs until stop (the measured part, not the setup).
func cpuProfile(b *testing.B, env string) (stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
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
	e := switchedEmulator(b, "bench-idle")
	defer e.closer()
	dir := b.TempDir()
	backfillNotedCities(b, e.emu, dir)
	e.google(b)
	s, h := reopenIdle(b, e.emu, dir)
	defer s.Close()
	idleMinute(b, s, h) // not measured
	stop := cpuProfile(b, config.EnvBenchIdleProfile)
	var cpu []float64
	for b.Loop() {
		c0 := cpuTime(b)
		idleMinute(b, s, h)
		cpu = append(cpu, (cpuTime(b) - c0).Seconds())
	}
	stop()
	b.ReportMetric(median(cpu), "cpu-s/min")
}

// backfillNotedCities commits the cities of benchCities to a new store
// in dir and waits until their 2 × N rows are applied, then closes it (not
// timed). The units (5,000 cities each) commit with the workers stopped,
// then the store opens again with its workers running (not Manual), as
// serve runs them, so the dispatcher's run loop sends a batch while the
// settlement of the one before commits: a Manual store's passes sent,
// then settled, one batch at a time. Batches of 50,000 effects (the
// emulator copies the spreadsheet once per batchUpdate); the poll, full
// scan and reconciliation an hour apart (the measured minutes run them;
// the surplus-row cleanup keeps serve's 30 s).
func backfillNotedCities(b *testing.B, e *emu, dir string) {
	b.Helper()
	cities := benchCities(b)
	start := time.Now()
	s := openBackfill(b, e, dir, true)
	commitNotedCities(b, s, cities)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("setup: committed %d cities in %v", len(cities), time.Since(start).Round(time.Millisecond))
	s = openBackfill(b, e, dir, false)
	waitApplied(b, s, int64(2*len(cities)), start.Add(60*time.Minute))
	b.Logf("setup: synced in %v", time.Since(start).Round(time.Millisecond))
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
}

// openBackfill opens the store in dir for backfillNotedCities, its
// workers stopped when manual.
func openBackfill(b *testing.B, e *emu, dir string, manual bool) *hikoutei.Store {
	b.Helper()
	s, err := hikoutei.Open(b.Context(), dir, hikoutei.Options{Operation: "bench", Logger: slog.New(slog.DiscardHandler),
		Sync: &hikoutei.SyncOptions{SpreadsheetID: e.sheet, Provider: citiesProvider(b, e), MaxBatch: 50000, Manual: manual,
			Interval: 100 * time.Millisecond, PollingInterval: time.Hour, FullScanInterval: time.Hour, ReconcileInterval: time.Hour,
			LookupEnv: func(string) (string, bool) { return "", false }}},
		hikoutei.Entity[NotedCity]("City"))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// waitApplied waits until nothing of s's outbox is unsettled, then
// checks that want effects were applied; it fails the benchmark at
// deadline.
func waitApplied(b *testing.B, s *hikoutei.Store, want int64, deadline time.Time) {
	b.Helper()
	for {
		c := outboxCounts(b, s)
		if unsettled(c) == 0 {
			if c[aggregates.EffectApplied] != want {
				b.Fatalf("outbox after the setup: %v, want %d applied", c, want)
			}
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("setup not synced by its deadline: %v", c)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reopenIdle opens the store in dir again as serve opens it: a provider
// with the default pacing and request timeout (Manual, so the benchmark
// runs the passes).
func reopenIdle(b *testing.B, e *emu, dir string) (*hikoutei.Store, *hikouteitest.Harness) {
	b.Helper()
	t0 := time.Now()
	log := slog.New(slog.DiscardHandler)
	prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: e.url, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	s, err := hikoutei.Open(b.Context(), dir, hikoutei.Options{Operation: "bench", Logger: log,
		Sync: &hikoutei.SyncOptions{SpreadsheetID: e.sheet, Provider: prov, Manual: true}}, hikoutei.Entity[NotedCity]("City"))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("setup: store opened again against Google's model in %v", time.Since(t0).Round(time.Millisecond))
	return s, hikouteitest.New(b, s)
}

// switched is an emulator whose model a benchmark switches to Google's
// after its setup (ModelSwitch): the runner's, or one served in process.
type switched struct {
	emu   *emu
	local *ModelSwitch // nil when the runner serves it
}

// switchedEmulator is the runner's ModelSwitch (HIKOUTEI_BENCH_EMULATOR)
// or one served in process.
func switchedEmulator(b *testing.B, sheet string) *switched {
	b.Helper()
	if os.Getenv(config.EnvBenchEmulator) != "" {
		return &switched{emu: googleEmulator(b, sheet)}
	}
	m := NewModelSwitch()
	srv := httptest.NewServer(m)
	return &switched{emu: &emu{url: srv.URL, sheet: sheet, closer: srv.Close}, local: m}
}

func (s *switched) closer() { s.emu.closer() }

// google switches the emulator to Google's model; a runner's emulator
// that cannot switch fails the benchmark (the figure would not be the
// row's).
func (s *switched) google(b *testing.B) {
	b.Helper()
	if s.local != nil {
		if err := s.local.Google(); err != nil {
			b.Fatal(err)
		}
		return
	}
	res, err := http.Post(strings.TrimSuffix(s.emu.url, "/")+GoogleModelPath, "text/plain", nil)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		b.Fatalf("switching %s to Google's model: %s (serve it with make bench's runner, or leave %s unset)",
			config.EnvBenchEmulator, res.Status, config.EnvBenchEmulator)
	}
}

// BenchmarkRawIdleMinute: the floor under BenchmarkIdleMinute — one raw
// values.batchGet a minute of a tab showing what the Input tab shows (the
// least a poller that notices a person's edit within a minute reads),
// written raw, not timed; cpu-s/min as above.
func BenchmarkRawIdleMinute(b *testing.B) {
	se := switchedEmulator(b, "bench-idle-raw")
	defer se.closer()
	e := se.emu
	svc := rawService(b, e)
	cities := benchCities(b)
	tab := layout.InputTabName("City")
	addTab(b, svc, e.sheet, tab, len(cities)+1, 4)
	rawWriteRows(b, svc, e.sheet, tab, "D", []any{"key", "name", "note", "__hikoutei_row_id"}, len(cities), func(i int) []any {
		return []any{cities[i].Key, cities[i].Name, "", cities[i].Key}
	}, time.Now())
	se.google(b)
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
