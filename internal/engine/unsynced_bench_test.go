//go:build !race

package engine_test

import (
	"fmt"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// BenchmarkQueueUnsyncedAfterUnit is reconciliation's search for rows the
// spreadsheet was never told about, once after each unit of 500 new
// airports (sync on, nothing dispatched: every row is queued, so the
// search finds none), on a store already holding 50,000 airports
// committed the same way. The units' commits are not timed; cpu-us/search is the
// process's CPU (user + system) during the searches alone.
func BenchmarkQueueUnsyncedAfterUnit(b *testing.B) {
	const n = 50_000
	x := openSynced(b, b.TempDir(), func(o *hikoutei.SyncOptions) { o.MaxBatch = 10_000 })
	next := 0
	unit := func() {
		u := x.Store.Begin()
		for range 500 {
			mustT(b, u.Persist(&Airport{ID: fmt.Sprintf("g%07d", next), Name: "generated"}))
			next++
		}
		_, err := u.Commit(ctx)
		mustT(b, err)
	}
	for next < n {
		unit()
	}
	search := func() {
		if q, err := x.e.QueueUnsynced(x.e.Target(), 10_000); err != nil || q != 0 {
			b.Fatalf("search queued %d: %v, want none (every row was queued by its commit)", q, err)
		}
	}
	search()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		unit()
		c0 := cpuTime()
		b.StartTimer()
		search()
		b.StopTimer()
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/search")
}
