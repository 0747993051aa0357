package aggregates

import (
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

var airportShapes = []events.EntityShape{{Name: "Airport", PK: keyField, Fields: []events.FieldShape{
	{Name: "name", Kind: events.KindString, Owner: events.OwnerUser},
	{Name: "alt", Kind: events.KindInt, Nullable: true, Owner: events.OwnerSystem},
}}, {Name: "Tag", PK: "id"}}

func TestDecideSchemaRecordsOnlyWhenTheShapesChanged(t *testing.T) {
	d, err := DecideSchema(nil, 0, airportShapes, now)
	if err != nil {
		t.Fatal(err)
	}
	if d.Stream != events.SchemaStream || d.ExpectedVersion != 0 || len(d.Events) != 1 ||
		!reflect.DeepEqual(d.Events[0].Payload, events.SchemaDeclared{Entities: airportShapes}) {
		t.Fatalf("first declaration %+v", d)
	}
	// The last declaration as the log gives it back: stored, then decoded.
	b, err := events.MarshalRecord(events.Event{Seq: 1, Stream: d.Stream, Version: 1, At: now, Payload: d.Events[0].Payload})
	if err != nil {
		t.Fatal(err)
	}
	e, err := events.DecodeRecord(1, b)
	if err != nil {
		t.Fatal(err)
	}
	last := e.Payload.(events.SchemaDeclared)
	d, err = DecideSchema(&last, 1, airportShapes, now)
	if err != nil || len(d.Events) != 0 || d.ExpectedVersion != 1 {
		t.Fatalf("same shapes recorded again: %+v %v", d, err)
	}
	changed := append([]events.EntityShape(nil), airportShapes...)
	changed[1] = events.EntityShape{Name: "Tag", PK: "id", Fields: []events.FieldShape{{Name: "label", Kind: events.KindString, Owner: events.OwnerSystem}}}
	d, err = DecideSchema(&last, 1, changed, now)
	if err != nil || len(d.Events) != 1 || !reflect.DeepEqual(d.Events[0].Payload, events.SchemaDeclared{Entities: changed}) {
		t.Fatalf("changed shapes: %+v %v", d, err)
	}
	reordered := []events.EntityShape{airportShapes[1], airportShapes[0]}
	if d, _ := DecideSchema(&last, 1, reordered, now); len(d.Events) != 1 {
		t.Fatal("declaration order is part of the shapes")
	}
}

func TestDecideSchemaWithNoShapesRecordsNothing(t *testing.T) {
	last := events.SchemaDeclared{Entities: airportShapes}
	for _, l := range []*events.SchemaDeclared{nil, &last} {
		d, err := DecideSchema(l, 3, nil, now)
		if err != nil || len(d.Events) != 0 || d.Stream != events.SchemaStream || d.ExpectedVersion != 3 {
			t.Fatalf("no shapes: %+v %v", d, err)
		}
	}
}

func TestDecideDivergenceRecordsTheStopOnTheSyncStream(t *testing.T) {
	d := DecideDivergence("ops", "authority_epoch 7 names store s2", now)
	if d.Stream != events.SyncStream("ops") || d.ExpectedVersion != events.AnyVersion || len(d.Events) != 1 ||
		d.Events[0].Payload != (events.SyncDiverged{Target: "ops", Reason: "authority_epoch 7 names store s2"}) || !d.Events[0].At.Equal(now) {
		t.Fatalf("divergence %+v", d)
	}
}
