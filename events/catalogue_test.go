package events

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// fullSample returns a value of payload struct type t with every field
// set to a non-zero value that has a canonical form: NFC strings with a
// non-ASCII letter, negative int64s, uint64s above 2^62, UTC times with
// milliseconds, maps holding every canonical kind, two-item lists. seed
// makes the values of one sample differ from field to field and from
// other samples.
func fullSample(t reflect.Type, seed int) reflect.Value {
	v := reflect.New(t).Elem()
	for i := range t.NumField() {
		v.Field(i).Set(fullValue(t.Field(i).Type, t.Field(i).Name, seed*100+i))
	}
	return v
}

func fullValue(t reflect.Type, name string, seed int) reflect.Value {
	at := time.Date(2026, 11, 30, 12, 0, 0, 123_000_000, time.UTC).Add(time.Duration(seed) * time.Millisecond)
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d-Café", name, seed))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int64:
		v.SetInt(-1000 - int64(seed))
	case reflect.Uint64:
		v.SetUint(1<<62 + uint64(seed))
	case reflect.Struct:
		if t != reflect.TypeFor[time.Time]() {
			return fullSample(t, seed)
		}
		v.Set(reflect.ValueOf(at))
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"list": []any{int64(-1), 2.5, "s", true, nil, at}, "none": nil}))
	case reflect.Map:
		switch t.Elem().Kind() {
		case reflect.Interface:
			v.Set(reflect.ValueOf(map[string]any{"s": name, "i": int64(-7), "f": 0.25, "b": false, "t": at, "n": nil,
				"l": []any{"x", int64(1)}, "m": map[string]any{"k": "v"}, "é": ""}))
		case reflect.String:
			v.Set(reflect.ValueOf(map[string]string{"a": name, "b": ""}))
		case reflect.Int64:
			v.Set(reflect.ValueOf(map[string]int64{"a": -1, "b": int64(seed)}))
		case reflect.Uint64:
			v.Set(reflect.ValueOf(map[string]uint64{"a": 0, "b": 1<<62 + uint64(seed)}))
		}
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 2), fullSample(t.Elem(), seed+1), fullSample(t.Elem(), seed+2)))
	}
	if v.IsZero() {
		panic(fmt.Sprintf("fullValue: no sample for %s (%s)", name, t))
	}
	return v
}

// minimalSample returns the zero value of payload struct type t with only
// its required fields set.
func minimalSample(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	for i := range t.NumField() {
		if isRequired(t.Field(i)) {
			v.Field(i).SetString("req-" + t.Field(i).Name)
		}
	}
	return v
}

func isRequired(f reflect.StructField) bool {
	return slices.Contains(strings.Split(f.Tag.Get("canon"), ",")[1:], "required")
}

// samples returns a full and a minimal sample of the entry's payload type.
func samples(e Entry) map[string]Payload {
	return map[string]Payload{
		"full":    fullSample(e.Go, 1).Interface().(Payload),
		"minimal": minimalSample(e.Go).Interface().(Payload),
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestCatalogueEntriesDescribeTheirGoTypes: Catalogue is sorted with one
// entry per type, Lookup finds each, each entry's Go type is its payload
// type with one Field per struct field (key and omitempty from the tag),
// and every schema older than the current one has an upcast step.
func TestCatalogueEntriesDescribeTheirGoTypes(t *testing.T) {
	entries := Catalogue()
	if len(entries) == 0 {
		t.Fatal("the catalogue is empty")
	}
	for i, e := range entries {
		if i > 0 && entries[i-1].Type >= e.Type {
			t.Errorf("catalogue not sorted or duplicated at %s", e.Type)
		}
		if got, ok := Lookup(e.Type); !ok || got.Go != e.Go {
			t.Errorf("Lookup(%s) = %v, %v", e.Type, got.Go, ok)
		}
		zero := reflect.New(e.Go).Elem().Interface().(Payload)
		if zero.EventType() != e.Type {
			t.Errorf("%s: Go type %s is of type %s", e.Type, e.Go, zero.EventType())
		}
		if e.Schema < 1 || e.Stream == "" || len(e.Fields) != e.Go.NumField() {
			t.Errorf("%s: schema %d, stream %q, %d fields for %d struct fields", e.Type, e.Schema, e.Stream, len(e.Fields), e.Go.NumField())
		}
		for j, f := range e.Fields {
			sf := e.Go.Field(j)
			tag := strings.Split(sf.Tag.Get("canon"), ",")
			if f.Key != tag[0] || f.GoName != sf.Name || f.Go != sf.Type || f.OmitEmpty != slices.Contains(tag[1:], "omitempty") {
				t.Errorf("%s field %d: %+v, struct field %s %s tag %q", e.Type, j, f, sf.Name, sf.Type, sf.Tag.Get("canon"))
			}
		}
		for s := uint32(1); s < e.Schema; s++ {
			if !slices.Contains(e.Upcasts, s) {
				t.Errorf("%s: no upcast from schema %d to %d", e.Type, s, s+1)
			}
		}
	}
	if _, ok := Lookup("test.not_in_the_catalogue"); ok {
		t.Error("Lookup found a type outside the catalogue")
	}
}

// TestCataloguePayloadsRoundTrip: for every entry, a full sample (every
// field set) and a minimal one (only the required fields) go
// EncodePayload → EncodeCanonical → DecodeCanonical → DecodePayload back
// to a deeply equal payload of the entry's Go type, and encoding the
// decoded payload gives the same canonical bytes. Every key is present
// in the encoding except omitempty fields that are zero.
func TestCataloguePayloadsRoundTrip(t *testing.T) {
	for _, e := range Catalogue() {
		for name, p := range samples(e) {
			t.Run(string(e.Type)+"/"+name, func(t *testing.T) {
				m, err := EncodePayload(p)
				must(t, err)
				var wantKeys []string
				for _, f := range e.Fields {
					if !f.OmitEmpty || name == "full" {
						wantKeys = append(wantKeys, f.Key)
					}
				}
				sort.Strings(wantKeys)
				if got := sortedKeys(m); !slices.Equal(got, wantKeys) {
					t.Fatalf("encoded keys %q, want %q", got, wantKeys)
				}
				b, err := EncodeCanonical(m)
				must(t, err)
				v, err := DecodeCanonical(b)
				must(t, err)
				back, err := DecodePayload(e.Type, e.Schema, v.(map[string]any))
				must(t, err)
				want := p
				if s, ok := p.(storedForm); ok {
					want = s.stored() // what the log holds elsewhere is filled in by reads (ValueResolver)
				}
				if reflect.TypeOf(back) != e.Go || !reflect.DeepEqual(back, want) {
					t.Fatalf("round trip changed the payload:\n got %#v\nwant %#v", back, want)
				}
				again, err := EncodePayload(back)
				must(t, err)
				b2, err := EncodeCanonical(again)
				must(t, err)
				if !bytes.Equal(b, b2) {
					t.Fatalf("re-encoding differs:\n%s\n%s", b, b2)
				}
			})
		}
	}
}

// checkPayloadError asserts err is a *PayloadError of typ wrapping want
// (and not the other payload sentinel), and that nothing was decoded.
func checkPayloadError(t *testing.T, p Payload, err error, typ Type, want error) {
	t.Helper()
	other := ErrUnknownEventType
	if want == ErrUnknownEventType {
		other = ErrMalformedPayload
	}
	var pe *PayloadError
	if !errors.As(err, &pe) || pe.Type != typ || !errors.Is(err, want) || errors.Is(err, other) || p != nil {
		t.Fatalf("got %#v, %v; want a *PayloadError of %s wrapping %v", p, err, typ, want)
	}
}

// TestDecodePayloadRejectsMalformedPayloads: an unknown key, a value of
// the wrong type (at the top level, in a map, in a list), a negative
// number for a uint64, and a missing (absent, null or empty) required key
// fail with a *PayloadError wrapping ErrMalformedPayload.
func TestDecodePayloadRejectsMalformedPayloads(t *testing.T) {
	removed := func(extra map[string]any) map[string]any {
		m := map[string]any{"entity": "Airport", "id": "GKA"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	persisted := func(revs map[string]any) map[string]any {
		return map[string]any{"entity": "Airport", "id": "GKA", "created": true, "fields": map[string]any{"name": "x"}, "revisions": revs}
	}
	cases := []struct {
		name string
		typ  Type
		m    map[string]any
	}{
		{"unknown key", TypeEntityRemoved, removed(map[string]any{"extra": "x"})},
		{"unknown key of a list item", TypeSchemaDeclared, map[string]any{"entities": []any{map[string]any{"name": "A", "table": "x"}}}},
		{"string as int", TypeEntityRemoved, removed(map[string]any{"id": int64(1)})},
		{"int as bool", TypeEntityPersisted, map[string]any{"entity": "A", "id": "1", "created": int64(1)}},
		{"float as int64", TypeEffectClaimed, map[string]any{"effect_id": "e", "attempt": 1.5}},
		{"string as time", TypeEffectFailed, map[string]any{"effect_id": "e", "retry_at": "2026-11-30T12:00:00.000Z"}},
		{"list as map", TypeEntityPersisted, map[string]any{"entity": "A", "id": "1", "fields": []any{"name"}}},
		{"string in a uint64 map", TypeEntityPersisted, persisted(map[string]any{"name": "1"})},
		{"map as list", TypeSchemaDeclared, map[string]any{"entities": map[string]any{}}},
		{"string as list item", TypeSchemaDeclared, map[string]any{"entities": []any{"Airport"}}},
		{"negative uint64", TypeConflictResolved, map[string]any{"conflict_id": "c", "canonical_revision": int64(-1)}},
		{"negative uint64 in a map", TypeEntityPersisted, persisted(map[string]any{"name": int64(-1)})},
		{"required key absent", TypeEntityRemoved, map[string]any{"entity": "Airport"}},
		{"required key null", TypeEntityRemoved, removed(map[string]any{"id": nil})},
		{"required key empty", TypeEffectQueued, map[string]any{"effect_id": "e", "binding": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _ := Lookup(c.typ)
			p, err := DecodePayload(c.typ, e.Schema, c.m)
			checkPayloadError(t, p, err, c.typ, ErrMalformedPayload)
		})
	}
}

// TestDecodePayloadUnknownTypeOrNewerSchema: a type outside the catalogue
// and, for every entry, a schema newer than the entry's fail with a
// *PayloadError wrapping ErrUnknownEventType (a log of a newer build),
// even when the fields would decode at the current schema.
func TestDecodePayloadUnknownTypeOrNewerSchema(t *testing.T) {
	p, err := DecodePayload("test.unknown_type", 1, map[string]any{})
	checkPayloadError(t, p, err, "test.unknown_type", ErrUnknownEventType)
	for _, e := range Catalogue() {
		fields, err := EncodePayload(fullSample(e.Go, 2).Interface().(Payload))
		must(t, err)
		p, err := DecodePayload(e.Type, e.Schema+1, fields)
		checkPayloadError(t, p, err, e.Type, ErrUnknownEventType)
	}
}

// TestEncodePayloadRejectsTypesOutsideTheCatalogue: a Go type that is not
// its catalogue entry's type has no encoding.
func TestEncodePayloadRejectsTypesOutsideTheCatalogue(t *testing.T) {
	for _, p := range []Payload{foreignPayload{}, impostorPayload{}} {
		m, err := EncodePayload(p)
		var pe *PayloadError
		if !errors.As(err, &pe) || !errors.Is(err, ErrUnknownEventType) || m != nil {
			t.Errorf("EncodePayload(%T) = %v, %v", p, m, err)
		}
	}
}

type foreignPayload struct{}

func (foreignPayload) EventType() Type { return "test.foreign" }

// impostorPayload claims a catalogue type without being its Go type.
type impostorPayload EntityRemoved

func (impostorPayload) EventType() Type { return TypeEntityRemoved }

// TestEntityPersistedSchema1UpcastsToSchema2: a schema-1 entity.persisted
// {entity, id, values, revisions} decodes as schema 2 with "values"
// renamed "fields" and "created" inferred: true exactly when every
// revision is 1. A schema-1 payload without its maps fails as malformed.
func TestEntityPersistedSchema1UpcastsToSchema2(t *testing.T) {
	if e, _ := Lookup(TypeEntityPersisted); e.Schema != 3 || !slices.Equal(e.Upcasts, []uint32{1, 2}) {
		t.Fatalf("%s entry: schema %d, upcasts %v", TypeEntityPersisted, e.Schema, e.Upcasts)
	}
	v1 := func(revs map[string]any) map[string]any {
		return map[string]any{"entity": "Airport", "id": "GKA", "values": map[string]any{"name": "Goroka", "alt": int64(5282)},
			"revisions": revs}
	}
	cases := []struct {
		name string
		revs map[string]any
		want EntityPersisted
	}{
		{"every revision 1 is a create", map[string]any{"name": int64(1), "alt": int64(1)}, EntityPersisted{Entity: "Airport", ID: "GKA",
			Created: true, Fields: map[string]any{"name": "Goroka", "alt": int64(5282)}, Revisions: map[string]uint64{"name": 1, "alt": 1}}},
		{"one revision above 1 is an update", map[string]any{"name": int64(1), "alt": int64(2)}, EntityPersisted{Entity: "Airport", ID: "GKA",
			Created: false, Fields: map[string]any{"name": "Goroka", "alt": int64(5282)}, Revisions: map[string]uint64{"name": 1, "alt": 2}}},
		{"every revision above 1 is an update", map[string]any{"name": int64(3), "alt": int64(2)}, EntityPersisted{Entity: "Airport", ID: "GKA",
			Created: false, Fields: map[string]any{"name": "Goroka", "alt": int64(5282)}, Revisions: map[string]uint64{"name": 3, "alt": 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Through the canonical bytes, as a log record carries it.
			b, err := EncodeCanonical(v1(c.revs))
			must(t, err)
			m, err := DecodeCanonical(b)
			must(t, err)
			p, err := DecodePayload(TypeEntityPersisted, 1, m.(map[string]any))
			must(t, err)
			if !reflect.DeepEqual(p, c.want) {
				t.Fatalf("upcast %#v, want %#v", p, c.want)
			}
		})
	}
	for name, m := range map[string]map[string]any{
		"without values":    {"entity": "Airport", "id": "GKA", "revisions": map[string]any{"name": int64(1)}},
		"without revisions": {"entity": "Airport", "id": "GKA", "values": map[string]any{"name": "x"}},
		"without id":        v1(map[string]any{"name": int64(1), "alt": int64(1)}),
	} {
		if name == "without id" {
			delete(m, "id")
		}
		p, err := DecodePayload(TypeEntityPersisted, 1, m)
		if p != nil || !errors.Is(err, ErrMalformedPayload) {
			t.Errorf("schema 1 %s: %#v, %v", name, p, err)
		}
	}
}

// TestRecordedPayloadsReadBackAsPayloadErrors: records appended with
// Recorded that this build cannot decode — an unknown type, a known type
// at a newer schema, a known type with malformed fields — make ReadFrom
// and ReadStream fail with a *PayloadError naming the record's sequence:
// ErrUnknownEventType for the first two, ErrMalformedPayload for the
// last. The records around it still read, typed.
func TestRecordedPayloadsReadBackAsPayloadErrors(t *testing.T) {
	cases := []struct {
		name string
		p    Recorded
		want error
	}{
		{"unknown type", Recorded{Type: "test.from_a_newer_build", Schema: 1, Fields: map[string]any{"x": "y"}}, ErrUnknownEventType},
		{"newer schema", Recorded{Type: TypeEntityRemoved, Schema: 9, Fields: map[string]any{"entity": "A", "id": "1"}}, ErrUnknownEventType},
		{"malformed fields", Recorded{Type: TypeEntityRemoved, Schema: 1, Fields: map[string]any{"entity": "A"}}, ErrMalformedPayload},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _ := openTestLog(t)
			f := acquire(t, l, "w1").Fence()
			res, err := l.Append(f, unit("s/before", 0, 2),
				Unit{Streams: []StreamAppend{{Stream: "s/recorded", Events: []Event{{Payload: c.p}}}}},
				unit("s/after", 0, 1))
			must(t, err)
			if res[1].Err != nil || res[1].First == 0 {
				t.Fatalf("append of a Recorded payload: %+v", res[1])
			}
			seq := res[1].First
			check := func(what string, err error) {
				t.Helper()
				var pe *PayloadError
				if !errors.As(err, &pe) || pe.Seq != seq || pe.Type != c.p.Type || !errors.Is(err, c.want) {
					t.Fatalf("%s: %v; want a *PayloadError of %s at seq %d wrapping %v", what, err, c.p.Type, seq, c.want)
				}
			}
			check("ReadFrom", l.ReadFrom(1, func(Event) error { return nil }))
			check("ReadFrom at the record", l.ReadFrom(seq, func(Event) error { return nil }))
			check("ReadStream", l.ReadStream("s/recorded", 1, func(Event) error { return nil }))
			// The records around it read as their typed payloads.
			var around []Event
			must(t, l.ReadStream("s/before", 1, func(e Event) error { around = append(around, e); return nil }))
			around = append(around, readAll(t, l, seq+1)...)
			if len(around) != 3 || around[0].Payload != note(0) || around[1].Payload != note(1) || around[2].Payload != note(0) ||
				around[2].Seq != seq+1 {
				t.Fatalf("the records around it: %+v", around)
			}
		})
	}
}

// FuzzDecodePayload: arbitrary canonical bytes decoded as the payload of
// every catalogue type, at its current schema and at every schema it
// upcasts from, never panic; a failure is a *PayloadError wrapping
// ErrMalformedPayload (the type and schema are known); a success is a
// payload of the entry's Go type that encodes, and decodes again to an
// equal payload whose encoding is then stable.
func FuzzDecodePayload(f *testing.F) {
	for _, e := range Catalogue() {
		for _, p := range samples(e) {
			m, err := EncodePayload(p)
			if err != nil {
				f.Fatal(err)
			}
			b, err := EncodeCanonical(m)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	old, _ := EncodeCanonical(map[string]any{"entity": "A", "id": "1", "values": map[string]any{"n": "x"},
		"revisions": map[string]any{"n": int64(1)}})
	f.Add(old)
	f.Add([]byte("m0:"))
	f.Add([]byte("n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := DecodeCanonical(b); err != nil {
			return
		}
		for _, e := range Catalogue() {
			for _, schema := range append([]uint32{e.Schema}, e.Upcasts...) {
				v, _ := DecodeCanonical(b) // a fresh map for every decode
				m, ok := v.(map[string]any)
				if !ok {
					return
				}
				checkFuzzedPayload(t, e, schema, m)
			}
		}
	})
}

func checkFuzzedPayload(t *testing.T, e Entry, schema uint32, m map[string]any) {
	p, err := DecodePayload(e.Type, schema, m)
	if err != nil {
		var pe *PayloadError
		if !errors.As(err, &pe) || pe.Type != e.Type || !errors.Is(err, ErrMalformedPayload) || p != nil {
			t.Fatalf("%s schema %d: %#v, %v; want a *PayloadError wrapping ErrMalformedPayload", e.Type, schema, p, err)
		}
		return
	}
	if reflect.TypeOf(p) != e.Go {
		t.Fatalf("%s schema %d decoded a %T", e.Type, schema, p)
	}
	enc, err := EncodePayload(p)
	if err != nil {
		t.Fatalf("%s: decoded %#v does not encode: %v", e.Type, p, err)
	}
	b, err := EncodeCanonical(enc)
	if err != nil {
		t.Fatalf("%s: decoded %#v has no canonical form: %v", e.Type, p, err)
	}
	v, err := DecodeCanonical(b)
	if err != nil {
		t.Fatalf("%s: re-encoding %q does not decode: %v", e.Type, b, err)
	}
	again, err := DecodePayload(e.Type, e.Schema, v.(map[string]any))
	if err != nil || !reflect.DeepEqual(again, p) {
		t.Fatalf("%s schema %d: re-encoded %q decodes to %#v, %v; want %#v", e.Type, schema, b, again, err, p)
	}
	enc2, err := EncodePayload(again)
	must(t, err)
	if b2, err := EncodeCanonical(enc2); err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("%s: encoding not stable: %q then %q (%v)", e.Type, b, b2, err)
	}
}

// A record whose payload cannot be decoded stops a read there, after the
// events before it were delivered: a range that ends before it reads whole.
func TestReadFromDeliversTheEventsBeforeAnUndecodableRecord(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w1").Fence()
	for i := range 3 {
		_, err := l.Append(f, Unit{Streams: []StreamAppend{{Stream: "s/a", ExpectedVersion: AnyVersion, Events: []Event{{Payload: note(i)}}}}})
		must(t, err)
	}
	_, err := l.Append(f, Unit{Streams: []StreamAppend{{Stream: "s/b", ExpectedVersion: AnyVersion,
		Events: []Event{{Payload: Recorded{Type: "audit.note", Schema: 1, Fields: map[string]any{"text": "x"}}}}}}})
	must(t, err)
	var got []uint64
	err = l.ReadFrom(1, func(e Event) error { got = append(got, e.Seq); return nil })
	var pe *PayloadError
	if !errors.As(err, &pe) || pe.Seq != 5 || len(got) != 4 || got[3] != 4 {
		t.Fatalf("read %v then %v; want seqs 1-4 then the error of seq 5", got, err)
	}
}

// Schemas start at 1: a record at schema 0 is malformed, not schema 1.
func TestDecodePayloadRejectsSchemaZero(t *testing.T) {
	_, err := DecodePayload(TypeEntityRemoved, 0, map[string]any{"entity": "A", "id": "1"})
	if !errors.Is(err, ErrMalformedPayload) {
		t.Fatalf("schema 0: %v", err)
	}
}
