package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// TestI28_ARowRemovedOrCreatedAfterAPassReadItIsNoDivergence: before the
// store compares a pass's read, the application removes m-2 and creates
// m-4, and both writes settle. The read still shows m-2 and not m-4,
// which is no divergence: neither row is counted or corrected (m-2 not
// restored, m-4 not deleted again nor written twice), and a later pass
// over the sheet as the writes left it finds nothing to repair.
func TestI28_ARowRemovedOrCreatedAfterAPassReadItIsNoDivergence(t *testing.T) {
	x, held := openMembers(t)
	reps := x.racedPass(held, func() {
		u := x.Begin()
		mustT(t, u.Remove(&Member{ID: "m-2"}))
		mustT(t, u.Persist(&Member{ID: "m-4", Email: "m-4.person@example.invalid", Team: "red"}))
		_, err := u.Commit(ctx)
		mustT(t, err)
		x.drain()
	})
	if r := reps[memberSystem]; r.Diverged() != 0 || r.Queued != 0 {
		t.Fatalf("the pass that read m-2 before its removal and missed m-4: %+v, want no divergence", r)
	}
	if got := x.inState(aggregates.EffectPending, 100); len(got) != 0 {
		t.Fatalf("corrections queued: %+v", got)
	}
	x.drain()
	if x.rowOf(memberSystem, "m-2") != nil || x.cellOf(memberSystem, "m-4", "team") != "red" {
		t.Fatalf("after the pass: m-2 %v, m-4 %v", x.rowOf(memberSystem, "m-2"), x.rowOf(memberSystem, "m-4"))
	}
	reps, err := x.disp.AntiEntropy(ctx)
	mustT(t, err)
	if r := reps[memberSystem]; r.Diverged() != 0 || r.Queued != 0 {
		t.Fatalf("a later pass over the sheet the writes left: %+v", r)
	}
}
