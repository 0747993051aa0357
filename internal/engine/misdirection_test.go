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
