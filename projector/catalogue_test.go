package projector_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// TestEveryCatalogueTypeHasAProjection: one sample event of every
// catalogue entry applies to a fresh read model without error (in
// particular never ErrUnknownEventType) and moves the checkpoint, both as
// its Go payload and as the same payload recorded at the entry's schema;
// the two give the same read model.
func TestEveryCatalogueTypeHasAProjection(t *testing.T) {
	entries := events.Catalogue()
	if len(entries) == 0 {
		t.Fatal("the catalogue is empty")
	}
	for _, entry := range entries {
		t.Run(string(entry.Type), func(t *testing.T) {
			t.Parallel()
			sample := samplePayload(entry.Go)
			if sample.EventType() != entry.Type {
				t.Fatalf("sample of %s is a %s", entry.Type, sample.EventType())
			}
			if q, ok := sample.(events.EffectQueued); ok {
				q.ValuesOf, q.KeyColumn = 0, "" // the projector sees values filled in by the log's reads
				sample = q
			}
			fields, err := events.EncodePayload(sample)
			must(t, err)
			forms := []events.Payload{sample, events.Recorded{Type: entry.Type, Schema: entry.Schema, Fields: fields}}
			var dumps [][]byte
			for _, pl := range forms {
				p := openFresh(t)
				err := p.Apply([]events.Event{newHistory().next(sampleStream(entry.Stream), pl)})
				if errors.Is(err, events.ErrUnknownEventType) {
					t.Fatalf("%s (%T) has no projection: %v", entry.Type, pl, err)
				}
				if err != nil || p.Checkpoint() != 1 {
					t.Fatalf("apply %s (%T): %v, checkpoint %d", entry.Type, pl, err, p.Checkpoint())
				}
				dumps = append(dumps, dump(t, p.Path()))
			}
			if !bytes.Equal(dumps[0], dumps[1]) {
				t.Fatalf("typed and recorded %s differ:\n%s\n--- recorded:\n%s", entry.Type, dumps[0], dumps[1])
			}
		})
	}
}

// sampleStream turns a catalogue stream pattern ("entity/<Entity>/<id>")
// into a stream name.
func sampleStream(pattern string) string {
	return strings.NewReplacer("<", "", ">", "").Replace(pattern)
}

// samplePayload builds a value of payload struct type t with every field
// set: strings named after their field (Entity "Airport", ID "A", so an
// entity event lands in the test table), numbers 1, times t0, one-entry
// maps and lists.
func samplePayload(t reflect.Type) events.Payload {
	return sampleValue(t, "").Interface().(events.Payload)
}

func sampleValue(t reflect.Type, name string) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(t0))
			break
		}
		for i := range t.NumField() {
			v.Field(i).Set(sampleValue(t.Field(i).Type, t.Field(i).Name))
		}
	case reflect.String:
		switch name {
		case "Entity":
			v.SetString("Airport")
		case "ID":
			v.SetString("A")
		default:
			v.SetString("x-" + strings.ToLower(name))
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int64:
		v.SetInt(1)
	case reflect.Uint64:
		v.SetUint(1)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x-" + strings.ToLower(name)))
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(reflect.ValueOf("name"), sampleValue(t.Elem(), "name"))
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 1), sampleValue(t.Elem(), name)))
	default:
		panic("samplePayload: unexpected field type " + t.String())
	}
	return v
}
