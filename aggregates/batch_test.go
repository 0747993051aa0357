package aggregates

import (
	"reflect"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Batched turns a dispatch's claims and applied outcomes into one batch
// event each on the dispatch stream, keeping every fact (Each gives the
// per-effect payloads back) and every effect's optimistic check (an
// append without events at the version its decision read); any other
// decision stays as it is.
func TestBatchedKeepsTheFactsAndTheVersionChecksOfPerEffectSettles(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	fx := func(id string, v uint64) Effect {
		return Effect{ID: id, Target: Target{Spreadsheet: "ss", Binding: "b-" + id}, State: EffectProcessing, ClaimToken: "tok", Version: v}
	}
	a, b, c := fx("fx1", 1), fx("fx2", 3), fx("fx3", 1)
	da, _ := decideSettle(a, "tok", Outcome{Kind: OutcomeApplied, WrittenHash: "h1", Via: "dispatch"}, now)
	db, _ := decideSettle(b, "tok", Outcome{Kind: OutcomeApplied, WrittenHash: "h2", Via: "dispatch"}, now)
	dc, _ := decideSettle(c, "tok", Outcome{Kind: OutcomeUncertain, Code: "timeout", RetryAt: now}, now)
	ch, err := Batched([]Decided{{a, da}, {b, db}, {c, dc}}, func(s string) (uint64, error) { return 7, nil }, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []events.StreamAppend{
		{Stream: events.EffectStream("fx1"), ExpectedVersion: 1},
		{Stream: events.EffectStream("fx2"), ExpectedVersion: 3},
		{Stream: events.EffectStream("fx3"), ExpectedVersion: 1, Events: dc.Events},
	}
	if !reflect.DeepEqual(ch.Appends[:3], want) {
		t.Fatalf("appends %+v, want the effects' checks and fx3's own event %+v", ch.Appends[:3], want)
	}
	d := ch.Appends[3]
	if d.Stream != events.DispatchStream("ss") || d.ExpectedVersion != 7 || len(d.Events) != 1 {
		t.Fatalf("dispatch append %+v", d)
	}
	got := d.Events[0].Payload.(events.Batch).Each()
	if !reflect.DeepEqual(got, []events.Payload{da.Events[0].Payload, db.Events[0].Payload}) {
		t.Fatalf("the batch stands for %#v, want the per-effect applied events", got)
	}
}

// An effect decided twice in one batch keeps its own events, in order.
func TestBatchedLeavesAnEffectDecidedTwiceOnItsStream(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	e := Effect{ID: "fx1", Target: Target{Spreadsheet: "ss"}, State: EffectPending, Version: 1}
	d1, _ := DecideClaim(e, "t1", 1, now)
	d2, _ := DecideClaim(e, "t2", 1, now)
	ch, err := Batched([]Decided{{e, d1}, {e, d2}}, func(string) (uint64, error) { return 0, nil }, now)
	if err != nil || len(ch.Appends) != 1 || len(ch.Appends[0].Events) != 2 {
		t.Fatalf("appends %+v, %v", ch.Appends, err)
	}
}

// ReferPersisted makes a row refer to the entity.persisted only when its
// values are exactly the persisted fields (plus the key on a new row).
func TestReferPersistedOnlyWhenTheValuesAreThePersistedFields(t *testing.T) {
	p := events.EntityPersisted{Entity: "A", ID: "1", Created: true, Fields: map[string]any{"name": "x", "n": int64(2)}}
	qs := []Queue{
		{Op: events.OpAppend, Entity: "A", ID: "1", Values: map[string]any{"id": "1", "name": "x", "n": int64(2)}},
		{Op: events.OpAppend, Entity: "A", ID: "1", Values: map[string]any{"id": "1", "notes": ""}},
		{Op: events.OpUpdate, Entity: "A", ID: "1", Values: map[string]any{"name": "x", "n": int64(2)}},
		{Op: events.OpUpdate, Entity: "A", ID: "1", Values: map[string]any{"name": "x", "n": int64(3)}},
	}
	ReferPersisted(qs, p, "id", 5)
	got := []uint64{qs[0].ValuesOf, qs[1].ValuesOf, qs[2].ValuesOf, qs[3].ValuesOf}
	if !reflect.DeepEqual(got, []uint64{5, 0, 5, 0}) || qs[0].KeyColumn != "id" || qs[2].KeyColumn != "" {
		t.Fatalf("values_of %v, key columns %q %q", got, qs[0].KeyColumn, qs[2].KeyColumn)
	}
}
