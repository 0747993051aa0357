package aggregates

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func persist(vals map[string]any) Persist {
	return Persist{Entity: "Airport", ID: "GKA", Values: vals}
}

func TestDecidePersistCreatesWithEveryFieldAtRevisionOne(t *testing.T) {
	d, err := DecidePersist(EntityState{}, persist(map[string]any{"name": "Goroka", "alt": int64(5282)}), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Events) != 1 || d.ExpectedVersion != 0 || d.Stream != "entity/Airport/GKA" || !d.Next.Exists || d.Next.Version != 1 {
		t.Fatalf("decision %+v", d)
	}
	p := d.Events[0].Payload.(events.EntityPersisted)
	if !p.Created || !reflect.DeepEqual(p.Revisions, map[string]uint64{"name": 1, "alt": 1}) || !d.Events[0].At.Equal(now) {
		t.Fatalf("payload %+v", p)
	}
}

// TestDecidePersistCreateCarriesTheValuesWithoutACopy: a create's event
// holds the command's map of values itself (every field of a create
// changes, so the single writer copies none), an update's only its changed
// fields in a map of its own.
func TestDecidePersistCreateCarriesTheValuesWithoutACopy(t *testing.T) {
	vals := map[string]any{"name": "Goroka", "alt": int64(5282)}
	d, err := DecidePersist(EntityState{}, persist(vals), now)
	if err != nil {
		t.Fatal(err)
	}
	fields := d.Events[0].Payload.(events.EntityPersisted).Fields
	if reflect.ValueOf(fields).UnsafePointer() != reflect.ValueOf(vals).UnsafePointer() {
		t.Fatal("the create's fields are a copy of the command's values")
	}
	update := map[string]any{"name": "Goroka", "alt": int64(5283)}
	d, err = DecidePersist(d.Next, persist(update), now)
	if err != nil {
		t.Fatal(err)
	}
	fields = d.Events[0].Payload.(events.EntityPersisted).Fields
	if !reflect.DeepEqual(fields, map[string]any{"alt": int64(5283)}) || len(update) != 2 {
		t.Fatalf("update's fields %v, command's values %v", fields, update)
	}
}

func TestDecidePersistUnchangedEntityProducesNoEvent(t *testing.T) {
	vals := map[string]any{"name": "Café", "lat": -6.081689834590001}
	d1, _ := DecidePersist(EntityState{}, persist(vals), now)
	nfd := map[string]any{"name": "Cafe\u0301", "lat": -6.081689834590001}
	d2, err := DecidePersist(d1.Next, persist(nfd), now)
	if err != nil || len(d2.Events) != 0 || d2.Next.Version != 1 {
		t.Fatalf("unchanged (NFD retype) produced %+v %v", d2, err)
	}
}

func TestDecidePersistCarriesOnlyChangedFieldsWithOwnRevisions(t *testing.T) {
	d1, _ := DecidePersist(EntityState{}, persist(map[string]any{"name": "Goroka", "alt": int64(1)}), now)
	d2, _ := DecidePersist(d1.Next, persist(map[string]any{"name": "Goroka", "alt": int64(2)}), now)
	d3, _ := DecidePersist(d2.Next, persist(map[string]any{"name": "Goroka", "alt": int64(3)}), now)
	p := d3.Events[0].Payload.(events.EntityPersisted)
	if !reflect.DeepEqual(p.Fields, map[string]any{"alt": int64(3)}) || !reflect.DeepEqual(p.Revisions, map[string]uint64{"alt": 3}) {
		t.Fatalf("payload %+v", p)
	}
	if d3.Next.Fields["name"].Revision != 1 || d3.ExpectedVersion != 2 || p.Created {
		t.Fatalf("state %+v", d3.Next)
	}
}

func TestDecidePersistRejectsNonFiniteWithTypedError(t *testing.T) {
	_, err := DecidePersist(EntityState{}, persist(map[string]any{"lat": math.NaN()}), now)
	if !errors.Is(err, ErrInvalidValue) || !errors.Is(err, events.ErrNonFinite) {
		t.Fatalf("err = %v", err)
	}
}

func TestDecideRemoveKeepsRevisionsAndRecreateContinuesThem(t *testing.T) {
	d1, _ := DecidePersist(EntityState{}, persist(map[string]any{"name": "Goroka"}), now)
	r, err := DecideRemove(d1.Next, Remove{Entity: "Airport", ID: "GKA"}, now)
	if err != nil || len(r.Events) != 1 || r.Next.Exists || r.Next.Fields["name"].Revision != 1 {
		t.Fatalf("remove %+v %v", r, err)
	}
	d2, _ := DecidePersist(r.Next, persist(map[string]any{"name": "Goroka"}), now)
	if !d2.Events[0].Payload.(events.EntityPersisted).Created || d2.Next.Fields["name"].Revision != 2 || d2.Next.Version != 3 {
		t.Fatalf("re-create %+v", d2)
	}
	if _, err := DecideRemove(r.Next, Remove{Entity: "Airport", ID: "GKA"}, now); !errors.Is(err, ErrEntityNotFound) {
		t.Fatalf("double remove: %v", err)
	}
}

func TestDecisionsAreDeterministic(t *testing.T) {
	vals := map[string]any{"a": int64(1), "b": "x", "c": now, "d": nil, "e": true}
	d1, _ := DecidePersist(EntityState{}, persist(vals), now)
	d2, _ := DecidePersist(EntityState{}, persist(vals), now)
	b1, _ := events.MarshalRecord(d1.Events[0])
	b2, _ := events.MarshalRecord(d2.Events[0])
	if string(b1) != string(b2) {
		t.Fatal("same inputs gave different events")
	}
}

func TestDecidePersistOfAnEntityThatDoesNotExistRecordsEveryField(t *testing.T) {
	// State of a removed entity whose field hashes were not cleared: a
	// re-create must still carry every field, each at a raised revision.
	cur := EntityState{Exists: false, Version: 2, Fields: map[string]FieldState{"name": {Hash: canon(t, "Goroka"), Revision: 1}}}
	d, err := DecidePersist(cur, persist(map[string]any{"name": "Goroka"}), now)
	if err != nil || len(d.Events) != 1 {
		t.Fatalf("re-create recorded nothing: %+v %v", d, err)
	}
	p := d.Events[0].Payload.(events.EntityPersisted)
	if !p.Created || !reflect.DeepEqual(p.Fields, map[string]any{"name": "Goroka"}) || p.Revisions["name"] != 2 || d.ExpectedVersion != 2 {
		t.Fatalf("re-create %+v", p)
	}
}

func TestDecisionsRequireEntityAndID(t *testing.T) {
	for _, cmd := range []Persist{{Entity: "Airport"}, {ID: "GKA"}} {
		if _, err := DecidePersist(EntityState{}, cmd, now); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("persist %+v: %v", cmd, err)
		}
	}
	for _, cmd := range []Remove{{Entity: "Airport"}, {ID: "GKA"}} {
		if _, err := DecideRemove(EntityState{Exists: true}, cmd, now); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("remove %+v: %v", cmd, err)
		}
	}
	if _, err := DecideRemove(EntityState{}, Remove{Entity: "Airport", ID: "GKA"}, now); !errors.Is(err, ErrEntityNotFound) {
		t.Fatalf("remove of a missing entity: %v", err)
	}
}

func TestDecideRemoveClearsHashesAndDoesNotAliasTheState(t *testing.T) {
	cur := EntityState{Exists: true, Version: 4, Fields: map[string]FieldState{"name": {Hash: "h", Revision: 3}}}
	r, err := DecideRemove(cur, Remove{Entity: "Airport", ID: "GKA"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stream != "entity/Airport/GKA" || r.ExpectedVersion != 4 || r.Next.Version != 5 ||
		r.Next.Fields["name"] != (FieldState{Revision: 3}) || r.Events[0].Payload != (events.EntityRemoved{Entity: "Airport", ID: "GKA"}) {
		t.Fatalf("remove %+v", r)
	}
	if cur.Fields["name"].Hash != "h" {
		t.Fatal("DecideRemove modified the state it was given")
	}
}

func TestDecidePersistWithHashesComputedBeforehandDecidesTheSame(t *testing.T) {
	vals := map[string]any{"name": "Goroka", "alt": int64(5282), "lat": -6.08}
	hashes := map[string]string{}
	for k, v := range vals {
		h, err := events.Hash(v)
		if err != nil {
			t.Fatal(err)
		}
		hashes[k] = h
	}
	delete(hashes, "lat") // a value without a hash is hashed by the decision
	want, err := DecidePersist(EntityState{}, persist(vals), now)
	if err != nil {
		t.Fatal(err)
	}
	cmd := persist(vals)
	cmd.Hashes = hashes
	got, err := DecidePersist(EntityState{}, cmd, now)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("with hashes: %+v %v, want %+v", got, err, want)
	}
	same, err := DecidePersist(got.Next, cmd, now)
	if err != nil || len(same.Events) != 0 {
		t.Fatalf("unchanged with hashes produced %+v %v", same, err)
	}
}
