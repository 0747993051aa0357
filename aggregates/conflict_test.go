package aggregates

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// openConflict is an open conflict on Airport GKA's name: the person typed
// "Goroka Intl" (candidate, epoch 2) while canonical moved to revision 3.
func openConflict(t testing.TB) ConflictState {
	t.Helper()
	b := binding(inTab, "GKA")
	cid := ConflictID(b, "name", 2)
	ch := shown(t, "Goroka Intl")
	return ConflictState{
		Conflict: Conflict{ID: cid, Entity: "Airport", EntityID: "GKA", Field: "name", Tab: inTab, Anchor: "GKA", Binding: b,
			Status: ConflictOpen, CanonicalRevision: 3, CandidateHash: ch, CandidateEpoch: 2, VisibleRevision: 4,
			VisibleHash: "row-at-candidate", SystemValue: "Goroka", SheetValue: "Goroka Intl"},
		Sheet:   SheetField{ShownHash: shown(t, "Goroka (old)"), ShownKnown: true, CandidateHash: ch, CandidateEpoch: 2, CandidateRow: "row-at-candidate", CandidateRev: 4, ConflictID: cid},
		Version: 1, InboundVersion: 9,
	}
}

func legacy(t testing.TB) ConflictState {
	cs := openConflict(t)
	cs.VisibleHash, cs.VisibleRevision = "", 0
	return cs
}

// entityAt is Airport GKA at revision 3 of every field.
func entityAt(t testing.TB) EntityState {
	return EntityState{Exists: true, Version: 6, Fields: map[string]FieldState{
		"name": {Hash: canon(t, "Goroka"), Revision: 3}, "notes": {Hash: canon(t, "n"), Revision: 3}, "alt": {Hash: canon(t, int64(5282)), Revision: 3}}}
}

func TestI12_ResolvesOnCommitOnlyOnAStrictlyHigherRevisionOfTheSameField(t *testing.T) {
	cs := openConflict(t)
	resolved := cs
	resolved.Status = ConflictResolved
	for _, tc := range []struct {
		name  string
		c     ConflictState
		field string
		rev   uint64
		want  bool
	}{
		{"higher revision, same field", cs, "name", 4, true},
		{"same revision", cs, "name", 3, false},
		{"lower revision", cs, "name", 2, false},
		{"unrelated field", cs, "notes", 9, false},
		{"already resolved", resolved, "name", 4, false},
		{"legacy conflict (I14)", legacy(t), "name", 4, false},
	} {
		if got := resolvesOnCommit(tc.c, tc.field, tc.rev); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestI12_ACommitRaisingTheConflictedFieldResolvesSystemWinsAndGuardsTheInputRow(t *testing.T) {
	cs := openConflict(t)
	d, err := DecidePersist(entityAt(t), Persist{Entity: "Airport", ID: "GKA",
		Values: map[string]any{"name": "Goroka Regional", "notes": "n", "alt": int64(5282)}}, now)
	if err != nil {
		t.Fatal(err)
	}
	rowFx := RowEffects(sheetWithInput, "Airport", "GKA", keyField, d.Events[0].Payload)
	if len(rowFx) != 2 {
		t.Fatalf("row effects %+v", rowFx)
	}
	c, fx, err := DecideCommitConflicts(d, []ConflictState{cs}, rowFx, sheetWithInput, now)
	if err != nil {
		t.Fatal(err)
	}
	res := appendOf(t, c, events.ConflictStream(cs.ID))
	if res.ExpectedVersion != cs.Version || len(res.Events) != 1 ||
		res.Events[0].Payload != (events.ConflictResolved{ConflictID: cs.ID, Resolution: events.ResolutionSystemWins, CanonicalRevision: 4,
			Actor: events.ActorApplication}) {
		t.Fatalf("conflict stream %+v", res)
	}
	clr := appendOf(t, c, events.InboundStream(inTab))
	if clr.ExpectedVersion != cs.InboundVersion || len(clr.Events) != 1 ||
		clr.Events[0].Payload != (events.CandidateCleared{Binding: cs.Binding, Field: "name", Epoch: 3, Reason: string(events.ResolutionSystemWins)}) {
		t.Fatalf("candidate not cleared with epoch + 1: %+v", clr)
	}
	if len(c.Appends) != 2 || len(c.Queue) != 1 {
		t.Fatalf("changes %v, queue %+v", streams(c), c.Queue)
	}
	audit := c.Queue[0]
	if audit.Target != sheetWithInput.Target(conflictsTab, cs.ID) || audit.Op != events.OpUpdate ||
		!reflect.DeepEqual(audit.Values, sheetWithInput.AuditResolved(events.ResolutionSystemWins, events.ActorApplication, now)) || audit.Entity != "Airport" || audit.ID != "GKA" {
		t.Fatalf("audit row update %+v", audit)
	}
	for i, q := range fx {
		switch q.Target.Binding {
		case cs.Binding:
			if q.ExpectedHash != "row-at-candidate" {
				t.Errorf("the Input row rewrite must be guarded by the candidate-time row hash: %+v", q)
			}
		default:
			if q.ExpectedHash != "" {
				t.Errorf("System row effect guarded: %+v", q)
			}
		}
		if q.Op != rowFx[i].Op || !reflect.DeepEqual(q.Values, rowFx[i].Values) {
			t.Errorf("row effect %d changed beyond its guard: %+v vs %+v", i, q, rowFx[i])
		}
	}
	if rowFx[1].ExpectedHash != "" {
		t.Fatal("DecideCommitConflicts modified the caller's rowFx in place")
	}
}

func TestI12_UnrelatedFieldsAndSameValueWritesAreNotApproval(t *testing.T) {
	cs := openConflict(t)
	unrelated, err := DecidePersist(entityAt(t), Persist{Entity: "Airport", ID: "GKA",
		Values: map[string]any{"name": "Goroka", "notes": "new notes", "alt": int64(5282)}}, now)
	if err != nil || len(unrelated.Events) != 1 {
		t.Fatalf("%+v %v", unrelated, err)
	}
	rowFx := RowEffects(sheetWithInput, "Airport", "GKA", keyField, unrelated.Events[0].Payload)
	c, fx, err := DecideCommitConflicts(unrelated, []ConflictState{cs}, rowFx, sheetWithInput, now)
	if err != nil || !c.Empty() || !reflect.DeepEqual(fx, rowFx) {
		t.Fatalf("an unrelated field resolved or guarded something: %+v %+v %v", c, fx, err)
	}
	same, _ := DecidePersist(entityAt(t), Persist{Entity: "Airport", ID: "GKA",
		Values: map[string]any{"name": "Goroka", "notes": "n", "alt": int64(5282)}}, now)
	c, fx, err = DecideCommitConflicts(same, []ConflictState{cs}, nil, sheetWithInput, now)
	if err != nil || !c.Empty() || fx != nil || len(same.Events) != 0 {
		t.Fatalf("a same-value write resolved something: %+v %v", c, err)
	}
	// A revision that is not strictly higher (a replayed or stale decision) is no approval either.
	stale := Decision{Stream: events.EntityStream("Airport", "GKA"), Events: []events.Event{events.New(events.EntityStream("Airport", "GKA"),
		events.EntityPersisted{Entity: "Airport", ID: "GKA", Fields: map[string]any{"name": "x"}, Revisions: map[string]uint64{"name": 3}}, now)}}
	if c, _, err := DecideCommitConflicts(stale, []ConflictState{cs}, nil, sheetWithInput, now); err != nil || !c.Empty() {
		t.Fatalf("revision 3 over a conflict opened at 3 resolved it: %+v %v", c, err)
	}
}

func TestI12_TwoConflictedFieldsRaisedInOneCommitResolveBoth(t *testing.T) {
	name := openConflict(t)
	notes := openConflict(t)
	notes.Field, notes.ID = "notes", ConflictID(notes.Binding, "notes", 2)
	d, _ := DecidePersist(entityAt(t), Persist{Entity: "Airport", ID: "GKA",
		Values: map[string]any{"name": "N2", "notes": "n2", "alt": int64(5282)}}, now)
	c, _, err := DecideCommitConflicts(d, []ConflictState{name, notes}, nil, sheetWithInput, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(only[events.ConflictResolved](allEvents(c))) != 2 || len(c.Queue) != 2 {
		t.Fatalf("want both resolved: %v", types(allEvents(c)))
	}
	in := appendOf(t, c, events.InboundStream(inTab))
	if len(in.Events) != 2 || in.ExpectedVersion != name.InboundVersion {
		t.Fatalf("one inbound append with both clears at the read version, got %+v", in)
	}
}

func TestI15_RemovingAnEntityWithAnOpenConflictFailsClosed(t *testing.T) {
	r, err := DecideRemove(entityAt(t), Remove{Entity: "Airport", ID: "GKA"}, now)
	if err != nil {
		t.Fatal(err)
	}
	rowFx := RowEffects(sheetWithInput, "Airport", "GKA", keyField, r.Events[0].Payload)
	for name, open := range map[string][]ConflictState{"open": {openConflict(t)}, "legacy (I14)": {legacy(t)}} {
		c, fx, err := DecideCommitConflicts(r, open, rowFx, sheetWithInput, now)
		if !errors.Is(err, ErrConflictOpen) {
			t.Fatalf("%s: err = %v, want ErrConflictOpen", name, err)
		}
		if !c.Empty() || fx != nil {
			t.Fatalf("%s: something would commit: %+v %+v", name, c, fx)
		}
	}
	c, fx, err := DecideCommitConflicts(r, nil, rowFx, sheetWithInput, now)
	if err != nil || !c.Empty() || !reflect.DeepEqual(fx, rowFx) {
		t.Fatalf("remove without conflicts: %+v %v", c, err)
	}
}

func ack(cs ConflictState) Acknowledge {
	return Acknowledge{ConflictID: cs.ID, CanonicalRevision: 3, CandidateHash: cs.Sheet.CandidateHash, CandidateEpoch: cs.Sheet.CandidateEpoch}
}

func TestI13_AcknowledgeAppliedResolvesClearsTheCandidateAndQueuesTheGuardedReconcile(t *testing.T) {
	cs := openConflict(t)
	st := AckState{Conflict: cs, CanonicalRevision: 3, CanonicalValue: "Goroka", RowOutboxVersion: 5}
	c, outcome, id, err := DecideAcknowledge(st, ack(cs), sheetWithInput, now)
	if err != nil || outcome != AckApplied {
		t.Fatalf("outcome %s err %v", outcome, err)
	}
	row := sheetWithInput.Target(inTab, "GKA")
	if id != EffectID(row.Binding, 6) {
		t.Fatalf("reconcile id %s, want the Input row's next stream_sequence", id)
	}
	fence := events.AckCommand{ConflictID: cs.ID, CanonicalRevision: 3, CandidateHash: cs.Sheet.CandidateHash, CandidateEpoch: 2}
	applied := fence
	applied.ReconcileEffect = id
	cst := appendOf(t, c, events.ConflictStream(cs.ID))
	wantC := []events.Payload{events.AckRequested(fence), events.AckApplied(applied),
		events.ConflictResolved{ConflictID: cs.ID, Resolution: events.ResolutionAcknowledged, CanonicalRevision: 3}}
	if cst.ExpectedVersion != cs.Version || len(cst.Events) != len(wantC) {
		t.Fatalf("conflict stream %v at %d", types(cst.Events), cst.ExpectedVersion)
	}
	for i, w := range wantC {
		if !reflect.DeepEqual(cst.Events[i].Payload, w) {
			t.Errorf("conflict event %d: %+v, want %+v", i, cst.Events[i].Payload, w)
		}
	}
	ob := appendOf(t, c, events.OutboxStream(row.Binding))
	q := ob.Events[0].Payload.(events.EffectQueued)
	if ob.ExpectedVersion != 5 || q.EffectID != id || q.StreamSequence != 6 || q.Op != events.OpUpdate || q.Tab != inTab || q.Anchor != "GKA" ||
		!reflect.DeepEqual(q.Values, map[string]any{"name": "Goroka"}) || q.ExpectedHash != "row-at-candidate" {
		t.Fatalf("reconcile %+v at %d: the Input cell to canonical, guarded by the candidate-time row hash", q, ob.ExpectedVersion)
	}
	in := appendOf(t, c, events.InboundStream(inTab))
	if in.ExpectedVersion != cs.InboundVersion || len(in.Events) != 1 ||
		in.Events[0].Payload != (events.CandidateCleared{Binding: cs.Binding, Field: "name", Epoch: 3, Reason: string(events.ResolutionAcknowledged)}) {
		t.Fatalf("%s must move the epoch to 3: %+v", events.TypeCandidateCleared, in)
	}
	if len(c.Appends) != 3 || len(c.Queue) != 1 || c.Queue[0].Target != sheetWithInput.Target(conflictsTab, cs.ID) ||
		!reflect.DeepEqual(c.Queue[0].Values, sheetWithInput.AuditResolved(events.ResolutionAcknowledged, "", now)) {
		t.Fatalf("appends %v queue %+v", streams(c), c.Queue)
	}
	// The old command can never match again: the epoch moved (no ABA).
	after := cs
	after.Status, after.Sheet.CandidateEpoch, after.Sheet.CandidateHash = ConflictResolved, 3, ""
	if _, o, _, err := DecideAcknowledge(AckState{Conflict: after, CanonicalRevision: 3}, ack(cs), sheetWithInput, now); o != AckRejected || !errors.Is(err, ErrAckRejected) {
		t.Fatalf("replayed command after resolution: %s %v", o, err)
	}
}

func TestI13_AcknowledgeWithAMovedFenceIsStaleAndChangesNothing(t *testing.T) {
	cs := openConflict(t)
	base := AckState{Conflict: cs, CanonicalRevision: 3, CanonicalValue: "Goroka", RowOutboxVersion: 5}
	for name, tc := range map[string]struct {
		st  func(*AckState)
		cmd func(*Acknowledge)
	}{
		"canonical revision moved":    {func(s *AckState) { s.CanonicalRevision = 4 }, nil},
		"command names old revision":  {nil, func(a *Acknowledge) { a.CanonicalRevision = 2 }},
		"another candidate hash":      {nil, func(a *Acknowledge) { a.CandidateHash = "h-other" }},
		"person typed again":          {func(s *AckState) { s.Conflict.Sheet.CandidateHash = "h-newer" }, nil},
		"old candidate epoch":         {nil, func(a *Acknowledge) { a.CandidateEpoch = 1 }},
		"candidate cleared":           {func(s *AckState) { s.Conflict.Sheet.CandidateHash = "" }, func(a *Acknowledge) { a.CandidateHash = "" }},
		"epoch moved under the fence": {func(s *AckState) { s.Conflict.Sheet.CandidateEpoch = 3 }, nil},
	} {
		st, cmd := base, ack(cs)
		if tc.st != nil {
			tc.st(&st)
		}
		if tc.cmd != nil {
			tc.cmd(&cmd)
		}
		c, outcome, id, err := DecideAcknowledge(st, cmd, sheetWithInput, now)
		if !errors.Is(err, ErrAckStale) || outcome != AckStale || id != "" {
			t.Errorf("%s: outcome %s id %q err %v, want stale", name, outcome, id, err)
			continue
		}
		fence := events.AckCommand{ConflictID: cmd.ConflictID, CanonicalRevision: cmd.CanonicalRevision, CandidateHash: cmd.CandidateHash,
			CandidateEpoch: cmd.CandidateEpoch}
		stale := fence
		stale.Reason = "fence_mismatch"
		want := []events.Payload{events.AckRequested(fence), events.AckStale(stale)}
		if len(c.Appends) != 1 || c.Appends[0].Stream != events.ConflictStream(cs.ID) || c.Appends[0].ExpectedVersion != cs.Version ||
			len(c.Queue) != 0 || len(c.Appends[0].Events) != 2 {
			t.Errorf("%s: changes %v queue %+v", name, types(allEvents(c)), c.Queue)
			continue
		}
		for i, w := range want {
			if !reflect.DeepEqual(c.Appends[0].Events[i].Payload, w) {
				t.Errorf("%s: event %d %+v, want %+v", name, i, c.Appends[0].Events[i].Payload, w)
			}
		}
	}
}

func TestI13_AcknowledgeOfAConflictThatIsNotOpenIsRejected(t *testing.T) {
	cs := openConflict(t)
	cs.Status = ConflictResolved
	c, outcome, _, err := DecideAcknowledge(AckState{Conflict: cs, CanonicalRevision: 3}, ack(cs), sheetWithInput, now)
	if !errors.Is(err, ErrAckRejected) || outcome != AckRejected {
		t.Fatalf("outcome %s err %v", outcome, err)
	}
	rej := only[events.AckRejected](allEvents(c))
	if len(rej) != 1 || rej[0].Reason != "conflict_not_open" || len(c.Queue) != 0 || len(allEvents(c)) != 2 {
		t.Fatalf("changes %v", types(allEvents(c)))
	}
}

func TestI14_LegacyConflictIsNeverResolvedOnCommitAndItsAcknowledgeIsRejected(t *testing.T) {
	cs := legacy(t)
	d, _ := DecidePersist(entityAt(t), Persist{Entity: "Airport", ID: "GKA",
		Values: map[string]any{"name": "Goroka Regional", "notes": "n", "alt": int64(5282)}}, now)
	rowFx := RowEffects(sheetWithInput, "Airport", "GKA", keyField, d.Events[0].Payload)
	c, fx, err := DecideCommitConflicts(d, []ConflictState{cs}, rowFx, sheetWithInput, now)
	if err != nil || !c.Empty() || !reflect.DeepEqual(fx, rowFx) {
		t.Fatalf("a legacy conflict was resolved or guarded with a guessed baseline: %+v %+v %v", c, fx, err)
	}
	c, outcome, id, err := DecideAcknowledge(AckState{Conflict: cs, CanonicalRevision: 3, CanonicalValue: "Goroka", RowOutboxVersion: 5},
		ack(cs), sheetWithInput, now)
	if !errors.Is(err, ErrAckRejected) || outcome != AckRejected || id != "" {
		t.Fatalf("outcome %s id %q err %v", outcome, id, err)
	}
	evs := allEvents(c)
	rej := only[events.AckRejected](evs)
	if len(evs) != 2 || evs[0].Type() != events.TypeAckRequested || len(rej) != 1 || rej[0].Reason != "no_visible_evidence" || len(c.Queue) != 0 {
		t.Fatalf("legacy acknowledge recorded %v queue %+v", types(evs), c.Queue)
	}
}

func TestDecideAcknowledgeRecordsNothingForAValueWithoutCanonicalForm(t *testing.T) {
	cs := openConflict(t)
	c, outcome, id, err := DecideAcknowledge(AckState{Conflict: cs, CanonicalRevision: 3, CanonicalValue: math.NaN(), RowOutboxVersion: 5},
		ack(cs), sheetWithInput, now)
	if !errors.Is(err, ErrInvalidValue) || !c.Empty() || outcome != "" || id != "" {
		t.Fatalf("outcome %q id %q err %v changes %v", outcome, id, err, types(allEvents(c)))
	}
}

func TestI12_WithoutCandidateTimeRowEvidenceTheRowEffectsKeepTheirDefaultGuard(t *testing.T) {
	cs := openConflict(t)
	cs.Sheet.CandidateRow = ""
	d, _ := DecidePersist(entityAt(t), Persist{Entity: "Airport", ID: "GKA",
		Values: map[string]any{"name": "Goroka Regional", "notes": "n", "alt": int64(5282)}}, now)
	rowFx := RowEffects(sheetWithInput, "Airport", "GKA", keyField, d.Events[0].Payload)
	c, fx, err := DecideCommitConflicts(d, []ConflictState{cs}, rowFx, sheetWithInput, now)
	if err != nil || len(only[events.ConflictResolved](allEvents(c))) != 1 || !reflect.DeepEqual(fx, rowFx) {
		t.Fatalf("changes %v fx %+v err %v", types(allEvents(c)), fx, err)
	}
}
