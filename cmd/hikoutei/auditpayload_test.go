package main

import (
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// An effect.queued whose record refers to its entity.persisted shows the
// values a read filled in, beside the reference: an auditor never sees a
// write without its values.
func TestAuditShowsTheValuesAQueuedEffectRefersTo(t *testing.T) {
	values := map[string]any{"id": "1", "name": "Goroka"}
	q := events.EffectQueued{EffectID: "fx1", Binding: "b1", Op: events.OpAppend, Entity: "Airport", ID: "1",
		Values: values, ValuesOf: 3, KeyColumn: "id"}
	p, err := shownPayload(q)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p["values"], values) || p["values_of"] != int64(3) {
		t.Fatalf("shown: values %#v, values_of %#v", p["values"], p["values_of"])
	}
}
