package engine

import "errors"

// Sentinel errors of the engine (stable snake_case codes). The root
// package re-exports the ones an application matches.
var (
	// ErrInvalidEntity: an entity declaration is unusable (no or several
	// primary keys, a non-string key, an unsupported field type, a bad name).
	ErrInvalidEntity = errors.New("invalid_entity_definition")
	// ErrStoreClosed: the store was used after Close.
	ErrStoreClosed = errors.New("store_closed")
	// ErrReadModelBehind: the commit is durable in the log, but applying it
	// to read.sqlite failed; the store retries before the next commit and
	// on reopen. Reads may not show the commit until then.
	ErrReadModelBehind = errors.New("read_model_behind")
	// ErrSyncStartup: sync is configured but cannot start (no provider, an
	// invalid spreadsheet id, a bad cadence); the stable code of seed 001.
	ErrSyncStartup = errors.New("sync_startup_failed")
	// ErrNotAStore: a tool was pointed at a directory that holds no store;
	// it creates nothing there.
	ErrNotAStore = errors.New("not_a_store")
	// ErrConflictNotFound: no conflict has that id.
	ErrConflictNotFound = errors.New("conflict_not_found")
	// ErrReplayGap: an event source skipped a sequence.
	ErrReplayGap = errors.New("replay_sequence_gap")
	// ErrReplayTarget: a replay target already holds a read model.
	ErrReplayTarget = errors.New("replay_target_not_empty")
)
