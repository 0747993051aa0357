package effects

import (
	"slices"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// A pass reads tabs in turn up to the row budget (at least one tab), so a
// large workbook is compared over several passes and never all at once.
func TestI28_AntiEntropyReadsTabsInTurnWithinItsRowBudget(t *testing.T) {
	var c entropyCursor
	tabs := []string{"A_System", "A_Input", "B_System"}
	if got := c.pick(tabs, 100); !slices.Equal(got, tabs) {
		t.Fatalf("unknown sizes: %v, want every tab", got)
	}
	c.sized("A_System", 80)
	c.sized("A_Input", 80)
	c.sized("B_System", 10)
	var seen []string
	for range 3 {
		got := c.pick(tabs, 100)
		if rows := len(got); rows == 0 || (rows > 1 && slices.Contains(got, "A_System") && slices.Contains(got, "A_Input")) {
			t.Fatalf("pass read %v: over the budget", got)
		}
		seen = append(seen, got...)
	}
	for _, tab := range tabs {
		if !slices.Contains(seen, tab) {
			t.Fatalf("three passes never read %s: %v", tab, seen)
		}
	}
	c.sized("A_System", 1000)
	if got := c.pick([]string{"A_System"}, 100); len(got) != 1 {
		t.Fatalf("a tab larger than the budget is never read: %v", got)
	}
}

// A tab claimed for at least busy effects since the last scheduled pass
// is left out, for at most maxDeferral; a quiet one never is.
func TestI28_AtRestLeavesOutATabBeingFilledForAtMostMaxDeferral(t *testing.T) {
	var c entropyCursor
	claim := func(tab string, n int) {
		fx := make([]aggregates.Effect, n)
		for i := range fx {
			fx[i].Target.Tab = tab
		}
		c.claimedFor(fx)
	}
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	tabs := []string{"Busy", "Quiet"}
	for at := time.Duration(0); at <= maxDeferral; at += time.Minute {
		claim("Busy", 10)
		claim("Quiet", 9)
		got, deferred := c.atRest(tabs, 10, t0.Add(at))
		want := []string{"Quiet"}
		if at == maxDeferral {
			want = tabs
		}
		if !slices.Equal(got, want) || deferred != len(tabs)-len(want) {
			t.Fatalf("pass at +%v: compares %v (%d deferred), want %v", at, got, deferred, want)
		}
	}
	claim("Busy", 10)
	if got, _ := c.atRest(tabs, 10, t0.Add(maxDeferral+time.Minute)); !slices.Equal(got, []string{"Quiet"}) {
		t.Fatalf("after a compared pass the busy tab waits again: %v", got)
	}
	if got, _ := c.atRest(tabs, 10, t0.Add(maxDeferral+2*time.Minute)); !slices.Equal(got, tabs) {
		t.Fatalf("a pass after the writes eased: %v, want every tab", got)
	}
}
