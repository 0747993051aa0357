package events

import (
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
