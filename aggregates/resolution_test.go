package aggregates

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// acceptState is what accept_user sees of openConflict: canonical "Goroka"
// at revision 3, the person's "Goroka Intl" as the candidate.
func acceptState(t testing.TB) AckState {
	return AckState{Conflict: openConflict(t), CanonicalRevision: 3, CanonicalValue: "Goroka", RowOutboxVersion: 5,
		Entity: entityAt(t), KeyField: keyField, CandidateValue: "Goroka Intl", CandidateKnown: true}
}

func useSheetCmd(cs ConflictState) Acknowledge {
	a := ack(cs)
	a.Actor = events.ActorCLI
	return a
}

func TestI30_UseSheetCommitsThePersonsValueResolvesClearsTheCandidateAndGuardsTheInputRow(t *testing.T) {
	st := acceptState(t)
	cs := st.Conflict
	c, outcome, id, err := DecideAcceptUser(st, useSheetCmd(cs), sheetWithInput, now)
	if err != nil || outcome != AckApplied {
		t.Fatalf("outcome %s err %v", outcome, err)
	}
	in := sheetWithInput.Target(inTab, "GKA")
	if id != EffectID(in.Binding, 6) {
		t.Fatalf("reconcile id %s, want the Input row's next stream_sequence", id)
	}
	ent := appendOf(t, c, events.EntityStream("Airport", "GKA"))
	p := ent.Events[0].Payload.(events.EntityPersisted)
	if ent.ExpectedVersion != 6 || len(ent.Events) != 1 || p.Created || p.Actor != events.ActorCLI ||
		!reflect.DeepEqual(p.Fields, map[string]any{"name": "Goroka Intl"}) || p.Revisions["name"] != 4 || len(p.Revisions) != 1 {
		t.Fatalf("entity change %+v at %d: the person's value as revision 4, with the actor", p, ent.ExpectedVersion)
	}
	fence := events.AckCommand{ConflictID: cs.ID, CanonicalRevision: 3, CandidateHash: cs.Sheet.CandidateHash, CandidateEpoch: 2,
		Actor: events.ActorCLI}
	applied := fence
	applied.ReconcileEffect = id
	want := []events.Payload{events.AcceptUserRequested(fence), events.AcceptUserApplied(applied),
		events.ConflictResolved{ConflictID: cs.ID, Resolution: events.ResolutionUseSheet, CanonicalRevision: 4, Actor: events.ActorCLI}}
	cst := appendOf(t, c, events.ConflictStream(cs.ID))
	if cst.ExpectedVersion != cs.Version || len(cst.Events) != len(want) {
		t.Fatalf("conflict stream %v", types(cst.Events))
	}
	for i, w := range want {
		if !reflect.DeepEqual(cst.Events[i].Payload, w) {
			t.Errorf("conflict event %d: %+v, want %+v", i, cst.Events[i].Payload, w)
		}
	}
	ob := appendOf(t, c, events.OutboxStream(in.Binding))
	q := ob.Events[0].Payload.(events.EffectQueued)
	if ob.ExpectedVersion != 5 || q.EffectID != id || q.Op != events.OpUpdate || q.ExpectedHash != "row-at-candidate" ||
		!reflect.DeepEqual(q.Values, map[string]any{"name": "Goroka Intl"}) {
		t.Fatalf("input reconcile %+v: the person's value, guarded by the candidate-time row hash", q)
	}
	clr := appendOf(t, c, events.InboundStream(inTab))
	if len(clr.Events) != 1 || clr.Events[0].Payload != (events.CandidateCleared{Binding: cs.Binding, Field: "name", Epoch: 3,
		Reason: string(events.ResolutionUseSheet)}) {
		t.Fatalf("the candidate must be cleared at epoch 3: %+v", clr)
	}
	sys := sheetWithInput.RowTabs("Airport")[0].Tab
	if len(c.Queue) != 2 || c.Queue[0].Target != sheetWithInput.Target(sys, "GKA") || c.Queue[0].ExpectedHash != "" ||
		!reflect.DeepEqual(c.Queue[0].Values, map[string]any{"name": "Goroka Intl"}) || c.Queue[1].Target != sheetWithInput.Target(conflictsTab, cs.ID) {
		t.Fatalf("queue %+v: the System row through the ordinary effect, then the audit row", c.Queue)
	}
}

func TestI30_UseSheetWithAMovedFenceIsStaleAndChangesNothing(t *testing.T) {
	for name, change := range map[string]func(*AckState, *Acknowledge){
		"an application commit raised the revision": func(s *AckState, _ *Acknowledge) { s.CanonicalRevision = 4 },
		"the person typed again":                    func(s *AckState, _ *Acknowledge) { s.Conflict.Sheet.CandidateHash = "h-newer" },
		"an old candidate epoch":                    func(_ *AckState, a *Acknowledge) { a.CandidateEpoch = 1 },
		"another candidate hash":                    func(_ *AckState, a *Acknowledge) { a.CandidateHash = "h-other" },
	} {
		st := acceptState(t)
		cmd := useSheetCmd(st.Conflict)
		change(&st, &cmd)
		c, outcome, id, err := DecideAcceptUser(st, cmd, sheetWithInput, now)
		if !errors.Is(err, ErrConflictStale) || errors.Is(err, ErrAckStale) || outcome != AckStale || id != "" {
			t.Errorf("%s: outcome %s id %q err %v, want conflict_stale", name, outcome, id, err)
			continue
		}
		evs := allEvents(c)
		stale := only[events.AcceptUserStale](evs)
		if len(evs) != 2 || evs[0].Type() != events.TypeAcceptUserRequested || len(stale) != 1 || stale[0].Reason != reasonFenceMismatch ||
			len(c.Queue) != 0 || len(c.Appends) != 1 {
			t.Errorf("%s: recorded %v queue %+v", name, types(evs), c.Queue)
		}
	}
}

func TestI30_UseSheetOfAResolvedLegacyOrValuelessConflictIsRejected(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*AckState)
		want   error
		reason string
	}{
		"resolved":               {func(s *AckState) { s.Conflict.Status = ConflictResolved }, ErrConflictNotOpen, reasonNotOpen},
		"legacy (I14)":           {func(s *AckState) { s.Conflict.VisibleHash = "" }, ErrConflictBlocked, reasonNoEvidence},
		"candidate value absent": {func(s *AckState) { s.CandidateKnown = false }, ErrConflictBlocked, reasonCandidateUnknown},
		"value of another hash":  {func(s *AckState) { s.CandidateValue = "Goroka" }, ErrConflictBlocked, reasonCandidateUnknown},
	} {
		st := acceptState(t)
		tc.change(&st)
		c, outcome, _, err := DecideAcceptUser(st, useSheetCmd(openConflict(t)), sheetWithInput, now)
		rej := only[events.AcceptUserRejected](allEvents(c))
		if !errors.Is(err, tc.want) || outcome != AckRejected || len(rej) != 1 || rej[0].Reason != tc.reason || len(allEvents(c)) != 2 ||
			len(c.Queue) != 0 {
			t.Errorf("%s: outcome %s err %v events %v", name, outcome, err, types(allEvents(c)))
		}
	}
}

func TestI30_KeepSystemErrorsMatchBothTheConflictAndTheAcknowledgeCodes(t *testing.T) {
	st := acceptState(t)
	st.CanonicalRevision = 4
	if _, _, _, err := DecideAcknowledge(st, ack(st.Conflict), sheetWithInput, now); !errors.Is(err, ErrConflictStale) || !errors.Is(err, ErrAckStale) {
		t.Fatalf("stale acknowledge: %v", err)
	}
	st = acceptState(t)
	st.Conflict.Status = ConflictResolved
	if _, _, _, err := DecideAcknowledge(st, ack(st.Conflict), sheetWithInput, now); !errors.Is(err, ErrConflictNotOpen) || !errors.Is(err, ErrAckRejected) {
		t.Fatalf("acknowledge of a resolved conflict: %v", err)
	}
}

func TestI30_KeepSystemErrorsReadAsOneLineWithTheResolutionCodeFirst(t *testing.T) {
	st := acceptState(t)
	st.Conflict.Status = ConflictResolved
	_, _, _, err := DecideAcknowledge(st, ack(st.Conflict), sheetWithInput, now)
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "conflict_not_open: ") {
		t.Fatalf("a person reads %q", msg)
	}
	st = acceptState(t)
	st.CanonicalRevision = 4
	_, _, _, err = DecideAcknowledge(st, ack(st.Conflict), sheetWithInput, now)
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "conflict_stale: ") {
		t.Fatalf("a person reads %q", msg)
	}
}

func TestI30_ARepeatedCommandIDReturnsTheFirstOutcomeAndAnotherPayloadFailsClosed(t *testing.T) {
	st := acceptState(t)
	cmd := useSheetCmd(st.Conflict)
	cmd.CommandID = "cmd-1"
	first := CommandRecord{CommandID: "cmd-1", ConflictID: cmd.ConflictID, Resolution: events.ResolutionUseSheet, CanonicalRevision: 3,
		CandidateHash: cmd.CandidateHash, CandidateEpoch: 2, Outcome: AckApplied, ReconcileEffect: "fx-1"}
	st.Prior = &first
	// The conflict is resolved by now: the repeat still answers applied.
	st.Conflict.Status = ConflictResolved
	c, outcome, id, err := DecideAcceptUser(st, cmd, sheetWithInput, now)
	if err != nil || outcome != AckApplied || id != "fx-1" || !c.Empty() {
		t.Fatalf("repeat: %s %q %v %v", outcome, id, err, types(allEvents(c)))
	}
	stale := first
	stale.Outcome, stale.Reason = AckStale, reasonFenceMismatch
	st.Prior = &stale
	if c, outcome, _, err := DecideAcceptUser(st, cmd, sheetWithInput, now); !errors.Is(err, ErrConflictStale) || outcome != AckStale || !c.Empty() {
		t.Fatalf("repeat of a stale command: %s %v", outcome, err)
	}
	st.Prior = &first
	other := cmd
	other.CandidateEpoch = 3
	if c, outcome, _, err := DecideAcceptUser(st, other, sheetWithInput, now); !errors.Is(err, ErrCommandIDReused) || outcome != "" || !c.Empty() {
		t.Fatalf("another fence under the same id: %s %v", outcome, err)
	}
	if c, outcome, _, err := DecideAcknowledge(st, cmd, sheetWithInput, now); !errors.Is(err, ErrCommandIDReused) || outcome != "" || !c.Empty() {
		t.Fatalf("keep_system under a use_sheet command's id: %s %v", outcome, err)
	}
}

func TestDecideAcceptUserIsDeterministic(t *testing.T) {
	st := acceptState(t)
	a, _, _, err1 := DecideAcceptUser(st, useSheetCmd(st.Conflict), sheetWithInput, now)
	b, _, _, err2 := DecideAcceptUser(st, useSheetCmd(st.Conflict), sheetWithInput, now)
	if err1 != nil || err2 != nil || !sameBytes(records(t, a), records(t, b)) || !sameBytes(queueRecords(t, a.Queue), queueRecords(t, b.Queue)) {
		t.Fatal("the same inputs gave different changes")
	}
}

func TestI30_AResolutionRacingAnApplicationCommitThatResolvedTheConflictIsStaleNotRejected(t *testing.T) {
	st := acceptState(t)
	cmd := useSheetCmd(st.Conflict)
	st.Conflict.Status, st.Conflict.Resolution, st.CanonicalRevision = ConflictResolved, events.ResolutionSystemWins, 4 // I12
	for name, decide := range map[string]func(AckState, Acknowledge, Sheet, time.Time) (Changes, AckOutcome, string, error){
		"use_sheet": DecideAcceptUser, "keep_system": DecideAcknowledge,
	} {
		c, outcome, _, err := decide(st, cmd, sheetWithInput, now)
		if !errors.Is(err, ErrConflictStale) || outcome != AckStale || len(allEvents(c)) != 2 || len(c.Queue) != 0 {
			t.Errorf("%s: outcome %s err %v events %v", name, outcome, err, types(allEvents(c)))
		}
	}
	// A conflict a person resolved is not open, whatever the revision now.
	st.Conflict.Resolution = events.ResolutionUseSheet
	if _, outcome, _, err := DecideAcceptUser(st, cmd, sheetWithInput, now); !errors.Is(err, ErrConflictNotOpen) || outcome != AckRejected {
		t.Fatalf("after a person's resolution: %s %v", outcome, err)
	}
}
