package hikoutei

import (
	"context"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// Resolution is how a person resolves a conflict (Store.ResolveConflict).
type Resolution string

// Resolutions.
const (
	// KeepSystem keeps the system's value (the acknowledge_system command):
	// the person's cell is rewritten to the canonical value.
	KeepSystem Resolution = "keep_system"
	// UseSheet uses the sheet's value (the accept_user command): the
	// person's value becomes a new committed revision of the field.
	UseSheet Resolution = "use_sheet"
)

// Actor says who made a change or resolved a conflict.
type Actor = events.Actor

// Actors.
const (
	ActorApplication Actor = "application" // the application (the default)
	ActorCLI         Actor = "cli"         // a person, through the hikoutei command
	ActorSheet       Actor = "sheet"       // a person, through the spreadsheet
	ActorAdopt       Actor = "adopt"       // a row of a tab people kept, imported by Adopt
)

// ResolveOption tunes Store.ResolveConflict.
type ResolveOption func(*resolveOptions)

type resolveOptions struct {
	fence     *Acknowledge
	commandID string
	actor     Actor
}

// WithFence resolves only while the field's canonical revision, the
// candidate hash and the candidate epoch are still those given (what the
// caller saw: Conflict.CanonicalRevision, CandidateHash, CandidateEpoch).
// Without it ResolveConflict reads them from the read model just before.
func WithFence(canonicalRevision uint64, candidateHash string, candidateEpoch int64) ResolveOption {
	return func(o *resolveOptions) {
		o.fence = &Acknowledge{CanonicalRevision: canonicalRevision, CandidateHash: candidateHash, CandidateEpoch: candidateEpoch}
	}
}

// WithCommandID makes the command idempotent: a repeated id with the same
// conflict, resolution and fence returns the first outcome and changes
// nothing; with anything else it fails with ErrCommandIDReused.
func WithCommandID(id string) ResolveOption { return func(o *resolveOptions) { o.commandID = id } }

// WithActor records who resolves (ActorApplication unless given).
func WithActor(a Actor) ResolveOption { return func(o *resolveOptions) { o.actor = a } }

// ResolveConflict resolves conflict id as a person decided: KeepSystem
// (acknowledge_system) or UseSheet (accept_user). Both are fenced by the
// field's canonical revision, the candidate hash and the candidate epoch
// (WithFence, else read from the read model) and run in ONE commit that
// records the command (requested, then applied, stale or rejected). When
// the fence holds it resolves the conflict, clears the candidate (epoch
// + 1) and queues the Input row's reconcile guarded by the candidate-time
// row hash, so a person's later edit of the row makes it
// blocked_candidate, never an overwrite. UseSheet also commits the
// person's value as a new revision of the field: an ordinary
// entity.persisted (with the actor) that the System row shows through the
// ordinary effects. It needs no network; the sheet is written when sync
// runs. Errors: ErrConflictNotFound, ErrConflictNotOpen, ErrConflictStale
// (the fence moved: the person typed again, or an application commit
// raised the field's revision), ErrConflictBlocked, ErrCommandIDReused,
// ErrInvalidResolution, fencing and store errors. A stale or rejected
// command still returns its outcome in the result.
func (s *Store) ResolveConflict(ctx context.Context, id string, r Resolution, opts ...ResolveOption) (AckResult, error) {
	o := resolveOptions{actor: ActorApplication}
	for _, opt := range opts {
		opt(&o)
	}
	how, err := engine.ParseResolution(string(r))
	if err != nil {
		return AckResult{}, err
	}
	cmd, err := s.e.ConflictFence(ctx, id, (*aggregates.Acknowledge)(o.fence))
	if err != nil {
		return AckResult{}, err
	}
	cmd.CommandID, cmd.Actor = o.commandID, o.actor
	res, err := s.e.Resolve(ctx, how, cmd)
	return AckResult(res), err
}

// DismissQuarantine drops a person's quarantined edit (text in a number
// column, a formula, …): the Input row is rewritten to canonical state,
// guarded by the row hash the quarantine recorded, so a row the person
// changed again since is never overwritten (its new content is polled as
// usual). The record clears when a poll sees the row clean. It needs no
// network; the sheet is written when sync runs. Errors:
// ErrQuarantineNotFound, ErrQuarantineNotDismissable, fencing and store
// errors.
func (s *Store) DismissQuarantine(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.e.DismissQuarantine(id)
}
