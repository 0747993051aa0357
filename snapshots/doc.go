// Package snapshots stores the read model and aggregate state at a log
// sequence, loads the newest valid snapshot and replays the tail.
package snapshots
