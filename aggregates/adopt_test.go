package aggregates

import (
	"errors"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// adoptRow is a decoded row with the key k, name n and alt a.
func adoptRow(row int, k, n string, a int64) AdoptRow {
	return AdoptRow{SheetRow: row, Key: k, Hash: "h" + k + n, Values: map[string]any{"name": n, "alt": a}}
}

// stateOf is the state a store holds for name n and alt a.
func stateOf(t *testing.T, n string, a int64) EntityState {
	t.Helper()
	hn, err1 := events.Hash(n)
	ha, err2 := events.Hash(a)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	return EntityState{Exists: true, Version: 1, Fields: map[string]FieldState{"name": {Hash: hn, Revision: 1}, "alt": {Hash: ha, Revision: 1}}}
}

type adoptWant struct {
	outcome AdoptOutcome
	reason  string
	field   string
}

// TestAdoptDecisionsPerRow: every row gets one outcome, in the documented
// precedence: the key's problems, a duplicate key (every copy, fail
// closed), the other cells' problems, then the record the store holds
// (same values: unchanged; other values: never overwritten).
func TestAdoptDecisionsPerRow(t *testing.T) {
	rows := []AdoptRow{
		adoptRow(2, "LAX", "Los Angeles", 125),
		adoptRow(3, "SFO", "San Francisco", 13),
		adoptRow(4, "SFO", "San Francisco", 13), // a pasted copy
		{SheetRow: 5, Key: "", Hash: "h5", Values: map[string]any{"name": "x", "alt": int64(0)}},
		{SheetRow: 6, Key: " JFK", Hash: "h6", Issues: []AdoptIssue{{Field: "code", Column: "A", Reason: "cell_edge_whitespace"}}},
		{SheetRow: 7, Key: "ORD", Hash: "h7", Issues: []AdoptIssue{{Field: "alt", Column: "C", Reason: "cell_formula"}}},
		adoptRow(8, "NRT", "Narita", 141),
		adoptRow(9, "HND", "Haneda", 21),
		adoptRow(10, "A\x07B", "bell", 1),
		{SheetRow: 11, Key: "LAX", Hash: "h11", Issues: []AdoptIssue{{Field: "name", Column: "B", Reason: "cell_merged"}}},
	}
	states := map[string]EntityState{"NRT": stateOf(t, "Narita", 141), "HND": stateOf(t, "Haneda (old)", 21)}
	p := NewAdoptPlan("Airport", "code", []string{"name", "alt"}, rows)
	want := []adoptWant{
		{AdoptSkip, ReasonDuplicateKey, ""}, // LAX is also on row 11
		{AdoptSkip, ReasonDuplicateKey, ""},
		{AdoptSkip, ReasonDuplicateKey, ""},
		{AdoptSkip, ReasonKeyEmpty, "code"},
		{AdoptSkip, "cell_edge_whitespace", "code"},
		{AdoptSkip, "cell_formula", "alt"},
		{AdoptUnchanged, "", ""},
		{AdoptSkip, ReasonKeyExists, "name"},
		{AdoptSkip, ReasonKeyInvalid, "code"},
		{AdoptSkip, ReasonDuplicateKey, ""},
	}
	for i := range p.Len() {
		d := p.Decide(i, states[p.Key(i)])
		if got := (adoptWant{d.Outcome, d.Reason, d.Field}); got != want[i] {
			t.Errorf("row %d: %+v, want %+v", rows[i].SheetRow, got, want[i])
		}
	}
	if d := p.Decide(0, EntityState{}); d.Detail != "the key is on rows 2, 11" {
		t.Errorf("duplicate detail %q", d.Detail)
	}
	if got := (NewAdoptPlan("Airport", "code", []string{"name", "alt"}, rows[:1])).Decide(0, EntityState{}); got.Outcome != AdoptCreate {
		t.Errorf("a lone new key: %+v", got)
	}
}

// TestAdoptCommandCreatesOnlyWithTheAdoptActor: the persist of a created
// row carries actor adopt and refuses an entity that exists meanwhile.
func TestAdoptCommandCreatesOnlyWithTheAdoptActor(t *testing.T) {
	p := NewAdoptPlan("Airport", "code", []string{"name", "alt"}, []AdoptRow{adoptRow(2, "LAX", "Los Angeles", 125)})
	cmd := p.AdoptCommand(0)
	d, err := DecidePersist(EntityState{Fields: map[string]FieldState{}}, cmd, now)
	if err != nil || len(d.Events) != 1 {
		t.Fatalf("create: %v %v", d, err)
	}
	if ev := d.Events[0].Payload.(events.EntityPersisted); ev.Actor != events.ActorAdopt || !ev.Created {
		t.Fatalf("event %+v", ev)
	}
	if _, err := DecidePersist(stateOf(t, "Los Angeles", 125), cmd, now); !errors.Is(err, ErrEntityExists) {
		t.Fatalf("create over an existing entity: %v", err)
	}
}

// TestAdoptQuarantineIsIdempotentAndClearsFixedRows: a skipped row is
// recorded once (a rerun records nothing new), identical copies on two
// rows are two records, and a record no row shows any more is cleared.
func TestAdoptQuarantineIsIdempotentAndClearsFixedRows(t *testing.T) {
	const tab = "Airports (before hikoutei)"
	skipped := []AdoptDecision{
		{SheetRow: 3, Key: "SFO", Hash: "h1", Outcome: AdoptSkip, Reason: ReasonDuplicateKey, Detail: "the key is on rows 3, 4"},
		{SheetRow: 4, Key: "SFO", Hash: "h1", Outcome: AdoptSkip, Reason: ReasonDuplicateKey, Detail: "the key is on rows 3, 4"},
		{SheetRow: 5, Key: "", Hash: "h5", Outcome: AdoptSkip, Reason: ReasonKeyEmpty, Field: "code"},
	}
	p := NewAdoptPlan("Airport", "code", nil, nil)
	ch := p.Quarantine(tab, skipped, nil, 0, now)
	if len(ch.Appends) != 1 || ch.Appends[0].Stream != events.InboundStream(tab) || len(ch.Appends[0].Events) != 3 {
		t.Fatalf("first run: %+v", ch.Appends)
	}
	first := ch.Appends[0].Events[0].Payload.(events.RowQuarantined)
	if first.ID != "SFO" || first.Entity != "Airport" || first.Column != "" || first.SheetRow != 3 {
		t.Fatalf("record %+v", first)
	}
	if empty := ch.Appends[0].Events[2].Payload.(events.RowQuarantined); empty.ID != "" || empty.Column != "code" {
		t.Fatalf("record of an empty key %+v", empty)
	}
	active := map[string]Quarantine{}
	for _, ev := range ch.Appends[0].Events {
		q := ev.Payload.(events.RowQuarantined)
		active[q.QuarantineID] = Quarantine{ID: q.QuarantineID, Tab: tab, Anchor: q.Anchor}
	}
	if again := p.Quarantine(tab, skipped, active, 2, now); !again.Empty() {
		t.Fatalf("rerun recorded %+v", again.Appends)
	}
	fixed := p.Quarantine(tab, skipped[2:], active, 2, now)
	var cleared []string
	for _, ev := range fixed.Appends[0].Events {
		cleared = append(cleared, ev.Payload.(events.RowQuarantineCleared).Anchor)
	}
	if !reflect.DeepEqual(cleared, []string{"SFO", "SFO"}) || fixed.Appends[0].ExpectedVersion != 2 {
		t.Fatalf("after the fix: %+v", fixed.Appends)
	}
}
