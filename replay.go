package hikoutei

import (
	"context"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// ReplayOptions configures Replay.
type ReplayOptions struct {
	UpTo     uint64         // last sequence to apply (0 = the log head)
	Progress func(Progress) // called after each applied batch
	// Force lets Replay replace an existing target file. A target inside a
	// store directory is refused even then.
	Force bool
	// Segments is where the store's sealed segments live (nil: its
	// segments folder; open a URL with segstore.Open).
	Segments segstore.Store
	// Leftover is told of each temporary file an interrupted replay or
	// rebuild left, found before this one builds (nil: nobody is told).
	// Replay removes, from its target's folder, the ones whose process no
	// longer runs and keeps the others (an earlier build's name carries no
	// process id); RebuildReadModel removes the store's (it holds the
	// log's lock).
	Leftover func(ReplayLeftover)
}

// ReplayLeftover is a temporary file of an interrupted replay or rebuild
// (killed, or the machine stopped): where it is, its size, whether it
// was removed, and why (or why it was kept).
type ReplayLeftover struct {
	Path    string
	Bytes   int64
	Removed bool
	Why     string
}

func (o ReplayOptions) engine(ctx context.Context) engine.ReplayOptions {
	opts := engine.ReplayOptions{UpTo: o.UpTo, Progress: progress(o.Progress), Force: o.Force, Context: ctx, Segments: o.Segments}
	if o.Leftover != nil {
		opts.Leftover = func(l engine.ReplayLeftover) { o.Leftover(ReplayLeftover(l)) }
	}
	return opts
}

// Replay builds a fresh read model at target from the log of the store in
// dir, without taking the writer lease (it holds log.db open read-only, so
// the store cannot be opened for writing meanwhile, and fails if it is).
// With no entities it uses the shapes the log declares. Events recorded
// under an older declaration are read into those shapes as the store
// reads them (renamed fields under their new names, values converted,
// dropped fields left out: docs/evolving.md). Auditors use it to rebuild
// a store's read model; a rebuild equals the live read model. The
// file is built beside target and renamed onto it when complete; the
// temporary files of replays that were killed are removed from target's
// folder first (ReplayOptions.Leftover says which). It
// returns the checkpoint reached. Errors: ErrReplayTargetInStore (target
// is inside a store directory), ErrReplayTarget (target exists and
// opts.Force is false), ErrNotAStore, ErrStoreLocked, ErrInvalidEntity,
// *events.CorruptRecordError, *events.PayloadError; the context's
// (checked between batches of 2,048 events; target is then left as it
// was).
func Replay(ctx context.Context, dir, target string, opts ReplayOptions, entities ...EntityDef) (uint64, error) {
	ents, k, err := replayEntities(dir, entities)
	if err != nil {
		return 0, err
	}
	defer k.close()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return engine.Replay(dir, target, opts.engine(ctx), ents)
}

// RebuildReadModel replaces the read model of the store in dir (which must
// not be open) with a rebuild from its log. The previous read.sqlite is
// renamed aside, never deleted; aside is its new name ("" if there was
// none). Errors as Replay (cancelled, the read model is left as it was).
func RebuildReadModel(ctx context.Context, dir string, opts ReplayOptions, entities ...EntityDef) (checkpoint uint64, aside string, err error) {
	ents, k, err := replayEntities(dir, entities)
	if err != nil {
		return 0, "", err
	}
	defer k.close()
	if err := ctx.Err(); err != nil {
		return 0, "", err
	}
	return engine.RebuildReadModel(dir, opts.engine(ctx), ents)
}

// replayEntities is the shapes of entities, or those the log declares,
// masked with the key file of the store in dir (its erased subjects'
// personal values in clear are stored as the marker); k is that key file
// (nil: none), to close once the replay is done.
func replayEntities(dir string, entities []EntityDef) (_ engine.Entities, k *keys, err error) {
	if len(entities) == 0 {
		return engine.Declared, nil, nil
	}
	byType, shapes, err := declare(entities)
	if err != nil {
		return nil, nil, err
	}
	if k, err = replayKeys(dir, byType); err != nil {
		return nil, nil, err
	}
	return masking(engine.Shapes(shapes...), func() *keys { return k }), k, nil
}

// viewEntities is the shapes of entities, or those the log declares (a
// view's readers mask what its read model holds).
func viewEntities(entities []EntityDef) (engine.Entities, error) {
	if len(entities) == 0 {
		return engine.Declared, nil
	}
	_, shapes, err := declare(entities)
	if err != nil {
		return nil, err
	}
	return engine.Shapes(shapes...), nil
}

// EventSource yields events in ascending seq order to fn (e.g. a reader of
// the JetStream mirror).
type EventSource func(fn func(events.Event) error) error

// ReplayEvents builds a fresh read model at target from events delivered by
// src, for auditors replaying a store from its NATS mirror on another
// machine. storeID is the log's store id. Events must be dense from 1; a
// gap fails with ErrReplayGap. src is read twice: first for the entity
// shape declarations (old events are read into the shapes of entities),
// then to apply every event. It returns the checkpoint reached; a
// cancelled ctx stops it between batches with the context's error.
func ReplayEvents(ctx context.Context, target, storeID string, src EventSource, opts ReplayOptions, entities ...EntityDef) (uint64, error) {
	_, shapes, err := declare(entities)
	if err != nil {
		return 0, err
	}
	reg, err := engine.NewRegistry(shapes...)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return engine.ReplayEvents(target, storeID, engine.EventSource(src), opts.engine(ctx), reg)
}
