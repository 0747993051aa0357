package engine_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// benchFullObservation times the engine deciding a safety full scan's grid
// read of the whole City_Input tab of rows synced cities: each iteration a
// person first retypes the names of edits (none: nothing changed, every
// row decided against its state, as a full scan during row 5c's backfill
// does), then, with the timer stopped, the tab is read with grid data and
// the last pass's unchanged read forgotten, so the engine decides every
// row again. Only Engine.Observe is timed. Reports the process's CPU
// (getrusage: user + system) per row decided and the rows whose state was
// read per pass.
func benchFullObservation(b *testing.B, x *synced, rows int, edits []editedCity) {
	b.ReportAllocs()
	var cpu time.Duration
	var states uint64
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		for i, e := range edits {
			mustT(b, x.sheet.Person().Type(cityInput, e.cell, fmt.Sprintf("%s %d/%d", b.Name(), n, i)))
		}
		_, base, err := x.e.Expectations(nil)
		mustT(b, err)
		grids, err := x.prov.ReadGridRows(ctx, x.wb, map[string]sheetsio.GridRequest{cityInput: {Whole: true}})
		mustT(b, err)
		mustT(b, x.e.ForgetUnchanged())
		s0, c0 := x.e.Stats().RowStates, cpuTime()
		b.StartTimer()
		st, err := x.e.Observe(base, map[string]effects.TabObservation{cityInput: {Grid: grids[cityInput]}}, true)
		b.StopTimer()
		cpu += cpuTime() - c0
		states += x.e.Stats().RowStates - s0
		if err != nil || st.Rows != rows || st.Accepted != len(edits) || st.Quarantined+st.Candidates+st.Deferred != 0 {
			b.Fatalf("full observation of %d rows, %d edited: %+v %v", rows, len(edits), st, err)
		}
		x.drain() // the accepted edits' System rows
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n*rows), "cpu-us/row")
	b.ReportMetric(float64(states)/float64(n), "row-states/op")
}

// cpuTime is the process's CPU time so far (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
