package hikoutei

import "github.com/hikoutei/hikoutei-go/internal/engine"

// ReplayOptions configures Replay.
type ReplayOptions = engine.ReplayOptions

// Replay builds a fresh read model at target from the log of the store in
// dir, without taking the writer lease (it opens log.db read-only, so the
// store must not be open for writing in another process). With no
// entities it uses the shapes the log declares. Auditors use it to rebuild
// a store's read model; rebuilding yields exactly the live read model
// (I23). It returns the checkpoint reached. Errors: ErrNotAStore,
// ErrStoreLocked, ErrInvalidEntity, *events.CorruptRecordError,
// *events.PayloadError; target must not hold a read model.
func Replay(dir, target string, opts ReplayOptions, entities ...EntityDef) (uint64, error) {
	if len(entities) == 0 {
		return engine.Replay(dir, target, opts, engine.Declared)
	}
	_, shapes, err := declare(entities)
	if err != nil {
		return 0, err
	}
	return engine.Replay(dir, target, opts, engine.Shapes(shapes...))
}

// EventSource yields events in ascending seq order to fn (e.g. a reader of
// the JetStream mirror).
type EventSource = engine.EventSource

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
	return engine.ReplayEvents(target, storeID, src, opts, reg)
}
