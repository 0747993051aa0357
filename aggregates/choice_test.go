package aggregates

import (
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

func choiceShown(choice string) SheetChoice {
	return SheetChoice{ConflictID: "cf", Choice: choice, SystemShown: "Goroka", SheetShown: "Goroka Intl", RowHash: "audit-row"}
}

func TestParseChoiceReadsTheTwoDropdownChoicesLeniently(t *testing.T) {
	for in, want := range map[string]events.Resolution{"use sheet": events.ResolutionUseSheet, " Use  Sheet ": events.ResolutionUseSheet,
		"KEEP_SYSTEM": events.ResolutionAcknowledged, "keep system": events.ResolutionAcknowledged} {
		if got, ok := parseChoice(in); !ok || got != want {
			t.Errorf("parseChoice(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "yes", "use", "system_wins", "use sheets"} {
		if _, ok := parseChoice(in); ok {
			t.Errorf("parseChoice(%q) accepted", in)
		}
	}
}

func TestI30_AChoiceMatchingTheRowIsTheFencedCommandByTheSheetWithAStableID(t *testing.T) {
	st := acceptState(t)
	plan := PlanSheetChoice(choiceShown("use sheet"), st)
	want := Acknowledge{ConflictID: st.Conflict.ID, CanonicalRevision: 3, CandidateHash: st.Conflict.Sheet.CandidateHash, CandidateEpoch: 2,
		Actor: events.ActorSheet, CommandID: plan.Cmd.CommandID}
	if plan.Skip || plan.Reject != "" || plan.ShownMismatch || plan.How != events.ResolutionUseSheet || plan.Cmd != want {
		t.Fatalf("plan %+v", plan)
	}
	if again := PlanSheetChoice(choiceShown("use sheet"), st); again.Cmd.CommandID != plan.Cmd.CommandID || plan.Cmd.CommandID == "" {
		t.Fatalf("command ids %q and %q: a repeated poll must repeat the command", plan.Cmd.CommandID, again.Cmd.CommandID)
	}
	c, outcome, err := DecideSheetChoice(plan, choiceShown("use sheet"), st, sheetWithInput, now)
	if err != nil || outcome != ChoiceApplied {
		t.Fatalf("outcome %s err %v", outcome, err)
	}
	p := appendOf(t, c, events.EntityStream("Airport", "GKA")).Events[0].Payload.(events.EntityPersisted)
	if p.Actor != events.ActorSheet || p.Fields["name"] != "Goroka Intl" {
		t.Fatalf("committed %+v", p)
	}
}

func TestI30_AChoiceMadeAgainstValuesThatMovedOnIsStaleClearedAndExplained(t *testing.T) {
	st := acceptState(t)
	st.CandidateValue = "Goroka International" // the person typed again
	ch := choiceShown("use sheet")
	plan := PlanSheetChoice(ch, st)
	if !plan.ShownMismatch || plan.Cmd.CandidateHash == st.Conflict.Sheet.CandidateHash {
		t.Fatalf("plan %+v: the fence must carry what was shown", plan)
	}
	c, outcome, err := DecideSheetChoice(plan, ch, st, sheetWithInput, now)
	if err != nil || outcome != ChoiceRejected {
		t.Fatalf("outcome %s err %v", outcome, err)
	}
	cst := appendOf(t, c, events.ConflictStream(st.Conflict.ID))
	if got := types(cst.Events); !reflect.DeepEqual(got, []events.Type{events.TypeAcceptUserRequested, events.TypeAcceptUserStale}) {
		t.Fatalf("conflict stream %v", got)
	}
	if len(c.Queue) != 1 || c.Queue[0].ExpectedHash != "audit-row" || c.Queue[0].Values["resolution"] != "" ||
		c.Queue[0].Values["sheet_value"] != "Goroka International" || c.Queue[0].Values["result"] != choiceMovedOn {
		t.Fatalf("row update %+v: guarded by the row read, choice cleared, current value, reason", c.Queue)
	}
}

func TestI30_AChoiceOnAResolvedConflictIsSkippedWhenAsChosenElseRejectedAndCleared(t *testing.T) {
	st := acceptState(t)
	st.Conflict.Status, st.Conflict.Resolution, st.CandidateKnown = ConflictResolved, events.ResolutionUseSheet, false
	if plan := PlanSheetChoice(choiceShown("use sheet"), st); !plan.Skip {
		t.Fatalf("plan %+v: resolved as chosen", plan)
	}
	plan := PlanSheetChoice(choiceShown("keep system"), st)
	c, outcome, err := DecideSheetChoice(plan, choiceShown("keep system"), st, sheetWithInput, now)
	if err != nil || outcome != ChoiceRejected || len(c.Appends) != 0 || len(c.Queue) != 1 ||
		!reflect.DeepEqual(c.Queue[0].Values, map[string]any{"result": "not applied: already resolved (use sheet)", "resolution": ""}) {
		t.Fatalf("outcome %s err %v changes %+v", outcome, err, c)
	}
}

func TestI30_TextThatIsNotAChoiceIsExplainedOnceAndNeverCleared(t *testing.T) {
	st := acceptState(t)
	ch := choiceShown("later")
	c, outcome, _ := DecideSheetChoice(PlanSheetChoice(ch, st), ch, st, sheetWithInput, now)
	if outcome != ChoiceRejected || len(c.Queue) != 1 || c.Queue[0].Values["result"] != choiceNotAChoice {
		t.Fatalf("outcome %s queue %+v", outcome, c.Queue)
	}
	if _, cleared := c.Queue[0].Values["resolution"]; cleared {
		t.Fatal("a person's text was cleared")
	}
	ch.Result = choiceNotAChoice
	if plan := PlanSheetChoice(ch, st); !plan.Skip {
		t.Fatalf("plan %+v: the reason already shows", plan)
	}
}

func FuzzParseChoice(f *testing.F) {
	for _, s := range []string{"use sheet", "KEEP_SYSTEM", "", " use\tsheet ", "keep  system\n", "ｕｓｅ sheet"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		how, ok := parseChoice(s)
		if ok != (how == events.ResolutionUseSheet || how == events.ResolutionAcknowledged) {
			t.Fatalf("parseChoice(%q) = %q %v", s, how, ok)
		}
	})
}
