package aggregates

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
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

// A dispatch settling more than MaxBatchItems effects appends several
// batch events of at most MaxBatchItems items each, on the one dispatch
// stream at the version read, standing together for every effect's
// per-effect event (a record of a whole pass was an overflow run bbolt
// copied whole on each later append to its leaf).
func TestBatchedSplitsADispatchIntoEventsOfAtMostMaxBatchItems(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	n := 2*MaxBatchItems + 3
	var items []Decided
	var want []events.Payload
	for i := range n {
		e := Effect{ID: fmt.Sprintf("fx%016x", i), Target: Target{Spreadsheet: "ss"}, State: EffectProcessing, ClaimToken: "tok", Version: 2}
		d, _ := decideSettle(e, "tok", Outcome{Kind: OutcomeApplied, WrittenHash: fmt.Sprintf("%016x", i), Via: "dispatch"}, now)
		items = append(items, Decided{e, d})
		want = append(want, d.Events[0].Payload)
	}
	ch, err := Batched(items, func(string) (uint64, error) { return 7, nil }, now)
	if err != nil {
		t.Fatal(err)
	}
	d := ch.Appends[len(ch.Appends)-1]
	if len(ch.Appends) != n+1 || d.Stream != events.DispatchStream("ss") || d.ExpectedVersion != 7 || len(d.Events) != 3 {
		t.Fatalf("%d appends, the last %s at %d with %d events; want %d and 3 events on the dispatch stream at 7", len(ch.Appends), d.Stream, d.ExpectedVersion, len(d.Events), n+1)
	}
	var got []events.Payload
	for i, ev := range d.Events {
		each := ev.Payload.(events.Batch).Each()
		if len(each) != []int{MaxBatchItems, MaxBatchItems, 3}[i] {
			t.Fatalf("event %d lists %d effects", i, len(each))
		}
		got = append(got, each...)
	}
	id := func(p events.Payload) string { return p.(events.EffectApplied).EffectID }
	slices.SortFunc(got, func(a, b events.Payload) int { return cmp.Compare(id(a), id(b)) })
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the batches stand for %d payloads, want the %d per-effect applied events", len(got), len(want))
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
