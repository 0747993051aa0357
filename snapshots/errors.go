package snapshots

import "errors"

// Sentinel errors of the snapshots package (stable snake_case codes).
var (
	// ErrSnapshotInvalid: a snapshot's manifest is missing or malformed, its
	// file hash does not match, or it belongs to another store. Invalid
	// snapshots are skipped, never loaded.
	ErrSnapshotInvalid = errors.New("snapshot_invalid")
	// ErrSnapshotUnvouched: no snapshot.taken event in the log carries the
	// snapshot's digest: it was changed after it was taken (even with its
	// manifest re-hashed), or the log lost the event. It is never restored.
	ErrSnapshotUnvouched = errors.New("snapshot_unvouched")
	// ErrNoSnapshot: no valid snapshot at or below the requested sequence.
	ErrNoSnapshot = errors.New("snapshot_none_valid")
)
