package campaign

import (
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// sample is sync health in state st whose row tabs last reconciled at the
// given times.
func sample(st hikoutei.SyncState, at ...time.Time) hikoutei.Health {
	sh := &hikoutei.SyncHealth{State: st}
	for _, t := range at {
		sh.Tabs = append(sh.Tabs, hikoutei.TabHealth{LastReconcile: t})
	}
	return hikoutei.Health{SyncHealth: sh}
}

// A sheet still differing is late only once the wall-clock bound has
// passed and the store's own passes had their chance: a busy host that
// slows the passes does not count against the store, and a pass counts
// only when every row tab reported after the last act.
func TestI28_ADifferingSheetIsLateOnlyAfterTheBoundAndThreePassesOverEveryTab(t *testing.T) {
	stop := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return stop.Add(time.Duration(ms) * time.Millisecond) }
	bound := 2 * time.Second
	q := Quiet{Stopped: stop}
	steps := []struct {
		h     hikoutei.Health
		took  time.Duration
		late  bool
		after int
	}{
		{sample(hikoutei.SyncOK, at(-100), at(-50)), 3 * time.Second, false, 0},    // both before the act
		{sample(hikoutei.SyncOK, at(400), at(-50)), 3 * time.Second, false, 0},     // one tab only
		{sample(hikoutei.SyncBehind, at(400), at(410)), 3 * time.Second, false, 1}, // a pass, whatever the state
		{sample(hikoutei.SyncOK, at(400), at(410)), 3 * time.Second, false, 1},     // the same pass seen again
		{sample(hikoutei.SyncOK, at(800), at(810)), 3 * time.Second, false, 2},
		{sample(hikoutei.SyncOK, at(1300), at(1200)), time.Second, false, 3}, // passes enough, bound not yet
		{sample(hikoutei.SyncOK, at(1300), at(1200)), 3 * time.Second, true, 3},
	}
	for i, s := range steps {
		q.Judge(s.h)
		if q.Passes() != s.after || q.Late(s.took, bound) != s.late {
			t.Fatalf("step %d: passes %d late %v, want %d and %v", i, q.Passes(), q.Late(s.took, bound), s.after, s.late)
		}
	}
}
