package aggregates

import (
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

const cleanupBase = 20

// cleanState is an Input row the system last wrote with hash "w-<anchor>"
// at sequence 10, nothing in flight, no candidate, no conflict.
func cleanState(anchor string, live bool) RowState {
	return RowState{Binding: binding(inTab, anchor), Bound: true, VisibleHash: "w-" + anchor, VisibleRevision: 2, VisibleSeq: 10, Exists: live,
		Sheet: map[string]SheetField{"name": {ShownHash: "s", ShownKnown: true}}}
}

func del(anchor, hash string) Queue {
	return Queue{Target: sheetWithInput.Target(inTab, anchor), Op: events.OpDelete, Entity: "Airport", ID: anchor, ExpectedHash: hash}
}

func TestI21_IdenticalDuplicatesOfABoundKeyLoseOneCopyPerPass(t *testing.T) {
	states := map[string]RowState{"GKA": cleanState("GKA", true), "LAE": cleanState("LAE", true)}
	rows := []CleanupRow{
		{Anchor: "GKA", Hash: "w-GKA", Plain: true},
		{Anchor: "LAE", Hash: "w-LAE", Plain: true},
		{Anchor: "GKA", Hash: "w-GKA", Plain: true},
		{Anchor: "GKA", Hash: "w-GKA", Plain: true},
	}
	got := DecideCleanup(inTab, "Airport", rows, states, cleanupBase, sheetWithInput)
	if want := []Queue{del("GKA", "w-GKA")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("cleanup %+v, want one full-row CAS delete of one copy %+v", got, want)
	}
	// Next pass, one copy fewer: again one.
	got = DecideCleanup(inTab, "Airport", rows[:3], states, cleanupBase, sheetWithInput)
	if want := []Queue{del("GKA", "w-GKA")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second pass %+v", got)
	}
	// A single row is never a duplicate.
	if got := DecideCleanup(inTab, "Airport", rows[:2], states, cleanupBase, sheetWithInput); len(got) != 0 {
		t.Fatalf("no surplus left, got %+v", got)
	}
}

func TestI21_UnambiguousOrphanIsDeletedByFullRowCAS(t *testing.T) {
	states := map[string]RowState{"OLD": cleanState("OLD", false)}
	rows := []CleanupRow{{Anchor: "OLD", Hash: "w-OLD", Plain: true}}
	got := DecideCleanup(inTab, "Airport", rows, states, cleanupBase, sheetWithInput)
	if want := []Queue{del("OLD", "w-OLD")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("cleanup %+v, want %+v", got, want)
	}
}

func TestI21_RowsHeldOrAmbiguousStayForReview(t *testing.T) {
	type tc struct {
		name   string
		rows   []CleanupRow
		states map[string]RowState
	}
	dup := func(h1, h2 string, p1, p2 bool) []CleanupRow {
		return []CleanupRow{{Anchor: "GKA", Hash: h1, Plain: p1}, {Anchor: "GKA", Hash: h2, Plain: p2}}
	}
	orphan := []CleanupRow{{Anchor: "OLD", Hash: "w-OLD", Plain: true}}
	with := func(anchor string, live bool, mut func(*RowState)) map[string]RowState {
		rs := cleanState(anchor, live)
		mut(&rs)
		return map[string]RowState{anchor: rs}
	}
	live := func(mut func(*RowState)) map[string]RowState { return with("GKA", true, mut) }
	gone := func(mut func(*RowState)) map[string]RowState { return with("OLD", false, mut) }
	candidate := func(rs *RowState) {
		rs.Sheet = map[string]SheetField{"name": {ShownHash: "s", ShownKnown: true, CandidateHash: "h-A", CandidateEpoch: 1}}
	}
	conflictField := func(rs *RowState) { rs.Sheet = map[string]SheetField{"name": {ConflictID: "cf1"}} }
	openConflicts := func(rs *RowState) { rs.OpenConflicts = 1 }
	inFlight := func(rs *RowState) { rs.InFlight = true }
	changed := func(rs *RowState) { rs.VisibleSeq = cleanupBase + 1 }
	neverWritten := func(rs *RowState) { rs.VisibleHash, rs.Bound = "", false }
	same := dup("w-GKA", "w-GKA", true, true)
	for _, c := range []tc{
		{"duplicates with an active candidate", same, live(candidate)},
		{"duplicates with a conflicted field", same, live(conflictField)},
		{"duplicates with an open conflict", same, live(openConflicts)},
		{"duplicates with an effect in flight", same, live(inFlight)},
		{"duplicates changed since base", same, live(changed)},
		{"duplicates never written by the system", same, live(neverWritten)},
		{"duplicates that differ (a person's data)", dup("w-GKA", "w-GKA-edited", true, true), live(func(*RowState) {})},
		{"identical duplicates a person edited", dup("edited", "edited", true, true), live(func(*RowState) {})},
		{"duplicates with a formula", dup("w-GKA", "w-GKA", true, false), live(func(*RowState) {})},
		{"duplicates of an orphan (ambiguous)", []CleanupRow{{Anchor: "OLD", Hash: "w-OLD", Plain: true}, {Anchor: "OLD", Hash: "w-OLD", Plain: true}},
			gone(func(*RowState) {})},
		{"orphan with an active candidate", orphan, gone(candidate)},
		{"orphan with an open conflict", orphan, gone(openConflicts)},
		{"orphan with an effect in flight", orphan, gone(inFlight)},
		{"orphan changed since base", orphan, gone(changed)},
		{"orphan carrying a person's data", []CleanupRow{{Anchor: "OLD", Hash: "edited", Plain: true}}, gone(func(*RowState) {})},
		{"orphan with a formula", []CleanupRow{{Anchor: "OLD", Hash: "w-OLD", Plain: false}}, gone(func(*RowState) {})},
		{"orphan the system never wrote", orphan, gone(neverWritten)},
		{"unknown anchor", []CleanupRow{{Anchor: "ZZZ", Hash: "h", Plain: true}}, map[string]RowState{}},
		{"a live row", []CleanupRow{{Anchor: "GKA", Hash: "w-GKA", Plain: true}}, live(func(*RowState) {})},
		{"rows without an anchor (evidence only)", []CleanupRow{{Hash: "w-", Plain: true}, {Hash: "w-", Plain: true}}, map[string]RowState{"": cleanState("", false)}},
		{"a row without an anchor (evidence only)", []CleanupRow{{Hash: "w-", Plain: true}}, map[string]RowState{"": cleanState("", false)}},
	} {
		if got := DecideCleanup(inTab, "Airport", c.rows, c.states, cleanupBase, sheetWithInput); len(got) != 0 {
			t.Errorf("%s: cleanup queued %+v", c.name, got)
		}
	}
}

func TestI21_EveryCleanupDeleteIsGuardedByTheRowHashReadNow(t *testing.T) {
	states := map[string]RowState{"GKA": cleanState("GKA", true), "OLD": cleanState("OLD", false), "POM": cleanState("POM", false)}
	rows := []CleanupRow{
		{Anchor: "OLD", Hash: "w-OLD", Plain: true},
		{Anchor: "GKA", Hash: "w-GKA", Plain: true},
		{Anchor: "GKA", Hash: "w-GKA", Plain: true},
		{Anchor: "POM", Hash: "w-POM", Plain: true},
		{Hash: "blank", Plain: true},
	}
	got := DecideCleanup(inTab, "Airport", rows, states, cleanupBase, sheetWithInput)
	want := []Queue{del("OLD", "w-OLD"), del("GKA", "w-GKA"), del("POM", "w-POM")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cleanup %+v, want %+v (sheet order)", got, want)
	}
	for _, q := range got {
		if q.Op != events.OpDelete || q.ExpectedHash == "" || q.Target.Tab != inTab {
			t.Fatalf("not a full-row CAS delete of the Input tab: %+v", q)
		}
	}
}

// A cleanup of a large tab reads the state of duplicates and of rows
// whose entity does not exist only: a single row of a live entity, its
// state not read, is never surplus, and the decision over the states
// read is the one over every state.
func TestI21_CleanupNeedsTheStateOfDuplicatesAndOrphansOnly(t *testing.T) {
	if CleanupNeedsState(1, true) || !CleanupNeedsState(2, true) || !CleanupNeedsState(1, false) {
		t.Fatal("CleanupNeedsState")
	}
	all := map[string]RowState{"GKA": cleanState("GKA", true), "LAE": cleanState("LAE", true), "OLD": cleanState("OLD", false)}
	rows := []CleanupRow{{Anchor: "GKA", Hash: "w-GKA", Plain: true}, {Anchor: "LAE", Hash: "w-LAE", Plain: true},
		{Anchor: "OLD", Hash: "w-OLD", Plain: true}, {Anchor: "GKA", Hash: "w-GKA", Plain: true}}
	needed := map[string]RowState{"GKA": all["GKA"], "OLD": all["OLD"]}
	got := DecideCleanup(inTab, "Airport", rows, needed, cleanupBase, sheetWithInput)
	want := DecideCleanup(inTab, "Airport", rows, all, cleanupBase, sheetWithInput)
	if len(want) != 2 || !reflect.DeepEqual(got, want) {
		t.Fatalf("with the needed states only %+v, with every state %+v", got, want)
	}
}
