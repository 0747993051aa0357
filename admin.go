package hikoutei

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// AdminSocketName is the administrative channel's socket inside a store
// directory (docs/cli.md "Administrative channel").
const AdminSocketName = "admin.sock"

// adminCodes are the errors whose codes travel back to the CLI over the
// administrative channel: every one an error matches travels (a
// keep-system on a resolved conflict is conflict_not_open and also the
// legacy acknowledge_rejected), so the CLI's error matches the same
// sentinels remotely as in process.
var adminCodes = []error{ErrConflictNotFound, ErrConflictNotOpen, ErrConflictStale, ErrConflictBlocked, ErrAckStale, ErrAckRejected,
	ErrCommandIDReused, ErrInvalidResolution, ErrQuarantineNotFound, ErrQuarantineNotDismissable, ErrStoreClosed, ErrStaleWriterFence,
	ErrLogWrite, ErrLogCommitUncertain, ErrReadModelBehind, ErrReadModelUnavailable, ErrBackupTarget, engine.ErrSyncNotConfigured}

// startAdmin serves the store's administrative channel (the store holds
// the writer lease).
func (s *Store) startAdmin() error {
	b := engine.AdminBackend{E: s.e}
	mux := admin.NewMux(b)
	mux.Handle(admin.OpStoreBackup, admin.Typed(b.Backup))
	mux.Handle(admin.OpSyncHealth, admin.Typed(b.SyncHealth))
	mux.Handle(admin.OpSyncPoll, admin.Typed(b.SyncPoll))
	srv, err := admin.Listen(s.Dir(), admin.Config{Mux: mux, Codes: adminCodes})
	if err != nil {
		return fmt.Errorf("administrative channel: %w", err)
	}
	s.adm = srv
	return nil
}

// closeAdmin stops the channel (requests being run finish first).
func (s *Store) closeAdmin() error {
	if s.adm == nil {
		return nil
	}
	return s.adm.Close()
}
