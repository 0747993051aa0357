package bench

import (
	"context"
	"strconv"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// BenchmarkSafePath10kSyncOnly: row 4d, the sync alone of
// BenchmarkSafePath10k's 10,000 cities. The store is opened as
// openSynced opens it but with SyncOptions.Manual, provisioned, and the
// cities are committed in units of 500 (durable: log, read model and
// outbox rows in place) before any worker runs; then the store's
// dispatcher runs as serve runs it (Dispatcher.Run: pipelined passes,
// reconciliation on its cadence) until every effect is settled. Timed
// from the dispatcher's start; cpu-us/row is this process's CPU over that
// time ÷ 10,000 (claims, encoding, requests, receipts, settlement and
// their read-model statements; not the commits). It waits on the
// dispatcher's applied counter (an atomic load), then reads the outbox
// counts until nothing is unsettled, so the waiting costs almost nothing.
func BenchmarkSafePath10kSyncOnly(b *testing.B) {
	cities := readCities(b)[:10000]
	var secs, cpu []float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := googleEmulator(b, "bench-safe-sync-"+strconv.Itoa(i))
		s := openCommitted(b, e, cities)
		disp, _, _ := engine.Of(s).Workers()
		runCtx, stop := context.WithCancel(ctx)
		ran := make(chan error, 1)
		r0, w0 := e.requests()
		b.StartTimer()
		prof := cpuProfile(b, config.EnvBenchSyncProfile)
		start, c0 := time.Now(), cpuTime(b)
		go func() { ran <- disp.Run(runCtx) }()
		waitDispatched(b, s, int64(len(cities)), ran)
		secs = append(secs, time.Since(start).Seconds())
		cpu = append(cpu, (cpuTime(b) - c0).Seconds())
		prof()
		b.StopTimer()
		if r1, w1 := e.requests(); r0 >= 0 {
			b.ReportMetric(float64(r1-r0), "reads")
			b.ReportMetric(float64(w1-w0), "writes")
		}
		stop()
		if err := <-ran; err != nil {
			b.Fatal(err)
		}
		s.Close()
		e.closer()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(cities))/median(secs), "rows/s")
	reportCPU(b, median(cpu), len(cities))
}

// openCommitted opens a store as openSynced does, but with its workers
// left to the caller (SyncOptions.Manual), provisions its spreadsheet and
// commits the cities in units of 500 (none of it timed).
func openCommitted(b *testing.B, e *emu, cities []City) *hikoutei.Store {
	b.Helper()
	opts := demoSync()
	opts.Manual = true
	s := openOn(b, e, opts, hikoutei.Entity[City]("City"))
	if _, err := engine.Of(s).Provision(ctx); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(cities); i += 500 {
		u := s.Begin()
		for j := i; j < min(i+500, len(cities)); j++ {
			if err := u.Persist(&cities[j]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := u.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// waitDispatched waits until the dispatcher of s has applied n effects and
// the outbox holds nothing unsettled, or fails when the dispatcher stops
// (ran) or after 10 minutes.
func waitDispatched(b *testing.B, s *hikoutei.Store, n int64, ran <-chan error) {
	b.Helper()
	disp, _, _ := engine.Of(s).Workers()
	deadline := time.Now().Add(10 * time.Minute)
	for disp.C.Applied.Load() < n || unsettled(outboxCounts(b, s)) > 0 {
		select {
		case err := <-ran:
			b.Fatalf("the dispatcher stopped: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Fatalf("not settled after 10 minutes: %v", outboxCounts(b, s))
		}
	}
}
