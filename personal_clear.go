package hikoutei

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
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
// marker (and the read model's Erased, which stands for them, too). A subject field fields lacks (an event that did not change it)
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
		stored := fields[f] == Erased && marker != any(Erased) // the read model's marker, read as marker
		if stored || inClear(fields[f]) && (out != nil || k.subjectErased(subject)) {
			if out == nil {
				out = maps.Clone(fields) // copied on the first change
			}
			out[f] = marker
		}
	}
	if out == nil {
		return fields
	}
	return out
}

// countInClear counts the personal values in clear the log holds for a
// subject in the streams of the records it owns now, recs
// (listSubjectRecords; -1: a store opened without Go types cannot tell).
func (s *Store) countInClear(recs []subjectRecs) (int, error) {
	if len(s.byType) == 0 {
		return -1, nil
	}
	n := 0
	for _, r := range recs {
		for _, id := range r.ids {
			err := s.e.Log().ReadStream(events.EntityStream(r.d.name, id), 0, func(e events.Event) error {
				if x, ok := e.Payload.(events.EntityPersisted); ok {
					for _, f := range r.fields {
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

// masking is entities with the read model's mask (projector.Options.Mask):
// an erased subject's personal values in clear are stored as the marker,
// when an event is projected (a rebuild included) and when Erase remasks
// the subject's rows. k lends the key file once it is open (nil before:
// nothing is masked; Erase remasks the rows it erases).
func masking(entities engine.Entities, k func() *keys) engine.Entities {
	return func(l *events.Log) (*engine.Registry, error) {
		reg, err := entities(l)
		if err != nil {
			return nil, err
		}
		return reg.WithMask(func(entity, id string, fields map[string]any) map[string]any {
			if kk := k(); kk != nil {
				return kk.maskFields(entity, id, fields, Erased)
			}
			return fields
		}), nil
	}
}

// remaskErased rewrites the read-model rows of d's records ids (those
// subject owns) with the marker in place of their personal values in
// clear, before Erase queues the rewrite of their cells from them.
func (s *Store) remaskErased(d *EntityDef, ids []string) error {
	if _, err := s.e.Remask(d.name, ids); err != nil {
		return fmt.Errorf("mask %s's values in clear in the read model: %w", d.name, err)
	}
	return nil
}

// replayKeys opens, read-only, the key file of the closed store in dir for
// a replay's mask (nil: no key file, or a running store holds it: nothing
// erased is known, nothing is masked; likewise a key file a kill left
// before its identity, which Open then initialises).
func replayKeys(dir string, byType map[reflect.Type]*EntityDef) (*keys, error) {
	if len(declsOf(byType)) == 0 {
		return nil, nil // nothing to mask
	}
	r, err := keyring.OpenReadOnlyNoWait(filepath.Join(dir, keyring.File))
	if errors.Is(err, fs.ErrNotExist) || keyring.Busy(err) || keyring.Uninitialised(err) {
		return nil, nil // no key file yet, a running store's, or one never initialised (no erasure in it)
	}
	if err != nil {
		return nil, err
	}
	k := &keys{decls: declsOf(byType)}
	k.ring.Store(r)
	return k, nil
}
