package events

import (
	"errors"
	"maps"
	"reflect"
	"testing"
)

// The fast decode of entity.persisted gives exactly what the general
// path (fromEnvelope, the upcast/expand steps, the reflective plan) gives
// for every payload it accepts, and accepts none the general path refuses.
func TestDecodePersistedFastMatchesGeneral(t *testing.T) {
	if got := catalogue[TypeEntityPersisted].Schema; got != persistedSchema {
		t.Fatalf("%s is at schema %d, the fast path decodes %d", TypeEntityPersisted, got, persistedSchema)
	}
	fields := func() map[string]any { return map[string]any{"name": "Lyon", "pop": int64(5), "gone": nil} }
	revs := func() map[string]any { return map[string]any{"name": int64(2), "pop": int64(1), "gone": int64(7)} }
	cases := []map[string]any{
		{"fields": fields()},
		{"fields": fields(), "revisions": revs()},
		{"fields": fields(), "created": false},
		{"fields": fields(), "created": nil},
		{"fields": fields(), "actor": "sheet"},
		{"fields": fields(), "actor": nil},
		{"entity": "City", "id": "c/1", "fields": fields()},
		{"entity": "City", "fields": fields()},
		{"entity": "", "id": "c1", "fields": fields()},
		{"fields": map[string]any{}},
		{"fields": nil},
		{},
		{"fields": fields(), "revisions": map[string]any{}},
		{"fields": fields(), "revisions": nil},
		{"fields": fields(), "revisions": map[string]any{"name": int64(-1)}},
		{"fields": fields(), "revisions": map[string]any{"name": "1"}},
		{"fields": "not a map"},
		{"fields": fields(), "created": "yes"},
		{"fields": fields(), "entity": int64(1), "id": "x"},
		{"fields": fields(), "surprise": true},
	}
	streams := []string{"entity/City/c1", "entity/City", "outbox/x", "entity/City/c/1"}
	accepted := 0
	for i, m := range cases {
		for _, stream := range streams {
			for _, version := range []uint64{1, 2} {
				fast, ok := decodePersistedFast(stream, version, maps.Clone(m))
				general, err := decodeTyped(TypeEntityPersisted, persistedSchema,
					fromEnvelope(TypeEntityPersisted, persistedSchema, stream, version, maps.Clone(m)), true)
				switch {
				case ok && err != nil:
					t.Errorf("case %d %s v%d: the fast path accepted what the general path refuses (%v): %+v", i, stream, version, err, fast)
				case ok && !reflect.DeepEqual(general, fast):
					t.Errorf("case %d %s v%d:\n fast    %#v\n general %#v", i, stream, version, fast, general)
				case ok:
					accepted++
				}
			}
		}
	}
	if accepted < 20 {
		t.Fatalf("the fast path accepted only %d payloads", accepted)
	}
}

// appendPersisted writes byte for byte what encodeCompacted (the
// canonical map with the derived keys deleted) writes, and the record
// decodes back to the payload.
func TestAppendPersistedMatchesCompacted(t *testing.T) {
	fields := map[string]any{"name": "Lyon", "pop": int64(5), "gone": nil, "at": "2026-01-02"}
	payloads := []EntityPersisted{
		{Entity: "City", ID: "c1", Created: true, Fields: fields, Revisions: map[string]uint64{"name": 1, "pop": 1, "gone": 1, "at": 1}},
		{Entity: "City", ID: "c1", Fields: fields, Revisions: map[string]uint64{"name": 3, "pop": 1, "gone": 1, "at": 1}},
		{Entity: "City", ID: "c1", Created: true, Fields: map[string]any{"name": "x"}, Revisions: map[string]uint64{"name": 2}, Actor: "sheet"},
		{Entity: "City", ID: "c1", Fields: map[string]any{}, Revisions: map[string]uint64{}},
		{Entity: "City", ID: "c1"},
		{Entity: "A/B", ID: "c1", Created: true, Fields: map[string]any{"name": "x"}, Revisions: map[string]uint64{"name": 1}},
	}
	streams := []string{"entity/City/c1", "entity/Other/c1", "entity/A/B/c1"}
	for i, p := range payloads {
		for _, stream := range streams {
			for _, version := range []uint64{0, 1, 2} {
				e := Event{Payload: p}
				want, err := encodeCompacted(nil, stream, version, &e)
				if err != nil {
					t.Fatal(err)
				}
				got, err := appendPersisted(nil, stream, version, p)
				if err != nil || string(got) != string(want) {
					t.Fatalf("payload %d %s v%d:\n got  %q %v\n want %q", i, stream, version, got, err, want)
				}
			}
		}
	}
	if _, err := appendPersisted(nil, "entity/City/c1", 1, EntityPersisted{Entity: "City", ID: "c1",
		Fields: map[string]any{"bad": struct{}{}}}); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("an unsupported value: %v", err)
	}
}
