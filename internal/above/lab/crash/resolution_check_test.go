package crash

import (
	"io"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/mirrorcheck"
)

// ledgerLog builds a log for the checker: each call appends one commit.
type ledgerLog struct {
	k   *checker
	seq uint64
}

func newLedgerLog() *ledgerLog {
	c := &campaign{out: io.Discard, res: Result{Failpoints: map[string]int{}}}
	return &ledgerLog{k: newChecker("", c)}
}

func (l *ledgerLog) commit(id string, ps ...events.Payload) {
	for _, p := range ps {
		l.seq++
		l.k.logEvent(1, events.Event{Seq: l.seq, Commit: id, Payload: p})
	}
}

func useSheetApplied(conflict, cmd, item, value string, actor events.Actor) []events.Payload {
	return []events.Payload{
		events.AcceptUserRequested{ConflictID: conflict, CommandID: cmd, Actor: actor},
		events.AcceptUserApplied{ConflictID: conflict, CommandID: cmd, Actor: actor},
		events.EntityPersisted{Entity: "Item", ID: item, Fields: map[string]any{"note": value}, Revisions: map[string]uint64{"note": 3},
			Actor: actor},
		events.ConflictResolved{ConflictID: conflict, Resolution: events.ResolutionUseSheet, Actor: actor},
	}
}

func resolvedLine(t *testing.T, line string) resolutionLine {
	t.Helper()
	r, ok := parseResolution(line)
	if !ok {
		t.Fatalf("line %q does not parse", line)
	}
	return r
}

func TestResolutionLineParsesAValueWithSpacesAndQuotes(t *testing.T) {
	r := resolvedLine(t, `RESOLVED cf1 use_sheet cmd1 sheet r001-0001 "a \"b\"\tc d"`)
	want := resolutionLine{conflict: "cf1", how: hikoutei.UseSheet, command: "cmd1", actor: hikoutei.ActorSheet, entity: "r001-0001",
		value: "a \"b\"\tc d", outcome: hikoutei.AckApplied}
	if r != want {
		t.Fatalf("parsed %+v, want %+v", r, want)
	}
	u := resolvedLine(t, "UNAPPLIED cf2 keep_system cmd2 stale")
	if u.conflict != "cf2" || u.how != hikoutei.KeepSystem || u.outcome != hikoutei.AckStale {
		t.Fatalf("parsed %+v", u)
	}
	if _, ok := parseResolution("RESOLVED cf1 use_sheet cmd1 sheet r1 unquoted"); ok {
		t.Fatal("a RESOLVED line without a quoted value parsed")
	}
}

func TestResolutionCheckPassesALoggedUseSheetWhoseValueTheReadModelShows(t *testing.T) {
	l := newLedgerLog()
	l.commit("c1", useSheetApplied("cf1", "cmd1", "i1", "person-1-2", events.ActorCLI)...)
	l.k.resolution(resolvedLine(t, `RESOLVED cf1 use_sheet cmd1 cli i1 "person-1-2"`))
	l.k.resolution(resolvedLine(t, `RESOLVED cf1 use_sheet cmd1 cli i1 "person-1-2"`)) // the repeat
	l.k.verifyResolutions(1, map[string]string{"i1": "person-1-2"})
	res := l.k.c.res
	if !res.OK() || res.ResolvedUseSheet != 1 || res.Acked != 1 {
		t.Fatalf("%s acked=%d problems %v", res.Line(), res.Acked, res.Problems)
	}
}

func TestResolutionCheckExcusesAUseSheetValueALaterCommitChanged(t *testing.T) {
	l := newLedgerLog()
	l.commit("c1", useSheetApplied("cf1", "cmd1", "i1", "person-1-2", events.ActorSheet)...)
	l.commit("c2", events.EntityPersisted{Entity: "Item", ID: "i1", Fields: map[string]any{"note": "sys-7"}})
	l.k.resolution(resolvedLine(t, `RESOLVED cf1 use_sheet cmd1 sheet i1 "person-1-2"`))
	l.k.verifyResolutions(1, map[string]string{"i1": "sys-7"})
	if res := l.k.c.res; !res.OK() {
		t.Fatalf("%s %v", res.Line(), res.Problems)
	}
}

func TestResolutionCheckCountsAMissingResolutionAsLost(t *testing.T) {
	l := newLedgerLog()
	l.k.resolution(resolvedLine(t, `RESOLVED cf1 keep_system cmd1 application i1 "person-1-2"`))
	l.k.verifyResolutions(1, map[string]string{"i1": "sys-1"})
	if res := l.k.c.res; res.Lost != 1 {
		t.Fatalf("%s %v", res.Line(), res.Problems)
	}
}

func TestResolutionCheckCountsAUseSheetValueTheReadModelLostAsMismatch(t *testing.T) {
	l := newLedgerLog()
	l.commit("c1", useSheetApplied("cf1", "cmd1", "i1", "person-1-2", events.ActorApplication)...)
	l.k.resolution(resolvedLine(t, `RESOLVED cf1 use_sheet cmd1 application i1 "person-1-2"`))
	l.k.verifyResolutions(1, map[string]string{"i1": "sys-1"})
	if res := l.k.c.res; res.Mismatches != 1 {
		t.Fatalf("%s %v", res.Line(), res.Problems)
	}
}

func TestResolutionCheckCountsAWrongResolutionOrActorAsMismatch(t *testing.T) {
	l := newLedgerLog()
	l.commit("c1", events.AckApplied{ConflictID: "cf1", CommandID: "cmd1", Actor: events.ActorCLI},
		events.ConflictResolved{ConflictID: "cf1", Resolution: events.ResolutionAcknowledged, Actor: events.ActorCLI})
	l.k.resolution(resolvedLine(t, `RESOLVED cf1 keep_system cmd1 sheet i1 "x"`))
	l.k.verifyResolutions(1, nil)
	if res := l.k.c.res; res.Mismatches != 1 {
		t.Fatalf("%s %v", res.Line(), res.Problems)
	}
}

func TestResolutionCheckCountsAConflictResolvedTwiceAsDuplicate(t *testing.T) {
	l := newLedgerLog()
	l.commit("c1", events.ConflictResolved{ConflictID: "cf1", Resolution: events.ResolutionSystemWins})
	l.commit("c2", useSheetApplied("cf1", "cmd1", "i1", "person-1-2", events.ActorCLI)...)
	if res := l.k.c.res; res.Duplicates != 1 {
		t.Fatalf("%s %v", res.Line(), res.Problems)
	}
}

func TestResolutionCheckRequiresAStaleOutcomeRecordedAndNotApplied(t *testing.T) {
	l := newLedgerLog()
	l.commit("c1", events.AcceptUserRequested{ConflictID: "cf1", CommandID: "cmd1"},
		events.AcceptUserStale{ConflictID: "cf1", CommandID: "cmd1", Reason: "fence_mismatch"})
	l.commit("c2", events.AckApplied{ConflictID: "cf2", CommandID: "cmd2"},
		events.ConflictResolved{ConflictID: "cf2", Resolution: events.ResolutionAcknowledged})
	l.k.resolution(resolvedLine(t, "UNAPPLIED cf1 use_sheet cmd1 stale"))      // fine
	l.k.resolution(resolvedLine(t, "UNAPPLIED cf2 keep_system cmd2 stale"))    // applied in the log
	l.k.resolution(resolvedLine(t, "UNAPPLIED cf3 keep_system cmd3 rejected")) // not recorded
	l.k.verifyResolutions(1, nil)
	res := l.k.c.res
	if res.Mismatches != 1 || res.Lost != 1 || res.ResolutionsUnapplied != 3 || res.Acked != 0 {
		t.Fatalf("%s acked=%d %v", res.Line(), res.Acked, res.Problems)
	}
}

func TestResolutionCheckCountsARepeatWithAnotherOutcomeAsMismatch(t *testing.T) {
	l := newLedgerLog()
	l.k.resolution(resolvedLine(t, `RESOLVED cf1 keep_system cmd1 cli i1 "x"`))
	l.k.resolution(resolvedLine(t, "UNAPPLIED cf1 keep_system cmd1 rejected"))
	if res := l.k.c.res; res.Mismatches != 1 {
		t.Fatalf("%s %v", res.Line(), res.Problems)
	}
}

func TestCrashLineKeepsTheFourCountsFirst(t *testing.T) {
	got := Result{Runs: 3, ResolvedKeepSystem: 1, ResolvedUseSheet: 2, ResolutionsUnapplied: 4, Mirror: mirrorcheck.Result{LogHead: 9, Mirrored: 9}}.Line()
	want := "crash: runs=3 lost=0 duplicates=0 mismatches=0 resolved_keep_system=1 resolved_use_sheet=2 resolutions_unapplied=4 mirror_head=9 log_head=9"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
