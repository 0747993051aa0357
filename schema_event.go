package hikoutei

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// The log describes itself: whenever a store opens with entity shapes that
// differ from the last recorded ones, it appends schema.declared to stream
// "schema/entities". Tools (replay, audit, conflicts ack) then need no Go
// types to rebuild or operate on a store.
const (
	TypeSchemaDeclared = "schema.declared"
	SchemaStream       = "schema/entities"
)

// schemaPayload renders the declared entities, in declaration order.
func (s *Store) schemaPayload() map[string]any {
	ents := make([]any, 0, len(s.defsInOrder))
	for _, d := range s.defsInOrder {
		fields := make([]any, 0, len(d.fields))
		for _, f := range d.fields {
			fields = append(fields, map[string]any{"name": f.name, "kind": string(f.kind), "nullable": f.nullable, "owner": string(f.owner)})
		}
		ents = append(ents, map[string]any{"name": d.name, "pk": d.pk.name, "fields": fields})
	}
	return map[string]any{"entities": ents}
}

// recordSchema appends schema.declared when the shapes changed (and there
// are any).
func (s *Store) recordSchema() error {
	if len(s.defsInOrder) == 0 {
		return nil
	}
	last, version, err := lastSchema(s.w.Log())
	if err != nil {
		return err
	}
	want := s.schemaPayload()
	a, _ := events.EncodeCanonical(want)
	b, _ := events.EncodeCanonical(last)
	if last != nil && string(a) == string(b) {
		return nil
	}
	res, err := s.w.Append(events.Unit{Streams: []events.StreamAppend{{Stream: SchemaStream, ExpectedVersion: version,
		Events: []events.Event{{Type: TypeSchemaDeclared, Schema: 1, Payload: want}}}}})
	if err == nil {
		err = res[0].Err
	}
	return err
}

func lastSchema(l *events.Log) (map[string]any, uint64, error) {
	var last map[string]any
	var version uint64
	err := l.ReadStream(SchemaStream, 1, func(e events.Event) error {
		last, version = e.Payload, e.Version
		return nil
	})
	return last, version, err
}

// DeclaredEntities returns the entity shapes last recorded in the log, as
// definitions without Go types. Errors: ErrInvalidEntity when none are
// recorded or the record is malformed.
func DeclaredEntities(l *events.Log) ([]EntityDef, error) {
	p, _, err := lastSchema(l)
	if err != nil {
		return nil, err
	}
	list, ok := p["entities"].([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("%w: the log records no entity declarations", ErrInvalidEntity)
	}
	defs := make([]EntityDef, 0, len(list))
	for _, item := range list {
		d, err := declaredEntity(item)
		if err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return defs, nil
}

func declaredEntity(item any) (EntityDef, error) {
	m, _ := item.(map[string]any)
	name, _ := m["name"].(string)
	pk, _ := m["pk"].(string)
	fields, _ := m["fields"].([]any)
	d := EntityDef{name: name, pk: fieldDef{name: pk, kind: projector.KindString, owner: projector.OwnerSystem}, byName: map[string]int{}}
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		fd := fieldDef{kind: projector.Kind(str(fm["kind"])), owner: projector.Owner(str(fm["owner"]))}
		fd.name, _ = fm["name"].(string)
		fd.nullable, _ = fm["nullable"].(bool)
		if !slices.Contains([]projector.Kind{projector.KindString, projector.KindInt, projector.KindFloat, projector.KindBool, projector.KindTime}, fd.kind) {
			return d, fmt.Errorf("%w: declared field %s.%s has kind %q", ErrInvalidEntity, name, fd.name, fd.kind)
		}
		d.byName[fd.name] = len(d.fields)
		d.fields = append(d.fields, fd)
	}
	if err := (projector.Schema{Tables: []projector.Table{d.table()}}).Validate(); err != nil {
		return d, fmt.Errorf("%w: %w", ErrInvalidEntity, err)
	}
	return d, nil
}

func str(v any) string { s, _ := v.(string); return s }

// ReplayDeclared is Replay with the entity shapes recorded in the log.
func ReplayDeclared(dir, target string, opts ReplayOptions) (uint64, error) {
	if _, err := os.Stat(filepath.Join(dir, events.LogFileName)); err != nil {
		return 0, fmt.Errorf("%w: %s has no %s", ErrNotAStore, dir, events.LogFileName)
	}
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return 0, events.DescribeLocked(dir, err)
	}
	defs, err := DeclaredEntities(l)
	l.Close()
	if err != nil {
		return 0, err
	}
	return Replay(dir, target, opts, defs...)
}
