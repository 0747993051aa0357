package events

import (
	"fmt"
	"maps"
	"reflect"
	"sort"
)

//go:generate go run ../internal/eventdoc -out ../docs/events.md

// Type names one entry of the event catalogue: dotted, e.g.
// "entity.persisted". It is stored in every record.
type Type string

// Payload is the typed body of an event: every entry of the catalogue is
// one Go struct type implementing Payload, and only those can be appended
// or read. A payload is encoded as a canonical map whose keys are the
// struct's `canon` tags (see EncodePayload).
type Payload interface {
	// EventType is the catalogue entry the payload belongs to.
	EventType() Type
}

// Entry describes one catalogue entry: what docs/events.md documents.
type Entry struct {
	Type   Type
	Schema uint32       // the schema this build writes; older ones are upcast on read
	Stream string       // the stream the event is appended to, as a pattern
	Go     reflect.Type // the payload struct
	Fields []Field      // the payload's keys, in declaration order
	// Upcasts lists the schemas this build upcasts from (each to the next).
	Upcasts []uint32
}

// Field is one key of a payload.
type Field struct {
	Key       string
	GoName    string
	Go        reflect.Type
	OmitEmpty bool // absent from the payload when zero
}

// entry is a registered catalogue entry with its codec.
type entry struct {
	Entry
	plan *structPlan
	up   map[uint32]upcaster // from schema → step to schema+1
	// expand, when set, fills in the derived keys a current-schema
	// record left out (see derived.go), in the map it is given.
	expand func(map[string]any) map[string]any
}

// expandWith sets the derived-key step of t (package init only).
func expandWith(t Type, fn func(map[string]any) map[string]any) {
	catalogue[t].expand = fn
}

// upcaster rewrites a payload stored at one schema into the shape of the
// next. It is pure and deterministic: replay calls it.
type upcaster func(payload map[string]any) (map[string]any, error)

var catalogue = map[Type]*entry{}

// register adds P to the catalogue (package init only; a malformed entry
// is a programming error and panics).
func register[P Payload](schema uint32, stream string, upcasts ...upcast) {
	var zero P
	t := reflect.TypeFor[P]()
	typ := zero.EventType()
	if _, dup := catalogue[typ]; dup {
		panic(fmt.Sprintf("events: %s registered twice", typ))
	}
	plan := planFor(t)
	e := &entry{Entry: Entry{Type: typ, Schema: schema, Stream: stream, Go: t, Fields: plan.fields()}, plan: plan, up: map[uint32]upcaster{}}
	for _, u := range upcasts {
		e.up[u.from] = u.fn
		e.Upcasts = append(e.Upcasts, u.from)
	}
	catalogue[typ] = e
}

// upcast is one registered upcast step.
type upcast struct {
	from uint32
	fn   upcaster
}

// Catalogue returns every entry, sorted by type.
func Catalogue() []Entry {
	out := make([]Entry, 0, len(catalogue))
	for _, e := range catalogue {
		out = append(out, e.Entry)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// Lookup returns the catalogue entry of t.
func Lookup(t Type) (Entry, bool) {
	e, ok := catalogue[t]
	if !ok {
		return Entry{}, false
	}
	return e.Entry, true
}

// entryOf returns the entry of p, checking that p is the entry's own type.
func entryOf(p Payload) (*entry, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: no payload", ErrInvalidEvent)
	}
	e, ok := catalogue[p.EventType()]
	if !ok || reflect.TypeOf(p) != e.Go {
		return nil, &PayloadError{Type: p.EventType(), Reason: fmt.Sprintf("%T is not in the event catalogue", p), unknown: true}
	}
	return e, nil
}

// storedForm is a payload whose record leaves out what the log holds
// elsewhere (effect.queued's values, by values_of).
type storedForm interface {
	stored() Payload
	// holdsLeftOut reports a payload holding what stored leaves out: a
	// record never does.
	holdsLeftOut() bool
}

// EncodePayload returns p as its canonical map (the form records store and
// hashes cover). Errors: *PayloadError (ErrUnknownEventType) for a type
// outside the catalogue.
func EncodePayload(p Payload) (map[string]any, error) {
	if r, ok := p.(Recorded); ok {
		if r.Fields == nil {
			return map[string]any{}, nil
		}
		return r.Fields, nil
	}
	e, err := entryOf(p)
	if err != nil {
		return nil, err
	}
	if s, ok := p.(storedForm); ok {
		p = s.stored()
	}
	return e.plan.encode(reflect.ValueOf(p)), nil
}

// DecodePayload returns the typed payload of an event of type t stored at
// schema, upcasting it to the current schema first. Errors: *PayloadError
// wrapping ErrUnknownEventType (t is not in the catalogue, or schema is
// newer than this build writes) or ErrMalformedPayload (an unknown key, a
// value of the wrong type, a missing required key, a failed upcast).
func DecodePayload(t Type, schema uint32, m map[string]any) (Payload, error) {
	return decodeTyped(t, schema, m, false)
}

// decodeTyped is DecodePayload; owned says m is the caller's to modify
// (a record's freshly decoded map), else a key filled in goes to a copy.
func decodeTyped(t Type, schema uint32, m map[string]any, owned bool) (Payload, error) {
	e, ok := catalogue[t]
	if !ok {
		return nil, &PayloadError{Type: t, Reason: "not in the event catalogue", unknown: true}
	}
	if schema == 0 {
		return nil, &PayloadError{Type: t, Reason: "schema 0 (schemas start at 1)"}
	}
	m, err := e.upcast(schema, m)
	if err != nil {
		return nil, err
	}
	if e.expand != nil {
		if !owned {
			m = maps.Clone(m)
		}
		m = e.expand(m)
	}
	v := reflect.New(e.Go).Elem()
	if err := e.plan.decode(v, m); err != nil {
		return nil, &PayloadError{Type: t, Reason: err.Error()}
	}
	p := v.Interface().(Payload)
	if s, ok := p.(storedForm); ok && s.holdsLeftOut() {
		return nil, &PayloadError{Type: t, Reason: "a record holds what its stored form leaves out"}
	}
	return p, nil
}

// upcast rewrites m from schema to the entry's current schema.
func (e *entry) upcast(schema uint32, m map[string]any) (map[string]any, error) {
	if schema > e.Schema {
		return nil, &PayloadError{Type: e.Type, Reason: fmt.Sprintf("schema %d is newer than this build's %d", schema, e.Schema), unknown: true}
	}
	for s := schema; s < e.Schema; s++ {
		step, ok := e.up[s]
		if !ok {
			return nil, &PayloadError{Type: e.Type, Reason: fmt.Sprintf("no upcast from schema %d", s)}
		}
		var err error
		if m, err = step(m); err != nil {
			return nil, &PayloadError{Type: e.Type, Reason: fmt.Sprintf("upcast from schema %d: %v", s, err)}
		}
	}
	return m, nil
}

// PayloadError reports a payload that cannot be decoded or encoded. It
// wraps ErrUnknownEventType (a type or schema this build does not know) or
// ErrMalformedPayload. Seq is set when the event was read from a log.
type PayloadError struct {
	Seq     uint64
	Type    Type
	Reason  string
	unknown bool
}

func (e *PayloadError) Error() string {
	code := ErrMalformedPayload
	if e.unknown {
		code = ErrUnknownEventType
	}
	if e.Seq > 0 {
		return fmt.Sprintf("%s: seq %d %s: %s", code, e.Seq, e.Type, e.Reason)
	}
	return fmt.Sprintf("%s: %s: %s", code, e.Type, e.Reason)
}

// Unwrap returns ErrUnknownEventType or ErrMalformedPayload.
func (e *PayloadError) Unwrap() error {
	if e.unknown {
		return ErrUnknownEventType
	}
	return ErrMalformedPayload
}

// Recorded is a payload as an older build (or a foreign writer) recorded
// it: any type, schema and canonical fields. Reads never return it: they
// decode and upcast a record into its catalogue type, or fail. Appends
// accept it so that tests and fixture generators can write the old
// schemas and unknown types a log must cope with; the engine never does.
type Recorded struct {
	Type   Type
	Schema uint32
	Fields map[string]any
}

// EventType implements Payload.
func (r Recorded) EventType() Type { return r.Type }

// schemaOf is the schema a record of p is written at.
func schemaOf(p Payload) uint32 {
	if r, ok := p.(Recorded); ok {
		return max(r.Schema, 1)
	}
	return catalogue[p.EventType()].Schema
}
