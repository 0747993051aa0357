package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// C06 end to end, real sheets/v4 client against the emulator over HTTP: a
// person deletes airport 1's System row after the dispatch read the tab and
// before its batchUpdate applied (an emulator interleave, deterministic),
// so the rename of airport 2 lands on airport 3's row. The batchUpdate's
// own response shows it: the rename is superseded and re-queued, airport
// 3's overwritten cell gets a repair from the store, the evidence names
// that cell (never its value) — and the next dispatch puts both rows back
// to canonical state. The misdirected pass cost one batchUpdate, as any.
func TestC06_MisdirectedUpdateIsRequeuedTheDisplacedRowRepairedAndTheCellEvidenced(t *testing.T) {
	x := openSynced(t, t.TempDir())
	for _, id := range []string{"1", "2", "3"} {
		commit(t, x.Store, &Airport{ID: id, Name: "Airport " + id, Altitude: 10})
	}
	x.drain()
	commit(t, x.Store, &Airport{ID: "2", Name: "Renamed 2", Altitude: 10})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		if err := x.sheet.Person().DeleteRows("Airport_System", 2, 1); err != nil { // airport 1's row
			t.Error(err)
		}
	}})
	from := x.head()
	x.emu.ResetCounters()
	x.pass()
	if c := x.emu.Counters(sheetID); c.Writes != 1 {
		t.Fatalf("the misdirected pass sent %d writes, want its one batchUpdate", c.Writes)
	}
	if x.cellOf("Airport_System", "3", "name") != "Renamed 2" {
		t.Fatalf("the race was not staged: airport 3's row %v", x.rowOf("Airport_System", "3"))
	}
	if got := x.eventTypes(from); got[events.TypeSyncWriteMisdirected] != 1 || got[events.TypeEffectSuperseded] != 1 || got[events.TypeEffectQueued] != 2 {
		t.Fatalf("events after the misdirected write: %v", got)
	}
	var ev []projector.EvidenceRecord
	x.readModel(func(p *projector.Projector) (err error) {
		ev, err = p.Evidence(events.TypeSyncWriteMisdirected)
		return err
	})
	if len(ev) != 1 || ev[0].Tab != "Airport_System" || ev[0].Anchor != "3" || ev[0].Entity != "Airport" || ev[0].ID != "3" ||
		ev[0].Field != "name" || ev[0].Reason != aggregates.CodeWriteMisdirected {
		t.Fatalf("evidence = %+v", ev)
	}
	x.drain()
	if x.cellOf("Airport_System", "2", "name") != "Renamed 2" || x.cellOf("Airport_System", "3", "name") != "Airport 3" {
		t.Fatalf("after the next dispatch: 2 %v, 3 %v", x.rowOf("Airport_System", "2"), x.rowOf("Airport_System", "3"))
	}
	if c := x.outbox(); c[aggregates.EffectFailed] != 0 || c[aggregates.EffectConflict] != 0 {
		t.Fatalf("outbox %v", c)
	}
}

// C06, a sort between the dispatch's read and its write: airport 1's
// rename lands on airport 3's row and airport 3's on airport 1's. Each row
// is both displaced and intended; its repair is queued before its re-queue,
// so the next dispatch leaves both rows canonical with no conflict and no
// failed effect, and the evidence names both overwritten cells.
func TestC06_SortBetweenReadAndWriteSwapsTwoUpdatesAndBothRowsComeBack(t *testing.T) {
	x := openSynced(t, t.TempDir())
	for _, id := range []string{"1", "2", "3"} {
		commit(t, x.Store, &Airport{ID: id, Name: "Airport " + id, Altitude: 10})
	}
	x.drain()
	commit(t, x.Store, &Airport{ID: "1", Name: "Renamed 1", Altitude: 10}, &Airport{ID: "3", Name: "Renamed 3", Altitude: 10})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		if err := x.sheet.Person().SortByColumn("Airport_System", "A", true, 1); err != nil {
			t.Error(err)
		}
	}})
	x.pass()
	if x.cellOf("Airport_System", "3", "name") != "Renamed 1" || x.cellOf("Airport_System", "1", "name") != "Renamed 3" {
		t.Fatalf("the race was not staged: %v", x.rows("Airport_System"))
	}
	var ev []projector.EvidenceRecord
	x.readModel(func(p *projector.Projector) (err error) {
		ev, err = p.Evidence(events.TypeSyncWriteMisdirected)
		return err
	})
	if len(ev) != 2 || ev[0].Field != "name" || ev[1].Field != "name" || ev[0].Anchor == ev[1].Anchor {
		t.Fatalf("evidence = %+v", ev)
	}
	x.drain()
	if x.cellOf("Airport_System", "1", "name") != "Renamed 1" || x.cellOf("Airport_System", "3", "name") != "Renamed 3" ||
		x.cellOf("Airport_System", "2", "name") != "Airport 2" {
		t.Fatalf("after the next dispatch: %v", x.rows("Airport_System"))
	}
	if c := x.outbox(); c[aggregates.EffectFailed] != 0 || c[aggregates.EffectConflict] != 0 {
		t.Fatalf("outbox %v", c)
	}
}
