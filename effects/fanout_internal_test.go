package effects

import (
	"fmt"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// How far a pass fans out: never past the workers, the parts of its work,
// the quota budget's headroom or one lane per lane's load of work, and
// always at least one lane.
func TestFanOut(t *testing.T) {
	for _, c := range []struct{ workers, parts, headroom, load, laneLoad, want int }{
		{4, 6, 10, 6000, 500, 4}, {4, 2, 10, 6000, 500, 2}, {4, 6, 3, 6000, 500, 3}, {4, 6, 0, 6000, 500, 1},
		{1, 6, 10, 6000, 500, 1}, {4, 0, 10, 6000, 500, 1},
		{4, 10, 10, 100, 500, 1},  // 50 commits a second over ten tabs: one batchUpdate, not four
		{4, 10, 10, 999, 500, 1},  // less than two lanes' load
		{4, 10, 10, 1000, 500, 2}, // two lanes' load
		{4, 6, 10, 12, 1, 4},      // a load of 1 a lane: as far as the rest allows
	} {
		if got := fanOut(c.workers, c.parts, c.headroom, c.load, c.laneLoad); got != c.want {
			t.Errorf("fanOut(%d workers, %d parts, headroom %d, load %d of %d a lane) = %d, want %d",
				c.workers, c.parts, c.headroom, c.load, c.laneLoad, got, c.want)
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

// Each effect's part is its tab; a tab's load counts its effects and
// notes.
func TestPartsAreTabs(t *testing.T) {
	claimed := []aggregates.Effect{effectOn("S", events.OpAppend, 0), effectOn("U", events.OpUpdate, 0), effectOn("S", events.OpDelete, 1)}
	of, load := parts(claimed, noteWork{sweep: []string{"N"}, notes: []aggregates.CellNote{{Tab: "U"}}})
	if fmt.Sprint(of) != "[S U S]" || fmt.Sprint(load) != "map[N:1 S:2 U:2]" {
		t.Fatalf("parts %v, loads %v", of, load)
	}
}

func effectOn(tab string, op events.Op, i int) aggregates.Effect {
	return aggregates.Effect{ID: fmt.Sprint(tab, i), Op: op, Target: aggregates.Target{Tab: tab, Anchor: fmt.Sprint(i)}}
}
