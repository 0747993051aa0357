package aggregates

import (
	"time"

	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

func repairRow(expected, observed string, copies int) RepairRow {
	return RepairRow{Target: Target{Spreadsheet: "ss", Tab: "T_System", Anchor: "a", Binding: "b"}, Entity: "T", ID: "a",
		Expected: expected, Observed: observed, Copies: copies, Exists: true, Values: map[string]any{"id": "a", "n": int64(1)}}
}

func dup(expected string, copies ...string) RepairRow {
	r := repairRow(expected, copies[len(copies)-1], len(copies))
	r.CopyHashes = copies
	return r
}

func TestI28_RepairDecidesEachDivergenceByFullRowCAS(t *testing.T) {
	sys := TabPolicy{Columns: []string{"id", "n"}}
	gone := repairRow("h1", "h9", 1)
	gone.Exists, gone.Values = false, nil
	cases := map[string]struct {
		r      RepairRow
		p      TabPolicy
		div    RowDivergence
		op     events.Op
		guard  string
		writes bool
	}{
		"shows canonical":                               {repairRow("h1", "h1", 1), sys, DivergenceNone, "", "", false},
		"missing: re-appended":                          {repairRow("h1", "", 0), sys, DivergenceMissing, events.OpAppend, "", true},
		"drifted: CAS rewrite":                          {repairRow("h1", "h2", 1), sys, DivergenceDrifted, events.OpUpdate, "h2", true},
		"never written: surplus":                        {repairRow("", "h2", 1), sys, DivergenceSurplus, events.OpUpdate, "h2", true},
		"removed entity: deleted":                       {gone, sys, DivergenceSurplus, events.OpDelete, "h9", true},
		"input duplicated: left to I16":                 {repairRow("h1", "h1", 2), TabPolicy{Input: true}, DivergenceDuplicate, "", "", false},
		"system duplicated: the differing copy deleted": {dup("h1", "h1", "h7"), sys, DivergenceDuplicate, events.OpDelete, "h7", true},
		"system identical copies: one deleted":          {dup("h1", "h1", "h1"), sys, DivergenceDuplicate, events.OpDelete, "h1", true},
		"input edit: the poller's":                      {repairRow("h1", "h2", 1), TabPolicy{Input: true}, DivergenceDrifted, "", "", false},
		"input deleted, no evidence yet":                {repairRow("h1", "", 0), TabPolicy{Input: true}, DivergenceMissing, "", "", false},
		"input row never written under this binding: projected": {repairRow("", "h2", 1), TabPolicy{Input: true, Columns: []string{"id"}},
			DivergenceSurplus, events.OpUpdate, "h2", true},
		"input row of a removed entity: cleanup's": {gone, TabPolicy{Input: true}, DivergenceSurplus, "", "", false},
		"input deleted, evidence recorded": {repairRow("h1", "", 0), TabPolicy{Input: true, Restore: true, Columns: []string{"id"}},
			DivergenceMissing, events.OpAppend, "", true},
	}
	for name, c := range cases {
		q, d, ok := DecideRepair(c.r, c.p)
		if d != c.div || ok != c.writes || q.Op != c.op || q.ExpectedHash != c.guard {
			t.Errorf("%s: divergence %q write %v op %q guard %q", name, d, ok, q.Op, q.ExpectedHash)
		}
	}
}

func TestI28_RowsInTransitionOrHeldAreNeverRepaired(t *testing.T) {
	for name, r := range map[string]RepairRow{"in flight": repairRow("h1", "", 0), "held": repairRow("h1", "h2", 1)} {
		r.InFlight = name == "in flight"
		r.Held = name == "held"
		if _, d, ok := DecideRepair(r, TabPolicy{}); ok || d != DivergenceNone {
			t.Errorf("%s: divergence %q write %v", name, d, ok)
		}
	}
}

func TestTargetBindingAdoptsLegacyAndRecordsSwitches(t *testing.T) {
	if _, ok := TargetBinding("ss-1", "ss-1", nil, now); ok {
		t.Fatal("an unchanged target recorded a binding")
	}
	d, ok := TargetBinding("", "ss-1", []string{"sheets", "ss-1"}, now)
	if !ok || len(d.Events) != 1 || d.Events[0].Payload.(events.SyncTargetBound).Adopted != "sheets" {
		t.Fatalf("legacy adoption: %+v", d.Events)
	}
	d, _ = TargetBinding("ss-1", "ss-2", []string{"ss-1"}, now)
	if p := d.Events[0].Payload.(events.SyncTargetBound); p.Previous != "ss-1" || p.Adopted != "" {
		t.Fatalf("switch: %+v", p)
	}
}

func TestAbandonSupersedesOnlyUnsettledEffects(t *testing.T) {
	if _, err := DecideAbandon(Effect{ID: "fx", State: EffectPending}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := DecideAbandon(Effect{ID: "fx", State: EffectApplied}, now); !errors.Is(err, ErrNotSupersedable) {
		t.Fatalf("settled effect abandoned: %v", err)
	}
}

// A live entity's Input row that no write of this binding reached (the
// store switched to a spreadsheet that shows it from an earlier time) is
// no person's edit: a full scan records nothing; anti-entropy projects
// canonical state over it.
func TestI28_ARowNeverWrittenUnderThisBindingIsNeverAnEdit(t *testing.T) {
	rs := liveRow(t, "GKA", "Goroka", "current")
	rs.Bound, rs.VisibleHash, rs.VisibleSeq = false, "", 0
	rs.Sheet = map[string]SheetField{}
	r := tabRead(inputRow(2, "GKA", "row-stale", "Goroka", "stale from before the switch"))
	r.Full = true
	c, stats := decideTab(t, r, tabState(rs))
	if stats.Accepted != 0 || stats.Candidates != 0 || len(c.Queue) != 0 {
		t.Fatalf("an unbound row was read as an edit: stats %+v queue %+v", stats, c.Queue)
	}
}

func TestI28_ARowShowingTheLastWriteButNotCanonicalStateIsStaleAndCorrectedOnBothTabs(t *testing.T) {
	r := RepairRow{Target: Target{Tab: "Part_Input", Anchor: "1"}, Entity: "Part", ID: "1", Expected: "h-old", Observed: "h-old",
		Copies: 1, CopyHashes: []string{"h-old"}, Exists: true, Values: map[string]any{"qty": int64(5)}, Canonical: "h-new"}
	for _, input := range []bool{false, true} {
		q, d, ok := DecideRepair(r, TabPolicy{Input: input, Columns: []string{"qty"}})
		if d != DivergenceStale || !ok || q.Op != events.OpUpdate || q.ExpectedHash != "h-old" || q.Values["qty"] != int64(5) {
			t.Fatalf("input=%v: %+v %s %v", input, q, d, ok)
		}
	}
	r.Canonical = "h-old"
	if d := classify(r); d != DivergenceNone {
		t.Fatalf("a row showing canonical state classified %s", d)
	}
	r.Canonical, r.Observed = "h-new", "h-person"
	if q, d, ok := DecideRepair(r, TabPolicy{Input: true}); d != DivergenceDrifted || ok {
		t.Fatalf("a person's edit on an Input row was corrected: %+v %s", q, d)
	}
}

// TabRouting records a tab's target only when it changed; a move names
// the target that showed the tab, a first routing names none.
func TestTabRoutingRecordsOnlyAChangeAndSaysWhetherItMoves(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	if d, moved := TabRouting("Tank_System", "ss-b", "ss-b", now); len(d.Events) != 0 || moved {
		t.Fatalf("unchanged: %+v, moved %v", d, moved)
	}
	d, moved := TabRouting("Tank_System", "ss-a", "ss-b", now)
	want := events.SyncTabRouted{Target: "ss-b", Previous: "ss-a", Tab: "Tank_System"}
	if !moved || d.Stream != events.SyncStream("ss-b") || len(d.Events) != 1 || d.Events[0].Payload != want {
		t.Fatalf("move: %+v, moved %v", d, moved)
	}
	if d, moved := TabRouting("Tank_System", "", "ss-b", now); moved || len(d.Events) != 1 {
		t.Fatalf("first routing: %+v, moved %v", d, moved)
	}
}
