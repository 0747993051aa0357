package projector_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// settleHistory queues effects on a System and an Input tab, opens a
// conflict whose reconcile effect is one of them, marks a row's cell
// unwritable, and claims and settles them by batch events: a batch of
// effects on distinct rows (one unknown effect among them, one settled
// twice), a batch with a row that has a marker, a batch with two
// effects on one row, and batches of no effect.
func settleHistory(h *history) [][]events.Event {
	queued := func(id, tab, anchor string, seq uint64, op events.Op) events.Event {
		b := tab + "/" + anchor
		return h.next(events.OutboxStream(b), events.EffectQueued{EffectID: id, Spreadsheet: "s", Tab: tab, Anchor: anchor,
			Binding: b, StreamSequence: seq, Op: op, Values: map[string]any{"name": "n" + id, "altitude": int64(len(id))},
			PayloadHash: "p" + id, Entity: "Airport", ID: anchor})
	}
	claimed := func(ids ...string) events.Event {
		at := map[string]int64{}
		for _, id := range ids {
			at[id] = 1
		}
		return h.next(events.DispatchStream("s"), events.EffectsClaimed{ClaimToken: "c" + ids[0], Epoch: 1, Attempts: at})
	}
	applied := func(ids ...string) events.Event {
		w := map[string]string{}
		for _, id := range ids {
			w[id] = "w" + id
		}
		return h.next(events.DispatchStream("s"), events.EffectsApplied{ClaimToken: "c" + ids[0], Via: "dispatch", Written: w})
	}
	cmd := events.AckCommand{ConflictID: "cf1", CanonicalRevision: 2, CandidateHash: "hA", CommandID: "k1", Actor: events.ActorSheet,
		ReconcileEffect: "fx3"}
	return [][]events.Event{
		{queued("fx1", "Airport_System", "a1", 1, events.OpAppend), queued("fx2", "Airport_Input", "a2", 1, events.OpAppend),
			queued("fx3", "Airport_Input", "a3", 1, events.OpUpdate), queued("fx4", "Airport_System", "a4", 1, events.OpAppend),
			queued("fx5", "Airport_System", "a5", 1, events.OpAppend), queued("fx6", "Airport_System", "a5", 2, events.OpUpdate),
			queued("fx7", "Airport_Input", "a7", 1, events.OpDelete)},
		{h.next(events.ConflictStream("cf1"), events.ConflictOpened{ConflictID: "cf1", Entity: "Airport", ID: "a3", Field: "name",
			Tab: "Airport_Input", Anchor: "a3", Binding: "Airport_Input/a3", CanonicalRevision: 2, CandidateHash: "hA",
			VisibleRevision: 1, VisibleHash: "r", SystemValue: "x", SheetValue: "y"}),
			h.next(events.ConflictStream("cf1"), events.AcceptUserApplied(cmd)),
			h.next(events.OutboxStream("Airport_System/a4"), events.EffectValueUnwritable{EffectID: "fx0", Tab: "Airport_System",
				Binding: "Airport_System/a4", Entity: "Airport", ID: "a4", Fields: []events.UnwritableField{{Field: "name",
					Reason: "value_too_large", Chars: 60000}}})},
		{claimed("fx1", "fx2", "fx3", "fx7", "fx9")},
		{applied("fx1", "fx2", "fx3", "fx7", "fx9")},
		{claimed("fx1"), applied("fx1")},
		{claimed("fx4", "fx5", "fx6"), applied("fx4", "fx5", "fx6")},
		{h.next(events.DispatchStream("s"), events.EffectsClaimed{ClaimToken: "c0", Epoch: 1}),
			h.next(events.DispatchStream("s"), events.EffectsApplied{ClaimToken: "c0", Via: "probe"})},
	}
}

// TestBatchSettleSetWiseEqualsItemByItem: projecting batch settle events
// set-wise writes exactly what projecting them item by item writes
// (outbox, visible state, reconcile outcomes, shown cells of Input rows,
// unwritable markers).
func TestBatchSettleSetWiseEqualsItemByItem(t *testing.T) {
	open := func(itemWise bool) *projector.Projector {
		p, err := projector.Open(filepath.Join(t.TempDir(), projector.FileName), projector.Options{StoreID: storeID,
			Entities: testEntities(), InputTabs: []string{"Airport_Input"}})
		must(t, err)
		t.Cleanup(func() { p.Close() })
		if itemWise {
			p.ItemWise()
		}
		for _, b := range settleHistory(newHistory()) {
			must(t, p.Apply(b))
		}
		return p
	}
	set, each := open(false), open(true)
	if d1, d2 := dump(t, set.Path()), dump(t, each.Path()); !bytes.Equal(d1, d2) {
		t.Fatalf("set-wise:\n%s\nitem by item:\n%s", d1, d2)
	}
	path := set.Path()
	wantRows(t, "visible state", query(t, path, "SELECT binding, revision, hash, effect_id FROM hk_visible_state ORDER BY binding"),
		"Airport_Input/a2|1|wfx2|fx2", "Airport_Input/a3|1|wfx3|fx3", "Airport_Input/a7|1|wfx7|fx7",
		"Airport_System/a1|2|wfx1|fx1", "Airport_System/a4|1|wfx4|fx4", "Airport_System/a5|2|wfx6|fx6")
	wantRows(t, "reconcile outcome", query(t, path, "SELECT reconcile_effect, reconcile_state FROM hk_conflicts"), "fx3|applied")
	wantRows(t, "markers cleared", query(t, path, "SELECT count(*) FROM hk_unwritable"), "0")
	wantRows(t, "shown cells", query(t, path, "SELECT DISTINCT binding FROM hk_sheet_field_state ORDER BY binding"),
		"Airport_Input/a2", "Airport_Input/a3")
}
