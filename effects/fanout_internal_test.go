package effects

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// How far a pass fans out: never past the workers, the parts of its work
// or the quota budget's headroom, and always at least one lane.
func TestFanOut(t *testing.T) {
	for _, c := range []struct{ workers, parts, headroom, want int }{
		{4, 6, 10, 4}, {4, 2, 10, 2}, {4, 6, 3, 3}, {4, 6, 0, 1}, {1, 6, 10, 1}, {4, 0, 10, 1},
	} {
		if got := fanOut(c.workers, c.parts, c.headroom); got != c.want {
			t.Errorf("fanOut(%d workers, %d parts, headroom %d) = %d, want %d", c.workers, c.parts, c.headroom, got, c.want)
		}
	}
}

// Only a tab of appends alone is cut into row ranges, of rangeRows
// appends at least, at most one per worker.
func TestRanges(t *testing.T) {
	for _, c := range []struct {
		appends     int
		appendsOnly bool
		workers     int
		want        int
	}{
		{2000, true, 4, 4}, {600, true, 4, 2}, {249, true, 4, 1}, {2000, false, 4, 1}, {2000, true, 1, 1},
	} {
		if got := ranges(c.appends, c.appendsOnly, c.workers); got != c.want {
			t.Errorf("ranges(%d, %v, %d) = %d, want %d", c.appends, c.appendsOnly, c.workers, got, c.want)
		}
	}
}

// Tabs are dealt heaviest first to the least loaded lane, deterministically.
func TestSplitTabs(t *testing.T) {
	got := splitTabs(map[string]int{"A": 10, "B": 6, "C": 5, "D": 1}, 2)
	want := [][]string{{"A", "D"}, {"B", "C"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("splitTabs = %v, want %v", got, want)
	}
	if got := splitTabs(map[string]int{"A": 1}, 3); len(got) != 1 {
		t.Fatalf("one tab over three lanes: %v", got)
	}
}

// A tab with an update or a note stays whole; a tab of appends alone is
// cut into contiguous row ranges, each row in exactly one part.
func TestPartsCutOnlyAppendOnlyTabs(t *testing.T) {
	var claimed []aggregates.Effect
	for i := range 1000 {
		claimed = append(claimed, effectOn("S", events.OpAppend, i))
	}
	claimed = append(claimed, effectOn("U", events.OpAppend, 0))
	for i := range 999 {
		claimed = append(claimed, effectOn("U", events.OpUpdate, i+1))
	}
	for i := range 600 {
		claimed = append(claimed, effectOn("N", events.OpAppend, i))
	}
	of, load := parts(claimed, noteWork{sweep: []string{"N"}}, 4)
	keys := make([]string, 0, len(load))
	for k := range load {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if fmt.Sprint(keys) != fmt.Sprint([]string{"N", "S", "S\x001", "S\x002", "S\x003", "U"}) {
		t.Fatalf("parts %q", keys)
	}
	if load["S"] != 250 || load["U"] != 1000 || load["N"] != 601 {
		t.Fatalf("loads %v", load)
	}
	for i := 1; i < 1000; i++ { // contiguous ranges, in claim order
		if of[i] < of[i-1] {
			t.Fatalf("effect %d in %q after %q", i, of[i], of[i-1])
		}
	}
}

func effectOn(tab string, op events.Op, i int) aggregates.Effect {
	return aggregates.Effect{ID: fmt.Sprint(tab, i), Op: op, Target: aggregates.Target{Tab: tab, Anchor: fmt.Sprint(i)}}
}
