package hikoutei

import (
	"context"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// Conflict is one conflict between a person's edit of a user-owned field
// and the system's change of the same field: the values, the candidate
// fence (CanonicalRevision, CandidateHash, CandidateEpoch) that
// AcknowledgeSystem needs, and the candidate-time visible evidence. An
// empty VisibleHash marks a legacy conflict, which no command resolves.
type Conflict struct {
	// ID is the conflict id (what ResolveConflict and AcknowledgeSystem take).
	ID string
	// Entity, EntityID and Field name the record (entity name and primary
	// key) and the field both sides changed.
	Entity, EntityID, Field string
	// Tab, Anchor and Binding are the Input tab, the row's anchor (its key
	// in the sheet) and the row's binding id.
	Tab, Anchor, Binding string
	// Status is ConflictOpen or ConflictResolved.
	Status ConflictStatus
	// CanonicalRevision, CandidateHash and CandidateEpoch are the candidate
	// fence, copied into Acknowledge.
	CanonicalRevision uint64
	CandidateHash     string
	CandidateEpoch    int64
	// VisibleRevision and VisibleHash are the row's visible revision and
	// hash when the person's edit was seen.
	VisibleRevision int64
	VisibleHash     string
	// SystemValue and SheetValue are the two values, as rendered for the audit.
	SystemValue, SheetValue string
	// ReconcileEffect and ReconcileState are the row reconcile an
	// acknowledgement queued, and its outbox state ("" before one).
	ReconcileEffect, ReconcileState string
	// OpenedSeq and ResolvedSeq are the log sequences of the events that
	// opened and resolved it (0 while open).
	OpenedSeq, ResolvedSeq uint64
	// OpenedAt is when it opened.
	OpenedAt time.Time
	// Resolution is how it ended ("system_wins", "system_acknowledged",
	// "use_sheet"; "" while open).
	Resolution events.Resolution
}

// ConflictStatus is where a conflict stands: ConflictOpen or ConflictResolved.
type ConflictStatus = aggregates.ConflictStatus

// Conflict statuses.
const (
	ConflictOpen     ConflictStatus = "open"
	ConflictResolved ConflictStatus = "resolved"
)

// ConflictEvent is delivered to SyncOptions.OnConflict after the commit
// that opened or resolved a conflict. Type is "opened" or "resolved";
// Resolution is "system_wins", "system_acknowledged" (keep system) or
// "use_sheet" when resolved, and Actor who resolved it ("application",
// "cli", "sheet"; "" for resolutions recorded before actors). The
// JSON tags are for applications that forward it; the NATS notifications
// on conflict.opened / conflict.resolved have their own documented schema
// (docs/nats.md).
type ConflictEvent struct {
	Type        string `json:"type"`
	ConflictID  string `json:"conflict_id"`
	Entity      string `json:"entity"`
	ID          string `json:"id"`
	Field       string `json:"field"`
	SystemValue string `json:"system_value"`
	SheetValue  string `json:"sheet_value"`
	Resolution  string `json:"resolution,omitempty"`
	Actor       string `json:"actor,omitempty"`
	Seq         uint64 `json:"seq"` // log sequence of the event
	// CanonicalRevision and CandidateEpoch are the conflict's fence at
	// detection (what AcknowledgeSystem needs, with the candidate hash).
	CanonicalRevision uint64 `json:"canonical_revision"`
	CandidateEpoch    int64  `json:"candidate_epoch"`
}

func conflictEvent(n engine.ConflictNotice) ConflictEvent {
	typ := "opened"
	if n.Type == events.TypeConflictResolved {
		typ = "resolved"
	}
	return ConflictEvent{Type: typ, ConflictID: n.ConflictID, Entity: n.Entity, ID: n.ID, Field: n.Field, SystemValue: n.SystemValue,
		SheetValue: n.SheetValue, Resolution: string(n.Resolution), Actor: string(n.Actor), Seq: n.Seq, CanonicalRevision: n.CanonicalRevision,
		CandidateEpoch: n.CandidateEpoch}
}

// Conflicts lists the conflicts in status (ConflictOpen, ConflictResolved,
// or "" for all), oldest first. Errors: ErrStoreClosed.
func (s *Store) Conflicts(ctx context.Context, status ConflictStatus) ([]Conflict, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cs, err := s.e.Conflicts(status)
	out := make([]Conflict, len(cs))
	for i, c := range cs {
		out[i] = Conflict(c)
	}
	return out, err
}

// Acknowledge is the acknowledge_system command: keep the system's value
// of a conflicted field. The fence is what the caller saw: the field's
// canonical revision, the candidate hash and the candidate epoch (the
// Conflict's CanonicalRevision, CandidateHash, CandidateEpoch). CommandID,
// when set, makes the command idempotent (see WithCommandID); Actor is who
// asked ("" records none).
type Acknowledge struct {
	ConflictID string
	// CanonicalRevision, CandidateHash and CandidateEpoch are the fence,
	// copied from the Conflict.
	CanonicalRevision uint64
	CandidateHash     string
	CandidateEpoch    int64
	CommandID         string
	Actor             Actor
}

// AckOutcome is how acknowledge_system ended: AckApplied, AckStale or AckRejected.
type AckOutcome = aggregates.AckOutcome

// Acknowledge outcomes.
const (
	AckApplied  AckOutcome = "applied"
	AckStale    AckOutcome = "stale"
	AckRejected AckOutcome = "rejected"
)

// AckResult reports a resolution command (AcknowledgeSystem,
// ResolveConflict).
type AckResult struct {
	Outcome         AckOutcome
	ReconcileEffect string // the id of the row reconcile it queued (applied)
}

// AcknowledgeSystem runs acknowledge_system: in ONE fenced commit it
// records the command (requested + applied/stale/rejected) and, when the
// fence holds, resolves the conflict, clears the candidate (epoch + 1) and
// queues the row reconcile: an update of the Input cell to the canonical
// value guarded by the candidate-time full-row visible hash, so a person's
// later edit makes it blocked_candidate instead of being overwritten. It
// needs no network; the reconcile is dispatched when sync runs. Errors:
// ErrConflictNotFound, ErrAckStale, ErrAckRejected (legacy conflicts stay
// unresolved), fencing and store errors.
func (s *Store) AcknowledgeSystem(ctx context.Context, cmd Acknowledge) (AckResult, error) {
	res, err := s.e.Acknowledge(ctx, aggregates.Acknowledge(cmd))
	return AckResult(res), err
}
