package effects

import "errors"

// Sentinel errors of the effects package (stable snake_case codes).
var (
	// ErrDisplaced: the writer lease could not be renewed before a remote
	// call, or a settlement was fenced out: another writer owns the store
	// now, so this worker stops without touching the spreadsheet (I04).
	ErrDisplaced = errors.New("writer_displaced")
	// ErrDivergence: the spreadsheet's authority names a newer epoch or
	// another store (I05): dispatching stops.
	ErrDivergence = errors.New("sync_divergence")
	// ErrConfig: the worker configuration is incomplete.
	ErrConfig = errors.New("sync_config_invalid")
	// ErrReadUndecoded: a pass handed the store a grid read it did not
	// decode (the digest the store said it knew, KnownGrids), but the
	// store's read model moved since: the poller reads again, decoding.
	// It never ends a pass.
	ErrReadUndecoded = errors.New("read_undecoded")
)
