package snapshots

import "errors"

// Sentinel errors of the snapshots package (stable snake_case codes).
var (
	// ErrSnapshotInvalid: a snapshot's manifest is missing or malformed, its
	// file hash does not match, or it belongs to another store. Invalid
	// snapshots are skipped, never loaded.
	ErrSnapshotInvalid = errors.New("snapshot_invalid")
	// ErrNoSnapshot: no valid snapshot at or below the requested sequence.
	ErrNoSnapshot = errors.New("snapshot_none_valid")
)
