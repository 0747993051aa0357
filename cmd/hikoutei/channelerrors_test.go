package main

import (
	"context"
	"errors"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// resolutionSentinels are the public errors a resolution, an
// acknowledgement or a dismissal can match.
var resolutionSentinels = []error{hikoutei.ErrConflictNotFound, hikoutei.ErrConflictNotOpen, hikoutei.ErrConflictStale,
	hikoutei.ErrConflictBlocked, hikoutei.ErrAckStale, hikoutei.ErrAckRejected, hikoutei.ErrCommandIDReused,
	hikoutei.ErrInvalidResolution, hikoutei.ErrQuarantineNotFound, hikoutei.ErrQuarantineNotDismissable,
	hikoutei.ErrConflictOpen, hikoutei.ErrStoreClosed, hikoutei.ErrNotFound, admin.ErrHandlerFailed}

// sameSentinels fails unless remote and local are errors with the same
// one-line text that match exactly the same sentinels.
func sameSentinels(t *testing.T, what string, remote, local error) {
	t.Helper()
	if remote == nil || local == nil {
		t.Fatalf("%s: remote %v, in process %v: want both to fail", what, remote, local)
	}
	for _, s := range resolutionSentinels {
		if errors.Is(remote, s) != errors.Is(local, s) {
			t.Errorf("%s: errors.Is(%v) is %v through the channel, %v in process (%q / %q)", what, s,
				errors.Is(remote, s), errors.Is(local, s), remote, local)
		}
	}
	if remote.Error() != local.Error() {
		t.Errorf("%s: message %q through the channel, %q in process", what, remote, local)
	}
}

// The CLI's conflicts ack, conflicts resolve and quarantine dismiss, sent
// over the administrative channel of a store open in this process, fail
// with errors that match the same sentinels (errors.Is, each) and read the
// same as the store's own errors in process: a keep-system on a resolved
// conflict is conflict_not_open and also acknowledge_rejected, a stale
// acknowledgement conflict_stale and also acknowledge_stale.
func TestChannelErrorsMatchTheSameSentinelsAsInProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	conflictID, _ := conflictAndQuarantine(t, dir, sheet)
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1}, hikoutei.Entity[stock]("Stock"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	open, err := s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 {
		t.Fatalf("open conflicts %+v %v", open, err)
	}
	c := open[0]
	ack := hikoutei.Acknowledge{ConflictID: conflictID, CanonicalRevision: c.CanonicalRevision, CandidateHash: c.CandidateHash,
		CandidateEpoch: c.CandidateEpoch + 1, Actor: hikoutei.ActorCLI}
	ackVia := func(a hikoutei.Acknowledge) error {
		req := admin.AckRequest{ConflictID: a.ConflictID, CanonicalRevision: a.CanonicalRevision, CandidateHash: a.CandidateHash, CandidateEpoch: a.CandidateEpoch}
		return ackAnywhere(ctx, dir, a, req, &admin.AckResponse{})
	}
	ackHere := func(a hikoutei.Acknowledge) error { _, err := s.AcknowledgeSystem(ctx, a); return err }
	sameSentinels(t, "stale ack", ackVia(ack), ackHere(ack))

	if _, err := s.ResolveConflict(ctx, conflictID, hikoutei.KeepSystem, hikoutei.WithActor(hikoutei.ActorCLI)); err != nil {
		t.Fatal(err)
	}
	ack.CandidateEpoch = c.CandidateEpoch
	sameSentinels(t, "ack of a resolved conflict", ackVia(ack), ackHere(ack))
	for _, r := range []hikoutei.Resolution{hikoutei.KeepSystem, hikoutei.UseSheet, "maybe"} {
		for _, id := range []string{conflictID, "nope"} {
			via := resolveAnywhere(ctx, dir, admin.ResolveRequest{ConflictID: id, Resolution: string(r)}, &admin.AckResponse{})
			_, here := s.ResolveConflict(ctx, id, r, hikoutei.WithActor(hikoutei.ActorCLI))
			sameSentinels(t, "resolve "+string(r)+" "+id, via, here)
		}
	}
	via := dismissAnywhere(ctx, dir, admin.DismissRequest{QuarantineID: "nope"}, &admin.DismissResponse{})
	sameSentinels(t, "dismiss of an unknown record", via, s.DismissQuarantine(ctx, "nope"))
	if !errors.Is(resolveAnywhere(ctx, dir, admin.ResolveRequest{ConflictID: conflictID, Resolution: string(hikoutei.KeepSystem)},
		&admin.AckResponse{}), hikoutei.ErrConflictNotOpen) {
		t.Fatal("keep-system on a resolved conflict through the channel does not match ErrConflictNotOpen")
	}
}
