package hikoutei

import (
	"context"
	"reflect"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
)

// A personal field's values written before the field was marked personal
// are in the log in clear: no key seals them, so erasing their subject
// cannot make their bytes unreadable. Erase counts them (Erasure.InClear)
// and readers of the declared types show Erased in their place once the
// subject was erased (docs/erasure.md, "Values written before a field was
// personal").

// personalDecl is an entity's data subject field ("": its primary key)
// and its personal fields, as declared.
type personalDecl struct {
	subject string
	fields  []string
}

// declsOf is the personalDecl of each declared entity with personal fields.
func declsOf(byType map[reflect.Type]*EntityDef) map[string]personalDecl {
	out := map[string]personalDecl{}
	for _, d := range byType {
		if !d.hasPersonal() {
			continue
		}
		pd := personalDecl{fields: d.personalFields()}
		if d.subject >= 0 {
			pd.subject = d.fields[d.subject].name
		}
		out[d.name] = pd
	}
	return out
}

// inClear reports whether v is a personal value in clear: a non-empty
// string that is neither sealed nor the marker.
func inClear(v any) bool {
	s, ok := v.(string)
	return ok && s != "" && s != Erased && !keyring.IsSealed(s)
}

// subjectErased reports whether the key file records an erasure of subject
// (subject: a string; anything else is not a subject).
func (k *keys) subjectErased(subject any) bool {
	s, ok := subject.(string)
	if k == nil || k.raw || !ok || s == "" || k.ring.Load() == nil {
		return false
	}
	if n, err := events.NormalizeString(s); err == nil {
		s = n
	}
	ring := k.ring.Load()
	return ring.WasErased(ring.Digest(s))
}

// maskFields replaces, in fields (an entity's values by name; id its
// primary key), the personal values in clear of an erased subject with
// marker. A subject field fields lacks (an event that did not change it)
// leaves fields as they are.
func (k *keys) maskFields(entity, id string, fields map[string]any, marker any) map[string]any {
	pd, ok := k.decls[entity]
	if !ok {
		return fields
	}
	var subject any = id
	if pd.subject != "" {
		subject = fields[pd.subject]
	}
	var out map[string]any
	for _, f := range pd.fields {
		if inClear(fields[f]) && (out != nil || k.subjectErased(subject)) {
			if out == nil {
				out = make(map[string]any, len(fields))
				for n, v := range fields {
					out[n] = v
				}
			}
			out[f] = marker
		}
	}
	if out == nil {
		return fields
	}
	return out
}

// countInClear counts the personal values in clear the log holds for
// subject in the streams of the records it owns now (-1: a store opened
// without Go types cannot tell).
func (s *Store) countInClear(ctx context.Context, subject string) (int, error) {
	if len(s.byType) == 0 {
		return -1, nil
	}
	n := 0
	for _, d := range s.byType {
		fields := d.personalFields()
		if len(fields) == 0 {
			continue
		}
		ids, err := s.subjectRecords(ctx, d, subject)
		if err != nil {
			return n, err
		}
		for _, id := range ids {
			err := s.e.Log().ReadStream(events.EntityStream(d.name, id), 0, func(e events.Event) error {
				if x, ok := e.Payload.(events.EntityPersisted); ok {
					for _, f := range fields {
						if inClear(x.Fields[f]) {
							n++
						}
					}
				}
				return nil
			})
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}
