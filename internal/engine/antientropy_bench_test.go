//go:build !race

package engine_test

import (
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// BenchmarkAntiEntropyAirports is one anti-entropy pass over the 7,184
// OpenFlights airports (System and Input tabs, 14,368 rows) that finds
// nothing to repair: the steady-state cost of a reconciliation period.
// Reports the Sheets requests per pass.
func BenchmarkAntiEntropyAirports(b *testing.B) {
	x := openSyncedOn(b, b.TempDir(), hikouteitest.NewSheet(b), nil, airports, func(o *hikoutei.SyncOptions) { o.MaxBatch = 5000 })
	loadAirports(b, x.Store, len(readAirports(b)))
	x.drain()
	x.emu.ResetCounters()
	b.ResetTimer()
	for b.Loop() {
		reps, err := x.disp.AntiEntropy(ctx)
		if err != nil || reps[airportSystem].Diverged() != 0 {
			b.Fatalf("pass: %v %+v", err, reps)
		}
	}
	b.StopTimer()
	c := x.emu.Counters(hikouteitest.SpreadsheetID)
	b.ReportMetric(float64(c.Reads+c.Writes)/float64(b.N), "requests/pass")
}
