package engine_test

import (
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// tooLong is one character over Google's 50,000-character cell limit.
var tooLong = strings.Repeat("n", 50_001)

const tooLongMarker = "#HIKOUTEI! value_too_large (50001 characters)"

// unwritables lists the values the read model records as shown by a marker.
func (x *synced) unwritables() []projector.Unwritable {
	x.t.Helper()
	var out []projector.Unwritable
	x.readModel(func(p *projector.Projector) (err error) { out, err = p.Unwritables(); return err })
	return out
}

// A 50,001-character value: both rows of the part appear with every other
// field and the marker in its cell, the failure is recorded once per
// written row, polls and full scans import nothing, ten reconciliation
// rounds append nothing, a rebuilt read model equals the live one (I23),
// and a writable value replaces the marker and clears the record.
func TestI23_AValueSheetsCannotHoldIsAMarkerRecordedOnceAndNeverRetried(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	x := openInbound(t, dir, nil)
	commit(t, x.Store, &Part{ID: "1", Name: "bolt", SKU: "00042", Qty: 7, Notes: tooLong})
	x.drain()
	if c := x.outbox(); c[aggregates.EffectApplied] != 2 || x.unsettled() != 0 || c[aggregates.EffectFailed] != 0 {
		t.Fatalf("outbox %v", c)
	}
	if got := x.rowOf("Part_System", "1"); len(got) < 3 || got[1] != "bolt" || x.cellOf("Part_System", "1", "notes") != tooLongMarker {
		t.Fatalf("System row %.120v", got)
	}
	if x.cellOf(partInput, "1", "sku") != "00042" || x.cellOf(partInput, "1", "qty") != "7" || x.cellOf(partInput, "1", "notes") != tooLongMarker {
		t.Fatalf("Input row %.120v", x.rowOf(partInput, "1"))
	}
	want := []projector.Unwritable{
		{Tab: partInput, Entity: "Part", ID: "1", Field: "notes", Reason: "value_too_large", Chars: 50_001},
		{Tab: "Part_System", Entity: "Part", ID: "1", Field: "notes", Reason: "value_too_large", Chars: 50_001},
	}
	if got := x.unwritables(); len(got) != 2 || got[0] != want[0] && got[0] != want[1] || got[0] == got[1] {
		t.Fatalf("unwritable records %+v, want %+v", got, want)
	}
	if n := x.eventTypes(0)[events.TypeEffectUnwritable]; n != 2 {
		t.Fatalf("%d %s events, want one per written row", n, events.TypeEffectUnwritable)
	}

	head := x.head()
	for round := range 10 {
		if _, err := x.h.Reconcile(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		x.pass()
		if r := x.poll(); r.Stats.Candidates != 0 || r.Stats.Accepted != 0 || r.Stats.Quarantined != 0 {
			t.Fatalf("round %d poll %+v", round, r.Stats)
		}
	}
	if r := x.fullScan(); r.Stats.Candidates != 0 || r.Stats.Accepted != 0 || r.Stats.Quarantined != 0 {
		t.Fatalf("full scan %+v", r.Stats)
	}
	if got := x.eventTypes(head); len(got) != 0 {
		t.Fatalf("ten reconciliation rounds, polls and a full scan appended %v, want nothing", got)
	}
	if p := x.part("1"); p.Notes != tooLong || p.SKU != "00042" {
		t.Fatal("canonical state changed")
	}
	liveMarked, cpMarked := digest(t, x.ReadModelPath()), x.e.Checkpoint()

	p := x.part("1")
	p.Notes = "short again"
	commit(t, x.Store, p)
	x.drain()
	if x.cellOf("Part_System", "1", "notes") != "short again" || x.cellOf(partInput, "1", "notes") != "short again" {
		t.Fatalf("rows after the change: %v / %v", x.rowOf("Part_System", "1"), x.rowOf(partInput, "1"))
	}
	if got := x.unwritables(); len(got) != 0 {
		t.Fatalf("records after a writable value: %+v", got)
	}
	if r := x.fullScan(); r.Stats.Candidates != 0 || r.Stats.Accepted != 0 {
		t.Fatalf("full scan after the change %+v", r.Stats)
	}
	live, cp := digest(t, x.ReadModelPath()), x.e.Checkpoint()
	mustT(t, x.Close())
	if rebuilt := replayDigest(t, dir, cpMarked, parts...); rebuilt != liveMarked {
		t.Fatalf("I23: rebuilt read model with the markers %s != live %s", rebuilt, liveMarked)
	}
	if rebuilt := replayDigest(t, dir, cp, parts...); rebuilt != live {
		t.Fatalf("I23: rebuilt read model after the change %s != live %s", rebuilt, live)
	}
}

// A person typing over the marker is an edit like any other: accepted, and
// neither row shows a marker any more (the Input cell shows the person's
// text, the System row's write of it replaces the other).
func TestAPersonsTextOverAMarkerIsAnAcceptedEdit(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	commit(t, x.Store, &Part{ID: "1", Name: "bolt", SKU: "00042", Qty: 7, Notes: tooLong})
	x.drain()
	x.typeIn("1", "notes", "typed by a person")
	if r := x.poll(); r.Stats.Accepted != 1 || r.Stats.Candidates != 0 {
		t.Fatalf("poll %+v", r.Stats)
	}
	x.drain()
	if p := x.part("1"); p.Notes != "typed by a person" || x.cellOf("Part_System", "1", "notes") != "typed by a person" {
		t.Fatalf("after the edit: %q, System row %v", p.Notes, x.rowOf("Part_System", "1"))
	}
	if got := x.unwritables(); len(got) != 0 {
		t.Fatalf("records %+v after the edit", got)
	}
}

// A write whose response is lost is settled by a probe: the probe records
// the markers the landed write left, exactly as a dispatch would.
func TestAProbedWriteRecordsItsMarkersOnce(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	commit(t, x.Store, &Part{ID: "1", Name: "bolt", Notes: tooLong})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	x.pass() // the lost response is one batchUpdate's: every effect, or one lane's
	if c := x.outbox(); c[aggregates.EffectUncertain] < 1 || c[aggregates.EffectUncertain]+c[aggregates.EffectApplied] != 2 {
		t.Fatalf("outbox after a lost response: %v", c)
	}
	x.drain()
	if n := x.eventTypes(0)[events.TypeEffectUnwritable]; n != 2 || len(x.unwritables()) != 2 {
		t.Fatalf("%d %s events, records %+v", n, events.TypeEffectUnwritable, x.unwritables())
	}
}
