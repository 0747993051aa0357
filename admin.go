package hikoutei

import (
	"context"
	"fmt"
	"os"

	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// AdminSocketName is the administrative channel's socket inside a store
// directory (README "Administrative channel").
const AdminSocketName = admin.SocketName

// adminCodes are the errors whose codes travel back to the CLI over the
// administrative channel: every one an error matches travels (a
// keep-system on a resolved conflict is conflict_not_open and also the
// legacy acknowledge_rejected), so the CLI's error matches the same
// sentinels remotely as in process.
var adminCodes = []error{ErrConflictNotFound, ErrConflictNotOpen, ErrConflictStale, ErrConflictBlocked, ErrAckStale, ErrAckRejected,
	ErrCommandIDReused, ErrInvalidResolution, ErrQuarantineNotFound, ErrQuarantineNotDismissable, ErrStoreClosed, ErrStaleWriterFence,
	ErrLogWrite, ErrLogCommitUncertain, ErrReadModelBehind, ErrReadModelUnavailable, ErrBackupTarget}

// startAdmin serves the store's administrative channel (the store holds
// the writer lease).
func (s *Store) startAdmin() error {
	mux := admin.NewMux(adminBackend{s})
	mux.Handle(admin.OpStoreBackup, admin.Typed(adminBackend{s}.Backup))
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

// adminBackend is the store as the channel's admin.Backend.
type adminBackend struct{ s *Store }

func (b adminBackend) Status(ctx context.Context) (admin.StatusResponse, error) {
	head, err := b.s.e.Log().Head()
	if err != nil {
		return admin.StatusResponse{}, err
	}
	open, err := b.s.Conflicts(ctx, ConflictOpen)
	if err != nil {
		return admin.StatusResponse{}, err
	}
	return admin.StatusResponse{Protocol: admin.Version, PID: os.Getpid(), Operation: b.s.e.Lease().Operation,
		LogHead: head, OpenConflicts: len(open)}, nil
}

func (b adminBackend) AcknowledgeSystem(ctx context.Context, r admin.AckRequest) (admin.AckResponse, error) {
	res, err := b.s.AcknowledgeSystem(ctx, Acknowledge{ConflictID: r.ConflictID, CanonicalRevision: r.CanonicalRevision,
		CandidateHash: r.CandidateHash, CandidateEpoch: r.CandidateEpoch, Actor: ActorCLI})
	return admin.AckResponse{Outcome: string(res.Outcome), ReconcileEffect: res.ReconcileEffect}, err
}

func (b adminBackend) ResolveConflict(ctx context.Context, r admin.ResolveRequest) (admin.AckResponse, error) {
	res, err := b.s.ResolveConflict(ctx, r.ConflictID, Resolution(r.Resolution), resolveOptionsOf(r)...)
	return admin.AckResponse{Outcome: string(res.Outcome), ReconcileEffect: res.ReconcileEffect}, err
}

// resolveOptionsOf are the options a CLI resolution request carries: the
// actor is always the CLI.
func resolveOptionsOf(r admin.ResolveRequest) []ResolveOption {
	opts := []ResolveOption{WithActor(ActorCLI)}
	if r.CommandID != "" {
		opts = append(opts, WithCommandID(r.CommandID))
	}
	if f := r.Fence; f != nil {
		opts = append(opts, WithFence(f.CanonicalRevision, f.CandidateHash, f.CandidateEpoch))
	}
	return opts
}

func (b adminBackend) DismissQuarantine(ctx context.Context, r admin.DismissRequest) (admin.DismissResponse, error) {
	err := b.s.DismissQuarantine(ctx, r.QuarantineID)
	return admin.DismissResponse{Queued: err == nil}, err
}
