package hikoutei

import (
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// ReplayOptions configures Replay.
type ReplayOptions struct {
	UpTo     uint64         // last sequence to apply (0 = the log head)
	Progress func(Progress) // called after each applied batch
}

func (o ReplayOptions) engine() engine.ReplayOptions {
	return engine.ReplayOptions{UpTo: o.UpTo, Progress: progress(o.Progress)}
}

// Replay builds a fresh read model at target from the log of the store in
// dir, without taking the writer lease (it opens log.db read-only, so the
// store must not be open for writing in another process). With no
// entities it uses the shapes the log declares. Auditors use it to rebuild
// a store's read model; a rebuild equals the live read model. It returns
// the checkpoint reached. Errors: ErrNotAStore, ErrStoreLocked,
// ErrInvalidEntity, *events.CorruptRecordError, *events.PayloadError,
// ErrReplayTarget (target already holds a read model).
func Replay(dir, target string, opts ReplayOptions, entities ...EntityDef) (uint64, error) {
	if len(entities) == 0 {
		return engine.Replay(dir, target, opts.engine(), engine.Declared)
	}
	_, shapes, err := declare(entities)
	if err != nil {
		return 0, err
	}
	return engine.Replay(dir, target, opts.engine(), engine.Shapes(shapes...))
}

// EventSource yields events in ascending seq order to fn (e.g. a reader of
// the JetStream mirror).
type EventSource func(fn func(events.Event) error) error

// ReplayEvents builds a fresh read model at target from events delivered by
// src, for auditors replaying a store from its NATS mirror on another
// machine. storeID is the log's store id. Events must be dense from 1; a
// gap fails with ErrReplayGap. It returns the checkpoint reached.
func ReplayEvents(target, storeID string, src EventSource, opts ReplayOptions, entities ...EntityDef) (uint64, error) {
	_, shapes, err := declare(entities)
	if err != nil {
		return 0, err
	}
	reg, err := engine.NewRegistry(shapes...)
	if err != nil {
		return 0, err
	}
	return engine.ReplayEvents(target, storeID, engine.EventSource(src), opts.engine(), reg)
}
