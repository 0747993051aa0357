package hikoutei

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// A field marked personal after values were written keeps those values in
// the log in clear: no key seals them. Erasing their subject must not
// pretend otherwise: Erase counts them (InClear), and the readers of the
// declared types show the marker in their place, at every point of the
// history, while a subject not erased still reads its value.
func TestI37_ValuesWrittenBeforeTheFieldWasPersonal(t *testing.T) {
	type PersonV1 struct {
		ID    string  `hikoutei:"id,pk"`
		Name  string  `hikoutei:"name"`
		Email *string `hikoutei:"email"`
		City  string  `hikoutei:"city"`
	}
	dir := t.TempDir()
	o := Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true}
	s, err := Open(t.Context(), dir, o, Entity[PersonV1]("Person"))
	mustT(t, err)
	first := commit(t, s, &PersonV1{ID: "p-old", Name: aliceName, City: "Lyon"}, &PersonV1{ID: "p-keep", Name: bobName, City: "Oslo"},
		&PersonV1{ID: "p-untouched", Name: aliceName, City: "Bern"})
	mustT(t, s.Close())

	s = openPeople(t, dir)
	defer s.Close()
	commit(t, s, &Person{ID: "p-old", Name: aliceName, City: "Nice"}) // the name now sealed, its first value in clear
	commit(t, s, &Person{ID: "p-new", Name: aliceName, City: "Rome"}) // sealed
	er, err := s.Erase(ctx, "p-old")
	if err != nil || er.InClear != 1 {
		t.Fatalf("Erase: %+v %v (want InClear 1: the name written before it was personal)", er, err)
	}
	if er, err := s.Erase(ctx, "p-untouched"); err != nil || er.InClear != 1 || er.Generation != 0 {
		t.Fatalf("Erase of a subject without a key: %+v %v", er, err)
	}
	if p, err := Get[Person](ctx, s, "p-untouched"); err != nil || p.Name != Erased {
		t.Fatalf("Get of a record never written since the field became personal: %+v %v", p, err)
	}
	if er, err := s.Erase(ctx, "p-new"); err != nil || er.InClear != 0 {
		t.Fatalf("Erase of a sealed subject: %+v %v", er, err)
	}
	if p, err := Get[Person](ctx, s, "p-old"); err != nil || p.Name != Erased || p.City != "Nice" {
		t.Fatalf("Get after the erasure: %+v %v", p, err)
	}
	if p, err := Get[Person](ctx, s, "p-keep"); err != nil || p.Name != bobName {
		t.Fatalf("a subject not erased: %+v %v", p, err)
	}
	for ev, err := range s.Events(ctx, 0) {
		mustT(t, err)
		if x, ok := ev.Payload.(events.EntityPersisted); ok && x.ID == "p-old" {
			if v, has := x.Fields["name"]; has && v != (ErasedValue{}) {
				t.Fatalf("Events seq %d: name %v", ev.Seq, v)
			}
		}
	}
	v, err := s.AsOf(ctx, AtSeq(first.LastSeq))
	mustT(t, err)
	defer v.Close()
	if rec, err := v.Record(ctx, "Person", "p-old"); err != nil || rec["name"] != (ErasedValue{}) {
		t.Fatalf("View.Record before the field was personal: %v %v", rec, err)
	}
	if p, err := Get[Person](ctx, v, "p-old"); err != nil || p.Name != Erased {
		t.Fatalf("a View's Get: %+v %v", p, err)
	}
}
