package evolve

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/sheetcheck"
)

// I28 as the campaign checks it after quiescence: the sheet that equalled
// canonical state must not move away from it. A record whose canonical
// state moved after that comparison (the store's poll accepting a
// person's edit the sheet already showed, on an Input row an open
// conflict on another field excused) is one the System tab follows one
// dispatch later: lag behind a new commit, not a divergence. A row that
// differs while its canonical state stood still has diverged again,
// whatever else moved.
func TestI28_ARowWhoseCanonicalStateMovedAfterConvergenceHasNotDivergedAgain(t *testing.T) {
	tabs := map[string]string{"Other_System": otherEntity, "Other_Input": otherEntity}
	rec := func(label string) map[string]any {
		return map[string]any{"code": "o015-0004", "size": int64(848), "label": label}
	}
	before := campaign.Want{otherEntity: {"o015-0004": rec("person-15-5"), "o015-0005": rec("x")}}
	moved := campaign.Want{otherEntity: {"o015-0004": rec("person-15-11"), "o015-0005": rec("x")}}
	drifted := func(ids ...string) campaign.State {
		return campaign.State{Differ: len(ids), Reports: map[string]sheetcheck.Report{
			"Other_System": {Drifted: ids}, "Other_Input": {Excused: []string{"o015-0004"}}}}
	}
	cases := []struct {
		name        string
		st          campaign.State
		now         campaign.Want
		wantMovedOn bool
	}{
		{"the drifted row's record moved", drifted("o015-0004"), moved, true},
		{"canonical state stood still", drifted("o015-0004"), before, false},
		{"another drifted row stood still", drifted("o015-0004", "o015-0005"), moved, false},
		{"a row of a record created since", campaign.State{Differ: 1, Reports: map[string]sheetcheck.Report{
			"Other_System": {Missing: []string{"o015-0009"}}}},
			campaign.Want{otherEntity: {"o015-0009": rec("y")}}, true},
		{"a tab blocked", campaign.State{Blocked: "Other_System blocked or empty"}, moved, false},
	}
	for _, c := range cases {
		if got := movedSince(c.st, tabs, before, c.now); got != c.wantMovedOn {
			t.Errorf("%s: moved %v, want %v (%s)", c.name, got, c.wantMovedOn, c.st)
		}
	}
}
