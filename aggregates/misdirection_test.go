package aggregates

import (
	"errors"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// misdirectedName is the report of an update of GKA's name whose cell
// landed on row 3, HGU's row.
var misdirectedName = Misdirected{SheetRow: 3, DisplacedAnchor: "HGU", Columns: []string{"name"}, RowHash: "row-after-write"}

// A misdirected update re-queues the intended row's cells from canonical
// state (guarded by that row's last applied write: no explicit hash) and
// repairs exactly the displaced row's overwritten cells from its record,
// guarded by the row as the write left it; a value the record does not
// hold is rewritten blank.
func TestC06_MisdirectedUpdateRequeuesTheIntendedCellsAndRepairsTheDisplacedOnes(t *testing.T) {
	e := claimed("GKA", "tok")
	intended := Canonical{Exists: true, Values: map[string]any{keyField: "GKA", "name": "Goroka Airport", "alt": int64(5282)}}
	displaced := Canonical{Exists: true, Values: map[string]any{keyField: "HGU", "alt": int64(5388)}}
	rq, rp := misdirectedQueues(e, misdirectedName, systemOnly, intended, displaced)
	if rq == nil || rq.Target != e.Target || rq.Op != events.OpUpdate || rq.ExpectedHash != "" ||
		!reflect.DeepEqual(rq.Values, map[string]any{"name": "Goroka Airport"}) || rq.Entity != "Airport" || rq.ID != "GKA" {
		t.Fatalf("requeue = %+v", rq)
	}
	if rp == nil || rp.Target != systemOnly.Target(sysTab, "HGU") || rp.ExpectedHash != "row-after-write" ||
		!reflect.DeepEqual(rp.Values, map[string]any{"name": nil}) || rp.Entity != "Airport" || rp.ID != "HGU" {
		t.Fatalf("repair = %+v", rp)
	}
}

// Nothing is queued from a record that is gone; a row without an anchor
// and a conflicts-tab row are never repaired (evidence only); a
// conflicts-tab update is re-queued with its own audit values.
func TestC06_MisdirectionQueuesNothingWithoutARecord(t *testing.T) {
	e := claimed("GKA", "tok")
	gone := Canonical{}
	if rq, rp := misdirectedQueues(e, misdirectedName, systemOnly, gone, gone); rq != nil || rp != nil {
		t.Fatalf("records gone: %+v %+v", rq, rp)
	}
	live := Canonical{Exists: true, Values: map[string]any{"name": "x"}}
	anchorless := misdirectedName
	anchorless.DisplacedAnchor = ""
	if _, rp := misdirectedQueues(e, anchorless, systemOnly, live, live); rp != nil {
		t.Fatalf("anchorless row repaired: %+v", rp)
	}
	audit := e
	audit.Target = systemOnly.Target(conflictsTab, "cf-1")
	audit.Values = map[string]any{"status": "RESOLVED"}
	rq, rp := misdirectedQueues(audit, misdirectedName, systemOnly, live, live)
	if rp != nil || rq == nil || !reflect.DeepEqual(rq.Values, audit.Values) {
		t.Fatalf("conflicts row: requeue %+v repair %+v", rq, rp)
	}
}

// The claim settles as a terminal write_misdirected failure superseded by
// the re-queued effect in one decision on the effect's stream (its receipt
// proves nothing), and the evidence names the overwritten cells, the
// displaced record and both effects, never a cell value. A stale claim is
// refused.
func TestC06_DecideMisdirectedSupersedesTheEffectAndRecordsEvidenceWithoutValues(t *testing.T) {
	e := claimed("GKA", "tok")
	ds, err := decideMisdirected(e, "tok", misdirectedName, systemOnly, "fx-requeued", "fx-repair", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Stream != events.EffectStream(e.ID) || ds[0].ExpectedVersion != e.Version {
		t.Fatalf("decisions = %+v", ds)
	}
	if got := types(ds[0].Events); !reflect.DeepEqual(got, []events.Type{events.TypeEffectFailed, events.TypeEffectSuperseded}) {
		t.Fatalf("effect transitions = %v", got)
	}
	f := ds[0].Events[0].Payload.(events.EffectFailed)
	s := ds[0].Events[1].Payload.(events.EffectSuperseded)
	if !f.Terminal || f.Code != CodeWriteMisdirected || s.By != "fx-requeued" {
		t.Fatalf("settle = %+v, %+v", f, s)
	}
	ev := ds[1].Events[0].Payload.(events.SyncWriteMisdirected)
	want := events.SyncWriteMisdirected{Target: "ops", EffectID: e.ID, Tab: sysTab, Anchor: "GKA", SheetRow: 3, DisplacedAnchor: "HGU",
		Entity: "Airport", ID: "HGU", Cells: []events.MisdirectedCell{{Column: "name"}}, Requeued: "fx-requeued", Repair: "fx-repair"}
	if ds[1].Stream != events.SyncStream("ops") || !reflect.DeepEqual(ev, want) {
		t.Fatalf("evidence = %s %+v", ds[1].Stream, ev)
	}
	if _, err := decideMisdirected(e, "other", misdirectedName, systemOnly, "", "", now); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("stale claim: %v", err)
	}
	if _, err := MisdirectionOf(Outcome{Kind: OutcomeMisdirected}); !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("outcome without its row: %v", err)
	}
}

// Two updates swapped by a sort: each row is displaced and intended. All
// repairs are queued before any re-queue, so on each row the repair (seq 1)
// precedes the re-queue (seq 2); a stale claim among them is skipped and
// reported without stopping the others.
func TestC06_DecideMisdirectedAllQueuesEveryRepairBeforeAnyRequeue(t *testing.T) {
	gka, hgu := claimed("GKA", "t1"), claimed("HGU", "t2")
	hgu.ID = EffectID(hgu.Target.Binding, 7)
	live := Canonical{Exists: true, Values: map[string]any{"name": "canonical"}}
	onHGU := Misdirected{SheetRow: 2, DisplacedAnchor: "HGU", Columns: []string{"name"}, RowHash: "h-hgu"}
	onGKA := Misdirected{SheetRow: 3, DisplacedAnchor: "GKA", Columns: []string{"name"}, RowHash: "h-gka"}
	versions := map[string]uint64{}
	var order []string
	queue := func(q Queue) (Decision, string, error) {
		stream := events.OutboxStream(q.Target.Binding)
		d, id, err := DecideQueue(versions[stream], q, now)
		versions[stream]++
		kind := "requeue"
		if q.ExpectedHash != "" {
			kind = "repair"
		}
		order = append(order, kind+":"+q.Target.Anchor)
		return d, id, err
	}
	claims := []MisdirectedClaim{
		{Effect: gka, Token: "t1", Where: onHGU, Intended: live, Displaced: live},
		{Effect: hgu, Token: "t2", Where: onGKA, Intended: live, Displaced: live},
		{Effect: claimed("POM", "t3"), Token: "stale", Where: onGKA, Intended: live, Displaced: live},
	}
	ds, stale := DecideMisdirectedAll(claims, systemOnly, queue, now)
	if len(stale) != 1 || !errors.Is(stale[0], ErrStaleClaim) {
		t.Fatalf("stale = %v", stale)
	}
	if want := []string{"repair:HGU", "repair:GKA", "requeue:GKA", "requeue:HGU"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("queue order %v, want %v", order, want)
	}
	if len(ds) != 4+2*2 {
		t.Fatalf("%d decisions, want 4 queued effects and 2 settlements of 2 decisions", len(ds))
	}
}
