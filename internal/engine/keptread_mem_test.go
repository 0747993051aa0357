package engine

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// keptTabRows is the size of the tab whose kept read is measured: session
// 14's largest tab (row 8 of the bench table).
const keptTabRows = 171_075

// keptPass keeps, on a new cursor, the read of a tab of n clean rows as a
// pass does: the anchors and expected hashes are fresh strings, as read
// from the read model, dropped once the pass returns.
func keptPass(n int) *canonicalCursor {
	anchors, clean := make([]string, n), make([]bool, n)
	expected := make(map[string]string, n)
	for i := range n {
		anchors[i] = "R" + fmt.Sprintf("%07d", i) // an 8-byte key, sorted
		clean[i] = true
		expected[anchors[i]] = cell.VisibleHash([]any{anchors[i], strconv.Itoa(i), "Airport " + anchors[i]})
	}
	c := &canonicalCursor{mark: unchangedMark{valid: true}}
	c.keep([32]byte{1}, canonicalWindow{anchors: anchors, clean: clean, total: n}, expected, aggregates.RepairReport{}, false)
	return c
}

// heapNow is the live heap after a collection.
func heapNow() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkKeptReadRetainedHeap measures the heap a kept read holds
// between passes over a 171,075-row tab (what the cursor keeps once the
// pass's own read is gone), reported per row and per 100,000 rows.
func BenchmarkKeptReadRetainedHeap(b *testing.B) {
	var retained uint64
	for b.Loop() {
		before := heapNow()
		c := keptPass(keptTabRows)
		retained = heapNow() - before
		runtime.KeepAlive(c)
	}
	b.ReportMetric(float64(retained)/keptTabRows, "B/row")
	b.ReportMetric(float64(retained)*100_000/keptTabRows/1e6, "MB/100k-rows")
}

// TestKeptReadHoldsAtMost5MBPer100kRows: the kept read of a 171,075-row
// tab holds at most 5 MB per 100,000 rows between passes (docs/sync.md).
func TestKeptReadHoldsAtMost5MBPer100kRows(t *testing.T) {
	before := heapNow()
	c := keptPass(keptTabRows)
	retained := heapNow() - before
	runtime.KeepAlive(c)
	if c.kept.clean.len() != keptTabRows || c.kept.clean.row(keptTabRows-1).Anchor != "R0171074" {
		t.Fatalf("kept %d clean rows, want %d", c.kept.clean.len(), keptTabRows)
	}
	if per100k := float64(retained) * 100_000 / keptTabRows; per100k > 5e6 {
		t.Fatalf("the kept read holds %.1f MB per 100,000 rows (%d B for %d rows), more than 5 MB", per100k/1e6, retained, keptTabRows)
	}
}
