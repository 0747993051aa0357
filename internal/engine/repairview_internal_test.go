package engine

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// TestRepairViewMatchesTheMaps: the repair view of a read (rows in sheet
// order, some anchors on several rows) merged with expected rows in
// anchor order gives every anchor aggregates.Anchors gives, with the
// expected hash, the observed hash (aggregates.SeenTab.Index: the last
// row's) and the copies (aggregates.SeenCopies: in sheet order) the maps
// give, for reads of random shapes.
func TestRepairViewMatchesTheMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		seen, expected := randomRepairRows(rng, rng.IntN(60))
		v := newRepairView(seen.Rows)
		keys := make([]string, 0, len(expected))
		for a := range expected {
			keys = append(keys, a)
		}
		slices.Sort(keys)
		for _, a := range keys {
			v.expect(a, expected[a])
		}
		v.done()
		observed, copies := seen.Index()
		if want := aggregates.Anchors(expected, observed); !slices.Equal(v.anchors, want) {
			t.Fatalf("round %d: anchors %v, want %v", round, v.anchors, want)
		}
		for i, a := range v.anchors {
			got, shown := v.observed(i)
			wantHash, wantShown := observed[a]
			n, hashes := v.copies(i)
			wantN, wantHashes := aggregates.SeenCopies(observed, copies, a)
			if v.expected[i] != expected[a] || got != wantHash || shown != wantShown || n != wantN || !slices.Equal(hashes, wantHashes) {
				t.Fatalf("round %d, anchor %s: expected %q observed %q %v copies %d %v; want %q %q %v %d %v", round, a,
					v.expected[i], got, shown, n, hashes, expected[a], wantHash, wantShown, wantN, wantHashes)
			}
		}
	}
}

// TestRepairViewCleanRows: a row is clean when it is the anchor's only
// row, shows the expected hash, and is neither in flight nor held.
func TestRepairViewCleanRows(t *testing.T) {
	seen := []aggregates.SeenRow{{"a", "1"}, {"b", "2"}, {"c", "x"}, {"d", "4"}, {"d", "4"}, {"e", "5"}, {"f", "6"}, {"h", "8"}}
	v := newRepairView(seen)
	for _, r := range []aggregates.SeenRow{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}, {"f", "6"}, {"g", "7"}} {
		v.expect(r.Anchor, r.Hash)
	}
	v.done()
	v.rows.InFlight, v.rows.Held = map[string]bool{"e": true}, map[string]bool{"f": true}
	clean, n := v.clean()
	want := []bool{true, true, false, false, false, false, false, false} // a b c(drifted) d(two rows) e f g(missing) h(surplus)
	if !slices.Equal(clean, want) || n != 2 {
		t.Fatalf("clean %v (%d), want %v (2)", clean, n, want)
	}
}

// randomRepairRows is a read of up to n rows over a few anchors (some on
// several rows, some not shown) and the store's expected rows (some not
// shown, some shown with another hash).
func randomRepairRows(rng *rand.Rand, n int) (aggregates.SeenTab, map[string]string) {
	anchor := func() string { return "k" + strconv.Itoa(rng.IntN(2*n+1)) }
	seen := aggregates.SeenTab{Tab: "T"}
	for range n {
		seen.Rows = append(seen.Rows, aggregates.SeenRow{Anchor: anchor(), Hash: strconv.Itoa(rng.IntN(3))})
	}
	expected := map[string]string{}
	for range n {
		expected[anchor()] = strconv.Itoa(rng.IntN(3))
	}
	return seen, expected
}

// BenchmarkRepairViewHeap measures the heap one anti-entropy pass over a
// 171,075-row tab that shows every expected row holds while it compares,
// beside the read's rows (which both hold): the repair view (view-MB)
// against what the pass held before it, the expected rows and the rows
// read each in a map beside their sorted anchors (maps-MB). The expected
// rows are fresh strings, as the read model hands them over.
func BenchmarkRepairViewHeap(b *testing.B) {
	seen := aggregates.SeenTab{Tab: "T"}
	for i := range keptTabRows {
		seen.Rows = append(seen.Rows, aggregates.SeenRow{Anchor: strconv.Itoa(1_000_000 + i*7), Hash: "h" + strconv.Itoa(10_000_000_000_000+i)})
	}
	expect := func(fn func(anchor, hash string)) {
		for i := range keptTabRows {
			fn(strconv.Itoa(1_000_000+i*7), "h"+strconv.Itoa(10_000_000_000_000+i))
		}
	}
	var view, maps uint64
	for b.Loop() {
		before := heapNow()
		v := newRepairView(seen.Rows)
		expect(v.expect)
		v.done()
		clean, _ := v.clean()
		view = heapNow() - before
		runtime.KeepAlive(v)
		runtime.KeepAlive(clean)
		before = heapNow()
		expected := map[string]string{}
		expect(func(a, h string) { expected[a] = h })
		observed, copies := seen.Index()
		anchors := aggregates.Anchors(expected, observed)
		maps = heapNow() - before
		runtime.KeepAlive(expected)
		runtime.KeepAlive(copies)
		runtime.KeepAlive(anchors)
	}
	b.ReportMetric(float64(view)/1e6, "view-MB")
	b.ReportMetric(float64(maps)/1e6, "maps-MB")
}
