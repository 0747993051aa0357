package projector_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// TestInboundProjectionConflictLifecycle applies a candidate, its conflict,
// an evidence record and the resolution, and checks the inbound tables:
// the conflict keeps its candidate-time evidence, resolution clears the
// candidate and raises its epoch (I13), evidence clears when gone.
func TestInboundProjectionConflictLifecycle(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	const b = "bind1"
	evs := []events.Event{
		h.next(events.InboundStream("Airport_Input"), events.CandidateDetected{Tab: "Airport_Input", Anchor: "7", Binding: b,
			Entity: "Airport", ID: "7", Field: "notes", CandidateHash: "hA", Epoch: 0, VisibleRevision: 3,
			VisibleHash: "row1", CanonicalRevision: 2, ConflictID: "cf1", SheetValue: "A"}),
		h.next(events.ConflictStream("cf1"), events.ConflictOpened{ConflictID: "cf1", Entity: "Airport", ID: "7", Field: "notes",
			Tab: "Airport_Input", Anchor: "7", Binding: b, CanonicalRevision: 2, CandidateHash: "hA",
			CandidateEpoch: 0, VisibleRevision: 3, VisibleHash: "row1", SystemValue: "B", SheetValue: "A"}),
		h.next(events.InboundStream("Airport_Input"), events.RowQuarantined{Tab: "Airport_Input", Anchor: "8", SheetRow: 3,
			RowHash: "row8", Reason: "cell_type_mismatch", Column: "notes", QuarantineID: "q1"}),
	}
	must(t, p.Apply(evs))
	path := p.Path()
	wantRows(t, "open conflict", query(t, path, "SELECT conflict_id, state, candidate_hash, candidate_epoch, visible_hash, visible_revision FROM hk_conflicts"),
		"cf1|open|hA|0|row1|3")
	wantRows(t, "candidate", query(t, path, "SELECT candidate_hash, candidate_epoch, candidate_row_hash, conflict_id FROM hk_sheet_field_state"),
		"hA|0|row1|cf1")
	x, err := p.TabExpectation("Airport_Input")
	must(t, err)
	if !x.Evidence["row1"] || !x.Evidence["row8"] {
		t.Fatalf("expectation evidence %v", x.Evidence)
	}
	must(t, p.Apply([]events.Event{
		h.next(events.ConflictStream("cf1"), events.ConflictResolved{ConflictID: "cf1", Resolution: events.ResolutionSystemWins, CanonicalRevision: 3}),
		h.next(events.InboundStream("Airport_Input"), events.CandidateCleared{Binding: b, Field: "notes", Epoch: 1, Reason: "system_wins"}),
		h.next(events.InboundStream("Airport_Input"), events.RowQuarantineCleared{Tab: "Airport_Input", QuarantineID: "q1"}),
	}))
	wantRows(t, "resolved", query(t, path, "SELECT state, resolution FROM hk_conflicts"), "resolved|system_wins")
	wantRows(t, "cleared candidate", query(t, path, "SELECT candidate_hash, candidate_epoch, conflict_id FROM hk_sheet_field_state"), "|1|")
	wantRows(t, "evidence history", query(t, path, "SELECT kind FROM hk_evidence ORDER BY seq, n"),
		string(events.TypeCandidateDetected), string(events.TypeConflictOpened), string(events.TypeRowQuarantined),
		string(events.TypeConflictResolved), string(events.TypeCandidateCleared), string(events.TypeRowQuarantineCleared))
	wantRows(t, "active quarantine", query(t, path, "SELECT count(*) FROM hk_quarantine WHERE active = 1"), "0")
}

// TestI30_AcceptUserProjectionKeepsTheCandidateValueTheCommandOutcomeAndTheActor:
// the active candidate's value is held until its candidate is cleared, an
// accept_user command's first outcome is kept under its command id, and
// the resolution records who resolved it.
func TestI30_AcceptUserProjectionKeepsTheCandidateValueTheCommandOutcomeAndTheActor(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	const b = "bind1"
	must(t, p.Apply([]events.Event{
		h.next(events.InboundStream("Airport_Input"), events.CandidateDetected{Tab: "Airport_Input", Anchor: "7", Binding: b,
			Entity: "Airport", ID: "7", Field: "altitude", CandidateHash: "hA", CandidateValue: int64(5283), VisibleHash: "row1",
			VisibleRevision: 3, CanonicalRevision: 2, ConflictID: "cf1", SheetValue: "5283"}),
		h.next(events.ConflictStream("cf1"), events.ConflictOpened{ConflictID: "cf1", Entity: "Airport", ID: "7", Field: "altitude",
			Tab: "Airport_Input", Anchor: "7", Binding: b, CanonicalRevision: 2, CandidateHash: "hA", VisibleRevision: 3,
			VisibleHash: "row1", SystemValue: "5282", SheetValue: "5283"}),
	}))
	if v, ok, err := p.CandidateValue(b, "altitude"); err != nil || !ok || v != int64(5283) {
		t.Fatalf("candidate value %v %v %v", v, ok, err)
	}
	cmd := events.AckCommand{ConflictID: "cf1", CanonicalRevision: 2, CandidateHash: "hA", CommandID: "c1", Actor: events.ActorSheet}
	applied := cmd
	applied.ReconcileEffect = "fx1"
	must(t, p.Apply([]events.Event{
		h.next(events.ConflictStream("cf1"), events.AcceptUserRequested(cmd)),
		h.next(events.ConflictStream("cf1"), events.AcceptUserApplied(applied)),
		h.next(events.ConflictStream("cf1"), events.ConflictResolved{ConflictID: "cf1", Resolution: events.ResolutionUseSheet,
			CanonicalRevision: 3, Actor: events.ActorSheet}),
		h.next(events.InboundStream("Airport_Input"), events.CandidateCleared{Binding: b, Field: "altitude", Epoch: 1, Reason: "use_sheet"}),
	}))
	path := p.Path()
	wantRows(t, "resolved", query(t, path, "SELECT state, resolution, resolved_by, reconcile_effect, reconcile_state FROM hk_conflicts"),
		"resolved|use_sheet|sheet|fx1|pending")
	if _, ok, err := p.CandidateValue(b, "altitude"); err != nil || ok {
		t.Fatalf("a cleared candidate still has a value: %v %v", ok, err)
	}
	rec, ok, err := p.Command("c1")
	if err != nil || !ok || rec.Outcome != "applied" || rec.Resolution != events.ResolutionUseSheet || rec.ReconcileEffect != "fx1" ||
		rec.CanonicalRevision != 2 || rec.CandidateHash != "hA" {
		t.Fatalf("command record %+v %v %v", rec, ok, err)
	}
}
