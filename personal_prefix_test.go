package hikoutei

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// Text that starts with the sealed prefix in a field that is not personal
// (typed by the application, or by a person in a user-owned cell) reads
// as the text: it used to make the record unreadable
// (sealed_value_malformed) in Get, Events and View.Record, in a store with
// personal fields and in one without a key file.
func TestPlainValueWithTheSealedPrefixReads(t *testing.T) {
	const text = "hk1e:not sealed, typed"
	s := openPeople(t, t.TempDir())
	defer s.Close()
	res := commit(t, s, &Person{ID: "p1", Name: aliceName, City: text})
	if p, err := Get[Person](ctx, s, "p1"); err != nil || p.City != text || p.Name != aliceName {
		t.Fatalf("Get: %+v %v", p, err)
	}
	for ev, err := range s.Events(ctx, 0) {
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		if x, ok := ev.Payload.(events.EntityPersisted); ok && x.Fields["city"] != text {
			t.Fatalf("Events: city %v", x.Fields["city"])
		}
	}
	v, err := s.AsOf(ctx, AtSeq(res.LastSeq))
	mustT(t, err)
	defer v.Close()
	if rec, err := v.Record(ctx, "Person", "p1"); err != nil || rec["city"] != text {
		t.Fatalf("View.Record: %v %v", rec, err)
	}

	type Place struct {
		ID   string `hikoutei:"id,pk"`
		Name string `hikoutei:"name"`
	}
	o := Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true}
	plain, err := Open(t.Context(), t.TempDir(), o, Entity[Place]("Place"))
	mustT(t, err)
	defer plain.Close()
	commit(t, plain, &Place{ID: "x", Name: text})
	if p, err := Get[Place](ctx, plain, "x"); err != nil || p.Name != text {
		t.Fatalf("a store without personal fields: %+v %v", p, err)
	}
}
