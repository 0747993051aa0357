package hikoutei

import (
	"context"
)

// BackupInfo describes a backup of a store's log: the file, the store id,
// the log head and replica head it holds, its size and SHA-256. It never
// holds a payload.
type BackupInfo struct {
	Path        string // the file written
	StoreID     string // the log's store id
	Head        uint64 // the log head in the copy
	ReplicaHead uint64 // the replica commit the copy holds up to (0: never replicated)
	Bytes       int64  // the file's size
	SHA256      string // hex SHA-256 of the file
	// Segments counts the sealed segments the copy's log vouches for,
	// copied into the folder beside the file: its name followed by
	// ".segments".
	Segments int
	// Leftovers are the temporary files of interrupted backups to the
	// same file (.NAME.tmp-<pid>-…, beside it) that the backup removed:
	// their process no longer runs.
	Leftovers []string
}

// Backup writes a consistent copy of the store's log.db to out while the
// store runs: bbolt's copy inside one read transaction of the live log,
// so the copy is the log as of one commit and commits go on meanwhile
// (one that must grow the file waits for the copy). out gets mode 0600
// and is written beside its name, synced and then linked (renamed over an
// existing file only with force). The sealed segments the copy's log
// vouches for are copied, each checked against its digest, into the
// folder out+".segments" before out appears; a store with nothing sealed
// has none. Errors: ErrBackupTarget (out is inside
// any store directory — ErrTargetInsideStore too —, is not a regular file,
// or exists without force),
// ErrStoreClosed, ErrSegmentMissing or ErrSegmentDamaged (a segment of
// the store cannot be copied), ctx's, I/O errors. `hikoutei restore` rebuilds a store
// directory from the file.
func (s *Store) Backup(ctx context.Context, out string, force bool) (BackupInfo, error) {
	info, err := s.e.Backup(ctx, out, force)
	return BackupInfo(info), err
}
