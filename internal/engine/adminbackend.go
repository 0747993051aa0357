package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// AdminBackend serves the store's administrative channel (admin.Backend
// and the store.backup op): each request becomes the engine command the
// API runs, with the CLI as the actor.
type AdminBackend struct{ E *Engine }

// Status answers admin.OpStatus.
func (b AdminBackend) Status(ctx context.Context) (admin.StatusResponse, error) {
	head, err := b.E.Log().Head()
	if err != nil {
		return admin.StatusResponse{}, err
	}
	open, err := b.E.Conflicts(aggregates.ConflictOpen)
	if err != nil {
		return admin.StatusResponse{}, err
	}
	st := admin.StatusResponse{Protocol: admin.Version, PID: os.Getpid(), Operation: b.E.Lease().Operation,
		LogHead: head, OpenConflicts: len(open)}
	if local := b.E.Health().Local; local != nil {
		st.Local, st.LocalCode = local.Error(), errorCode(local)
	}
	retentionStatus(b.E, &st)
	segmentsStatus(b.E.Log(), &st)
	return st, nil
}

// retentionStatus sets st's retention policy state.
func retentionStatus(e *Engine, st *admin.StatusResponse) {
	r := e.RetentionStatus()
	st.Retention, st.RetentionDetail = string(r.State), r.Reason
	if r.Err != nil {
		st.RetentionDetail, st.RetentionCode = r.Err.Error(), errorCode(r.Err)
	}
}

// segmentsStatus sets where st's sealed segments live and why the last
// read or write of one failed.
func segmentsStatus(l *events.Log, st *admin.StatusResponse) {
	loc := l.SegmentStore().Location()
	st.SegmentsScheme, st.SegmentsAt = loc.Scheme, loc.String()
	if err := l.SegmentStoreErr(); err != nil {
		st.Segments, st.SegmentsCode = err.Error(), errorCode(err)
	}
}

// errorCode is the stable code of err: the innermost error of its chain
// (the first of joined ones) whose text is a snake_case code, else
// "error" (as the root package's ErrorCode, without its Sheets codes).
func errorCode(err error) string {
	code := "error"
	for e := err; e != nil; {
		if t := e.Error(); t != "" && strings.Trim(t, "abcdefghijklmnopqrstuvwxyz0123456789_") == "" && strings.Contains(t, "_") {
			code = t
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			if errs := j.Unwrap(); len(errs) > 0 {
				e = errs[0]
				continue
			}
			break
		}
		e = errors.Unwrap(e)
	}
	return code
}

// AcknowledgeSystem answers admin.OpConflictAck.
func (b AdminBackend) AcknowledgeSystem(ctx context.Context, r admin.AckRequest) (admin.AckResponse, error) {
	res, err := b.E.Acknowledge(ctx, aggregates.Acknowledge{ConflictID: r.ConflictID, CanonicalRevision: r.CanonicalRevision,
		CandidateHash: r.CandidateHash, CandidateEpoch: r.CandidateEpoch, Actor: events.ActorCLI})
	return admin.AckResponse{Outcome: string(res.Outcome), ReconcileEffect: res.ReconcileEffect}, err
}

// ResolveConflict answers admin.OpConflictResolve.
func (b AdminBackend) ResolveConflict(ctx context.Context, r admin.ResolveRequest) (admin.AckResponse, error) {
	how, err := ParseResolution(r.Resolution)
	if err != nil {
		return admin.AckResponse{}, err
	}
	var given *aggregates.Acknowledge
	if f := r.Fence; f != nil {
		given = &aggregates.Acknowledge{CanonicalRevision: f.CanonicalRevision, CandidateHash: f.CandidateHash, CandidateEpoch: f.CandidateEpoch}
	}
	cmd, err := b.E.ConflictFence(ctx, r.ConflictID, given)
	if err != nil {
		return admin.AckResponse{}, err
	}
	cmd.CommandID, cmd.Actor = r.CommandID, events.ActorCLI
	res, err := b.E.Resolve(ctx, how, cmd)
	return admin.AckResponse{Outcome: string(res.Outcome), ReconcileEffect: res.ReconcileEffect}, err
}

// DismissQuarantine answers admin.OpQuarantineDismiss.
func (b AdminBackend) DismissQuarantine(ctx context.Context, r admin.DismissRequest) (admin.DismissResponse, error) {
	if err := ctx.Err(); err != nil {
		return admin.DismissResponse{}, err
	}
	err := b.E.DismissQuarantine(r.QuarantineID)
	return admin.DismissResponse{Queued: err == nil}, err
}

// Backup answers admin.OpStoreBackup: the requester runs elsewhere, so
// out must be absolute.
func (b AdminBackend) Backup(ctx context.Context, r admin.BackupRequest) (admin.BackupResponse, error) {
	if !filepath.IsAbs(r.Out) {
		return admin.BackupResponse{}, fmt.Errorf("%w: %q is not an absolute path", events.ErrBackupTarget, r.Out)
	}
	info, err := b.E.Backup(ctx, r.Out, r.Force)
	if err != nil {
		return admin.BackupResponse{}, err
	}
	return admin.BackupResponse{StoreID: info.StoreID, Head: info.Head, ReplicaHead: info.ReplicaHead, Bytes: info.Bytes,
		SHA256: info.SHA256, Segments: info.Segments}, nil
}

// Backup writes a consistent copy of the live log to out (events.Log.Backup);
// a closed store is ErrStoreClosed.
func (e *Engine) Backup(ctx context.Context, out string, force bool) (events.BackupInfo, error) {
	info, err := e.Log().Backup(ctx, out, force)
	for _, l := range info.Leftovers {
		e.log.Info("removed a file an interrupted backup left", "file", l)
	}
	if errors.Is(err, events.ErrLogClosed) {
		return info, fmt.Errorf("%w: %w", ErrStoreClosed, err)
	}
	return info, err
}

// ParseResolution reads a resolution as the API and the channel name it
// ("keep_system", "use_sheet"). Errors: ErrInvalidResolution.
func ParseResolution(r string) (events.Resolution, error) {
	switch r {
	case "keep_system":
		return events.ResolutionAcknowledged, nil
	case "use_sheet":
		return events.ResolutionUseSheet, nil
	}
	return "", fmt.Errorf("%w: %q (want %q or %q)", ErrInvalidResolution, r, "keep_system", "use_sheet")
}

// ConflictFence is the command for conflict id: the given fence, else the one the
// read model shows now.
func (e *Engine) ConflictFence(ctx context.Context, id string, given *aggregates.Acknowledge) (aggregates.Acknowledge, error) {
	if err := ctx.Err(); err != nil {
		return aggregates.Acknowledge{}, err
	}
	if given != nil {
		cmd := *given
		cmd.ConflictID = id
		return cmd, nil
	}
	cf, err := e.Conflict(id)
	if err != nil {
		return aggregates.Acknowledge{}, err
	}
	return aggregates.Acknowledge{ConflictID: id, CanonicalRevision: cf.CanonicalRevision, CandidateHash: cf.CandidateHash,
		CandidateEpoch: cf.CandidateEpoch}, nil
}
