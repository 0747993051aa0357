package gsheets

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// BenchmarkReplayPreflightLargeTab measures the preflight of one replayed
// append (its anchor already shows) on a 50,000-row System tab, and the
// whole dispatch: B/op and allocs/op (the emulator's, in process, too) and
// held-B, the live heap the preflight's snapshots hold (preflight) or the
// Workbook keeps after the dispatch returned (dispatch), after a
// collection.
func BenchmarkReplayPreflightLargeTab(b *testing.B) {
	p, w := largeTab(b, 50_000)
	replay := appendOp("Part_System", "p25000", partValues("p25000", 1))
	replay.ID, replay.Receipt = "again", &sheetsio.Receipt{EffectID: "again", PayloadHash: "p"}
	batch := sheetsio.Batch{Ops: []sheetsio.Op{replay}}
	b.Run("preflight", func(b *testing.B) {
		heldPerOp(b, func() any {
			snaps, err := p.preflight(context.Background(), w, batch)
			if err != nil {
				b.Fatal(err)
			}
			return snaps
		})
	})
	b.Run("dispatch", func(b *testing.B) {
		heldPerOp(b, func() any {
			res, err := p.Dispatch(context.Background(), w, batch)
			if err != nil || res.Ops[0].Status != sheetsio.StatusUnchanged {
				b.Fatalf("%v %+v", err, res)
			}
			return nil // what the Workbook keeps after the dispatch
		})
	})
}

// heldPerOp runs op once per iteration and reports allocations and
// held-B: the live heap op leaves behind, after a collection, with what op
// returns still alive.
func heldPerOp(b *testing.B, op func() any) {
	b.ReportAllocs()
	var held uint64
	for b.Loop() {
		base := liveHeap()
		kept := op()
		after := liveHeap()
		held += after - min(base, after)
		runtime.KeepAlive(kept)
	}
	b.ReportMetric(float64(held)/float64(b.N), "held-B")
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// largeTab provisions the test schema on an emulator and appends n rows
// p00000… to Part_System.
func largeTab(b *testing.B, n int) (*Provider, *sheetsio.Workbook) {
	p, w, _ := provisionedPart(b, emulator.New(emulator.Options{AutoCreate: true}).Handler())
	for first := 0; first < n; first += 5000 {
		var ops []sheetsio.Op
		for i := first; i < min(first+5000, n); i++ {
			a := fmt.Sprintf("p%05d", i)
			ops = append(ops, appendOp("Part_System", a, partValues(a, 1)))
		}
		if _, err := p.Dispatch(context.Background(), w, sheetsio.Batch{Ops: ops}); err != nil {
			b.Fatal(err)
		}
	}
	return p, w
}
