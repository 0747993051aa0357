package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// BackupInfo describes a backup of a store's log: the file, the store id,
// the log head and replica head it holds, its size and SHA-256. It never
// holds a payload.
type BackupInfo = events.BackupInfo

// Backup writes a consistent copy of the store's log.db to out while the
// store runs: bbolt's copy inside one read transaction of the live log,
// so the copy is the log as of one commit and commits go on meanwhile
// (one that must grow the file waits for the copy). out gets mode 0600
// and is written beside its name, synced and then linked (renamed over an
// existing file only with force). Errors: ErrBackupTarget (out is inside
// the store directory, a directory, or exists without force),
// ErrStoreClosed, ctx's, I/O errors. `hikoutei restore` rebuilds a store
// directory from the file.
func (s *Store) Backup(ctx context.Context, out string, force bool) (BackupInfo, error) {
	info, err := s.e.Log().Backup(ctx, out, force)
	if errors.Is(err, events.ErrLogClosed) {
		return info, fmt.Errorf("%w: %w", ErrStoreClosed, err)
	}
	return info, err
}

// Backup answers OpStoreBackup: the requester runs elsewhere, so out must
// be absolute.
func (b adminBackend) Backup(ctx context.Context, r admin.BackupRequest) (admin.BackupResponse, error) {
	if !filepath.IsAbs(r.Out) {
		return admin.BackupResponse{}, fmt.Errorf("%w: %q is not an absolute path", ErrBackupTarget, r.Out)
	}
	info, err := b.s.Backup(ctx, r.Out, r.Force)
	if err != nil {
		return admin.BackupResponse{}, err
	}
	return admin.BackupResponse{StoreID: info.StoreID, Head: info.Head, ReplicaHead: info.ReplicaHead, Bytes: info.Bytes,
		SHA256: info.SHA256}, nil
}
