package effects

import (
	"slices"
	"testing"
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
