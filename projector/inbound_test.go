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
		h.next("inbound/Airport_Input", "candidate.detected", 1, map[string]any{"tab": "Airport_Input", "anchor": "7", "binding": b,
			"entity": "Airport", "id": "7", "field": "notes", "candidate_hash": "hA", "epoch": int64(0), "visible_revision": int64(3),
			"visible_hash": "row1", "canonical_revision": int64(2), "conflict_id": "cf1", "sheet_value": "A"}),
		h.next("conflict/cf1", "conflict.opened", 1, map[string]any{"conflict_id": "cf1", "entity": "Airport", "id": "7", "field": "notes",
			"tab": "Airport_Input", "anchor": "7", "binding": b, "canonical_revision": int64(2), "candidate_hash": "hA",
			"candidate_epoch": int64(0), "visible_revision": int64(3), "visible_hash": "row1", "system_value": "B", "sheet_value": "A"}),
		h.next("inbound/Airport_Input", "row.quarantined", 1, map[string]any{"tab": "Airport_Input", "anchor": "8", "sheet_row": int64(3),
			"row_hash": "row8", "reason": "cell_type_mismatch", "column": "notes", "quarantine_id": "q1"}),
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
		h.next("conflict/cf1", "conflict.resolved", 1, map[string]any{"conflict_id": "cf1", "resolution": "system_wins", "canonical_revision": int64(3)}),
		h.next("inbound/Airport_Input", "candidate.cleared", 1, map[string]any{"binding": b, "field": "notes", "epoch": int64(1), "reason": "system_wins"}),
		h.next("inbound/Airport_Input", "row.quarantine_cleared", 1, map[string]any{"tab": "Airport_Input", "quarantine_id": "q1"}),
	}))
	wantRows(t, "resolved", query(t, path, "SELECT state, resolution FROM hk_conflicts"), "resolved|system_wins")
	wantRows(t, "cleared candidate", query(t, path, "SELECT candidate_hash, candidate_epoch, conflict_id FROM hk_sheet_field_state"), "|1|")
	wantRows(t, "evidence history", query(t, path, "SELECT kind FROM hk_evidence ORDER BY seq, n"),
		"candidate.detected", "conflict.opened", "row.quarantined", "conflict.resolved", "candidate.cleared", "row.quarantine_cleared")
	wantRows(t, "active quarantine", query(t, path, "SELECT count(*) FROM hk_quarantine WHERE active = 1"), "0")
}
