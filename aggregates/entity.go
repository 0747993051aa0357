// Package aggregates holds every decision of the store: given state read
// beforehand, a command and `now`, return finished events (or effects to
// queue) or a typed error. Pure: no I/O, no clock, no randomness; the same
// inputs always give the same events, so replay and tests are
// deterministic. The engine (internal/engine) reads the state, calls a
// decision and appends what it returns, unchanged.
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package aggregates

import (
	"fmt"
	"sort"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// FieldState is the canonical state of one field: the hash of its canonical
// value ("" while the entity is removed) and its revision, which rises by one
// each time the canonical value changes and never goes back (no ABA).
type FieldState struct {
	Hash     string
	Revision uint64
}

// EntityState is what a decision needs to know about one entity.
type EntityState struct {
	Exists  bool
	Version uint64 // the entity stream's version (0 = never persisted)
	Fields  map[string]FieldState
}

// Persist asks to store an entity's full set of canonical field values.
// Actor, when set, is recorded in the event (who made the change when it
// was not the application's own commit). CreateOnly refuses an entity
// that exists (ErrEntityExists) instead of changing it.
type Persist struct {
	Entity string
	ID     string
	// Values holds every field's canonical value (see
	// events.EncodeCanonical). A create's event carries this map itself,
	// not a copy (every field of a create changes): the caller leaves it
	// as it is once decided.
	Values map[string]any
	// Hashes, when set, holds events.Hash of values of Values that the
	// caller hashed beforehand (the engine's committers, off the single
	// writer); a value without one is hashed here.
	Hashes     map[string]string
	Actor      events.Actor
	CreateOnly bool
}

// Remove asks to delete an entity.
type Remove struct {
	Entity string
	ID     string
}

// Decision is the outcome of a command on one stream: the events to append
// to Stream at ExpectedVersion (none when nothing changed) and, for an
// entity, its state after them.
type Decision struct {
	Stream          string
	ExpectedVersion uint64
	Events          []events.Event
	Next            EntityState
}

// DecidePersist compares every field's canonical hash with cur and emits one
// entity.persisted event carrying only the changed fields, each with its
// raised revision; an unchanged entity yields no event (dirty tracking).
// Errors: ErrInvalidCommand, ErrInvalidValue, ErrEntityExists.
func DecidePersist(cur EntityState, cmd Persist, now time.Time) (Decision, error) {
	if cmd.Entity == "" || cmd.ID == "" {
		return Decision{}, fmt.Errorf("%w: entity and id are required", ErrInvalidCommand)
	}
	if cmd.CreateOnly && cur.Exists {
		return Decision{}, fmt.Errorf("%w: %s %q", ErrEntityExists, cmd.Entity, cmd.ID)
	}
	d := Decision{Stream: events.EntityStream(cmd.Entity, cmd.ID), ExpectedVersion: cur.Version, Next: cur.cloneSized(len(cmd.Values))}
	changed, revs, err := changedFields(cur, cmd, d.Next.Fields)
	if err != nil {
		return Decision{}, err
	}
	if len(changed) == 0 {
		return d, nil
	}
	d.Next.Exists, d.Next.Version = true, cur.Version+1
	d.Events = []events.Event{events.New(d.Stream, events.EntityPersisted{Entity: cmd.Entity, ID: cmd.ID, Created: !cur.Exists,
		Fields: changed, Revisions: revs, Actor: cmd.Actor}, now)}
	return d, nil
}

// changedFields hashes cmd's values against cur, records each changed
// field's state in next and returns the changed values and their
// revisions. A create changes every field, so its values are cmd.Values
// itself: a commit of new entities copies no map of values on the single
// writer.
func changedFields(cur EntityState, cmd Persist, next map[string]FieldState) (map[string]any, map[string]uint64, error) {
	changed, revs := cmd.Values, make(map[string]uint64, len(cmd.Values))
	if cur.Exists {
		changed = make(map[string]any, len(cmd.Values))
	}
	var buf []byte // canonical bytes, reused across the fields
	for _, name := range sortedKeys(cmd.Values) {
		h, err := valueHash(cmd, name, &buf)
		if err != nil {
			return nil, nil, err
		}
		fs := cur.Fields[name]
		if cur.Exists && fs.Hash == h {
			continue
		}
		next[name], revs[name] = FieldState{Hash: h, Revision: fs.Revision + 1}, fs.Revision+1
		if cur.Exists {
			changed[name] = cmd.Values[name]
		}
	}
	return changed, revs, nil
}

// DecideRemove emits entity.removed for an existing entity. Field revisions
// are kept (a later re-create continues them); hashes are cleared.
// Errors: ErrInvalidCommand, ErrEntityNotFound.
func DecideRemove(cur EntityState, cmd Remove, now time.Time) (Decision, error) {
	if cmd.Entity == "" || cmd.ID == "" {
		return Decision{}, fmt.Errorf("%w: entity and id are required", ErrInvalidCommand)
	}
	if !cur.Exists {
		return Decision{}, fmt.Errorf("%w: %s %q", ErrEntityNotFound, cmd.Entity, cmd.ID)
	}
	next := cur.clone()
	next.Exists, next.Version = false, cur.Version+1
	for name, fs := range next.Fields {
		next.Fields[name] = FieldState{Revision: fs.Revision}
	}
	stream := events.EntityStream(cmd.Entity, cmd.ID)
	return Decision{Stream: stream, ExpectedVersion: cur.Version, Next: next,
		Events: []events.Event{events.New(stream, events.EntityRemoved{Entity: cmd.Entity, ID: cmd.ID}, now)}}, nil
}

// valueHash is the canonical hash of cmd's value of field name: the one
// the caller computed, else hashed (through *buf). Errors: ErrInvalidValue.
func valueHash(cmd Persist, name string, buf *[]byte) (string, error) {
	if h, ok := cmd.Hashes[name]; ok {
		return h, nil
	}
	h, err := events.HashReuse(buf, cmd.Values[name])
	if err != nil {
		return "", fmt.Errorf("%w: %s %q.%s: %w", ErrInvalidValue, cmd.Entity, cmd.ID, name, err)
	}
	return h, nil
}

func (s EntityState) clone() EntityState { return s.cloneSized(0) }

// cloneSized clones s with room for at least n fields.
func (s EntityState) cloneSized(n int) EntityState {
	out := EntityState{Exists: s.Exists, Version: s.Version, Fields: make(map[string]FieldState, max(n, len(s.Fields)))}
	for k, v := range s.Fields {
		out.Fields[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
