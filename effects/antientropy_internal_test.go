package effects

import (
	"slices"
	"testing"
	"time"
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

// A tab busy rows were written to since the last scheduled pass is left
// out while the next pass comes within maxDeferral of its last comparison
// (or of the first pass that left it out); a quiet one never is; a
// period of maxDeferral or more leaves nothing out.
func TestI28_AtRestLeavesOutATabBeingFilledForAtMostMaxDeferral(t *testing.T) {
	var c entropyCursor
	write := func(tab string, n int) {
		for range n {
			c.wrote(tab)
		}
	}
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	tabs := []string{"Busy", "Quiet"}
	for at := time.Duration(0); at <= maxDeferral; at += time.Minute {
		write("Busy", 10)
		write("Quiet", 9)
		got, deferred := c.atRest(tabs, 10, time.Minute, t0.Add(at))
		want := []string{"Quiet"}
		if at == maxDeferral {
			want = tabs
		}
		if !slices.Equal(got, want) || deferred != len(tabs)-len(want) {
			t.Fatalf("pass at +%v: compares %v (%d deferred), want %v", at, got, deferred, want)
		}
	}
	write("Busy", 10)
	if got, _ := c.atRest(tabs, 10, time.Minute, t0.Add(maxDeferral+time.Minute)); !slices.Equal(got, tabs) {
		t.Fatalf("an overdue tab not compared since was left out again: %v", got)
	}
	c.compared("Busy", t0.Add(maxDeferral+time.Minute))
	write("Busy", 10)
	if got, _ := c.atRest(tabs, 10, time.Minute, t0.Add(maxDeferral+2*time.Minute)); !slices.Equal(got, []string{"Quiet"}) {
		t.Fatalf("after a comparison the busy tab waits again: %v", got)
	}
	if got, _ := c.atRest(tabs, 10, time.Minute, t0.Add(maxDeferral+3*time.Minute)); !slices.Equal(got, tabs) {
		t.Fatalf("a pass after the writes eased: %v, want every tab", got)
	}
	write("Busy", 10)
	if got, _ := c.atRest(tabs, 10, maxDeferral, t0.Add(maxDeferral+4*time.Minute)); !slices.Equal(got, tabs) {
		t.Fatalf("a period of maxDeferral left %v", got)
	}
}

// A tab that takes a pass of its own (larger than the row budget) and is
// busy throughout is still compared within maxDeferral and a turn of the
// tabs: a pass leaves out only what it picked, and an overdue tab stays
// overdue until a pass compares it.
func TestI28_ABusyTabLargerThanTheBudgetIsComparedInItsTurn(t *testing.T) {
	var c entropyCursor
	all := []string{"Airport_System", "City_System"}
	c.sized("Airport_System", 30_000)
	c.sized("City_System", 171_075)
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	last, gap := t0, time.Duration(0) // gaps from the start
	end := t0.Add(2 * time.Hour)
	for now := t0; !now.After(end); now = now.Add(30 * time.Second) {
		for range 10_000 {
			c.wrote("City_System")
		}
		tabs, _ := c.choose(all, 50_000, 10_000, 30*time.Second, now)
		for _, tab := range tabs {
			c.compared(tab, now)
			if tab == "City_System" {
				gap, last = max(gap, now.Sub(last)), now
			}
		}
	}
	if gap = max(gap, end.Sub(last)); gap > maxDeferral+time.Minute {
		t.Fatalf("City_System compared last at %v, longest gap %v: want within %v and a turn", last, gap, maxDeferral)
	}
}

// A tab is busy at a batch's worth of rows (never fewer than minBusy)
// per default period, a longer period needing as many more.
func TestBusyWritesScaleWithTheReconciliationPeriod(t *testing.T) {
	for _, c := range []struct {
		batch  int
		period time.Duration
		want   int
	}{
		{10_000, DefaultReconcileInterval, 10_000},
		{10_000, 5 * time.Second, 10_000},
		{200, DefaultReconcileInterval, minBusy},
		{10_000, 2 * time.Minute, 40_000},
		{200, 90 * time.Second, 3 * minBusy},
	} {
		d := &Dispatcher{cfg: Config{MaxBatch: c.batch, ReconcileInterval: c.period}}
		if got := d.busyWrites(); got != c.want {
			t.Errorf("batch %d, period %v: %d rows, want %d", c.batch, c.period, got, c.want)
		}
	}
}
