package engine

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/projector"
)

// batchState carries the decisions of earlier units of one group commit:
// entity states and stream versions by stream. A unit decides in a child
// of the batch's state, merged back only if the whole unit is valid.
type batchState struct {
	parent   *batchState
	entities map[string]aggregates.EntityState
	versions map[string]uint64
	// logVersions (the batch's root only; nil = unknown) holds the log's
	// version, read before the group's first decision, of every entity
	// stream the group touches (0 = never persisted, so there is no state
	// to read) and of the outbox streams of their rows (rowOutboxStreams).
	logVersions map[string]uint64
	// open (shared by the states of one group) is whether a read model
	// held an open conflict, read once: it does not change while a group
	// is decided (its events are projected after every decision).
	open *openConflicts
}

// openConflicts records whether read model proj holds any open conflict.
type openConflicts struct {
	proj *projector.Projector // nil: not read yet
	some bool
}

func newBatchState(logVersions map[string]uint64) *batchState {
	return &batchState{entities: map[string]aggregates.EntityState{}, versions: map[string]uint64{}, logVersions: logVersions,
		open: &openConflicts{}}
}

// child is a unit's state on top of b.
func (b *batchState) child() *batchState {
	c := newBatchState(b.logVersions)
	c.parent, c.open = b, b.open
	return c
}

func (b *batchState) entity(key string) (aggregates.EntityState, bool) {
	for s := b; s != nil; s = s.parent {
		if st, ok := s.entities[key]; ok {
			return st, true
		}
	}
	return aggregates.EntityState{}, false
}

// version is a stream's version after what b (or a parent) appended.
func (b *batchState) version(stream string) (uint64, bool) {
	for s := b; s != nil; s = s.parent {
		if v, ok := s.versions[stream]; ok {
			return v, true
		}
	}
	return 0, false
}

// touched reports whether b (or a parent) appends to stream.
func (b *batchState) touched(stream string) bool {
	_, ok := b.version(stream)
	return ok
}

func (b *batchState) setVersion(stream string, v uint64) { b.versions[stream] = v }

// merge folds a valid unit's child state into b.
func (b *batchState) merge(c *batchState) {
	for k, v := range c.entities {
		b.entities[k] = v
	}
	for k, v := range c.versions {
		b.versions[k] = v
	}
}
