package sheetsio

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func TestNotesRideInTheDispatchBatchUpdateAndNeverChangeTheRowHash(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t, "Part"))
	fence := &Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	in := layout.InputTabName("Part")
	res := h.dispatch(w, Batch{Fence: fence, Ops: []Op{appendOp(in, "a1", map[string]any{"id": "a1", "qty": int64(5)})}})
	h.wantStatus(res, 0, StatusApplied)
	hash := res.Ops[0].WrittenHash
	sys := layout.SystemTabName("Part")
	before := h.counters()
	res = h.dispatch(w, Batch{Fence: fence, Ops: []Op{appendOp(sys, "a1", partValues("a1", 5))},
		Notes: []Note{{Tab: in, Anchor: "a1", Column: "qty", Text: "why"}, {Tab: in, Anchor: "gone", Column: "qty", Text: "x"},
			{Tab: in, Anchor: "a1", Column: "nope", Text: "x"}}})
	after := h.counters()
	if c := (emulator.Counters{Reads: after.Reads - before.Reads, Writes: after.Writes - before.Writes}); c != (emulator.Counters{Reads: 1, Writes: 1}) {
		t.Fatalf("a dispatch with notes cost %+v, want 1 read + 1 write", c)
	}
	h.wantStatus(res, 0, StatusApplied)
	if want := []NoteStatus{NoteApplied, NoteNoCell, NoteNoCell}; len(res.Notes) != 3 || res.Notes[0] != want[0] || res.Notes[1] != want[1] || res.Notes[2] != want[2] {
		t.Fatalf("note statuses %v, want %v", res.Notes, want)
	}
	res = h.dispatch(w, Batch{Fence: fence, Ops: []Op{{ID: "u1", Tab: in, Kind: OpUpdate, Anchor: "a1",
		Values: map[string]any{"qty": int64(5)}, ExpectedHash: hash}}})
	if r := res.Ops[0]; r.Status != StatusUnchanged || r.ObservedHash != hash {
		t.Fatalf("a note changed the row's visible hash: %+v", r)
	}
}
