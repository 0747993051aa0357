package aggregates

import (
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/hikoutei/hikoutei-go/events"
)

// Inbound event types (ARCHITECTURE.md "Event envelope"). Observation,
// quarantine and candidate events of one Input tab go to the tab's inbound
// stream ("inbound/<tab>"); conflict and acknowledge_system events go to
// the conflict's stream ("conflict/<id>"). Every payload is canonical.
const (
	// observation.accepted {tab, anchor, binding, entity, id, fields{name:
	// value}, row_hash, visible_revision}: a person's edit of user-owned
	// fields became canonical; entity.persisted is in the same commit.
	TypeObservationAccepted = "observation.accepted"
	// observation.rejected {tab, anchor, reason, detail, quarantine_id}:
	// evidence that is not data (a deleted row, a suspected mass deletion,
	// a row without a known anchor).
	TypeObservationRejected = "observation.rejected"
	// row.quarantined {tab, anchor, sheet_row, row_hash, reason, column,
	// quarantine_id}: a malformed or ambiguous row, never written into an
	// entity table (C01, C02, C03, C11, I16).
	TypeRowQuarantined = "row.quarantined"
	// row.quarantine_cleared {tab, quarantine_id}: the evidence no longer
	// shows in the tab.
	TypeRowQuarantineCleared = "row.quarantine_cleared"
	// candidate.detected {tab, anchor, binding, entity, id, field,
	// candidate_hash, candidate_value, epoch, visible_revision, visible_hash,
	// canonical_revision, conflict_id}: value A against canonical B (I11).
	TypeCandidateDetected = "candidate.detected"
	// candidate.cleared {binding, field, epoch, reason}: epoch is the NEW
	// candidate epoch (old + 1: no ABA, I13).
	TypeCandidateCleared = "candidate.cleared"
	// conflict.opened {conflict_id, entity, id, field, tab, anchor, binding,
	// canonical_revision, candidate_hash, candidate_epoch, visible_revision,
	// visible_hash, system_value, sheet_value}. visible_hash "" marks a
	// legacy conflict without visible evidence (I14).
	TypeConflictOpened = "conflict.opened"
	// conflict.resolved {conflict_id, resolution, canonical_revision}.
	TypeConflictResolved = "conflict.resolved"
	// acknowledge_system command lifecycle (I13), on the conflict stream:
	// {conflict_id, canonical_revision, candidate_hash, candidate_epoch,
	// reason (stale/rejected), reconcile_effect (applied)}.
	TypeAckRequested = "command.acknowledge_system.requested"
	TypeAckApplied   = "command.acknowledge_system.applied"
	TypeAckStale     = "command.acknowledge_system.stale"
	TypeAckRejected  = "command.acknowledge_system.rejected"
)

// Conflict resolutions.
const (
	ResolutionSystemWins   = "system_wins"         // I12: a later local commit raised the field's revision
	ResolutionAcknowledged = "system_acknowledged" // I13: acknowledge_system applied
)

// Inbound decision errors (stable snake_case codes).
var (
	// ErrConflictOpen: an entity with an unresolved conflict cannot be
	// removed (I15); nothing of the unit commits.
	ErrConflictOpen = errors.New("entity_has_open_conflict")
	// ErrAckStale: acknowledge_system named a canonical revision, candidate
	// hash or epoch that is no longer current (I13).
	ErrAckStale = errors.New("acknowledge_stale")
	// ErrAckRejected: acknowledge_system targets a conflict that is not
	// open, or a legacy conflict without visible evidence (I14).
	ErrAckRejected = errors.New("acknowledge_rejected")
)

// InboundStream is the stream of one Input tab's observations.
func InboundStream(tab string) string { return "inbound/" + tab }

// ConflictStream is the stream of one conflict and its commands.
func ConflictStream(id string) string { return "conflict/" + id }

// ConflictID is deterministic: one conflict per (row binding, field,
// candidate epoch), so a replay or a repeated poll never opens two.
func ConflictID(binding, field string, epoch int64) string {
	return fmt.Sprintf("cf%016x", xxhash.Sum64String(fmt.Sprintf("%s\x00%s\x00%d", binding, field, epoch)))
}

// QuarantineID identifies one piece of evidence: the same tab, anchor, row
// hash and reason always give the same id (idempotent polls).
func QuarantineID(tab, anchor, rowHash, reason string) string {
	return fmt.Sprintf("q%016x", xxhash.Sum64String(tab+"\x00"+anchor+"\x00"+rowHash+"\x00"+reason))
}

// Verdict classifies one user-owned cell of a row (see ClassifyField).
type Verdict uint8

// Verdicts.
const (
	// Unchanged: the cell shows canonical state.
	Unchanged Verdict = iota
	// Edit: the sheet showed canonical state and a person changed it: accept.
	Edit
	// Stale: the cell still shows what the system last wrote and canonical
	// moved on: the pending (or to be re-queued) write will fix it.
	Stale
	// Conflict: both sides changed the field since the sheet last showed it (I11).
	Conflict
)

// ClassifyField compares hashes of one field: observed (the cell now, A),
// shown (what the sheet last showed: the system's last applied write or
// the last accepted observation, S) and canonical (B). shownKnown is false
// when no write of this field was ever confirmed; then any difference is a
// conflict (no guessed baseline, I14). Blank and empty text hash equal
// (the caller normalises). C04: a blank cell is an Edit only if S was
// non-empty — implied, since S == B ≠ A.
func ClassifyField(observed, shown, canonical string, shownKnown bool) Verdict {
	switch {
	case observed == canonical:
		return Unchanged
	case !shownKnown:
		return Conflict
	case shown == canonical:
		return Edit
	case observed == shown:
		return Stale
	}
	return Conflict
}

// ConflictState is the decision-relevant state of one conflict and its
// field's active candidate.
type ConflictState struct {
	ID                string
	Open              bool
	Field             string
	CanonicalRevision uint64 // the field's canonical revision when the conflict opened
	// The field's active candidate (hk_sheet_field_state).
	CandidateHash  string // "" when no active candidate
	CandidateEpoch int64
	// Candidate-time full-row visible evidence; "" = legacy conflict (I14).
	VisibleHash     string
	VisibleRevision int64
	Version         uint64 // the conflict stream's version
}

// Acknowledge is the acknowledge_system command: keep the system's value
// for the conflicted field, fenced by what the caller saw (I13).
type Acknowledge struct {
	ConflictID        string
	CanonicalRevision uint64
	CandidateHash     string
	CandidateEpoch    int64
}

// DecideAcknowledge fences an acknowledge_system command against the
// conflict c and the field's current canonical revision. It always returns
// the requested event followed by applied, stale or rejected; err is
// ErrAckStale or ErrAckRejected for the latter two (the events are still
// meant to be appended as the command's audit trail). On applied, the
// caller adds conflict.resolved, candidate.cleared and the row reconcile
// effect in the same commit.
func DecideAcknowledge(c ConflictState, canonicalRev uint64, cmd Acknowledge, now time.Time) (Decision, error) {
	p := func() map[string]any {
		return map[string]any{"conflict_id": cmd.ConflictID, "canonical_revision": int64(cmd.CanonicalRevision),
			"candidate_hash": cmd.CandidateHash, "candidate_epoch": cmd.CandidateEpoch}
	}
	d := Decision{Stream: ConflictStream(cmd.ConflictID), ExpectedVersion: c.Version,
		Events: []events.Event{{Type: TypeAckRequested, Schema: 1, At: now, Payload: p()}}}
	outcome := func(typ, reason string, err error) (Decision, error) {
		q := p()
		if reason != "" {
			q["reason"] = reason
		}
		d.Events = append(d.Events, events.Event{Type: typ, Schema: 1, At: now, Payload: q})
		return d, err
	}
	switch {
	case !c.Open:
		return outcome(TypeAckRejected, "conflict_not_open", fmt.Errorf("%w: conflict %s is not open", ErrAckRejected, cmd.ConflictID))
	case c.VisibleHash == "":
		return outcome(TypeAckRejected, "no_visible_evidence", fmt.Errorf("%w: conflict %s has no candidate visible evidence (I14)", ErrAckRejected, cmd.ConflictID))
	case canonicalRev != cmd.CanonicalRevision || c.CandidateHash == "" || c.CandidateHash != cmd.CandidateHash || c.CandidateEpoch != cmd.CandidateEpoch:
		return outcome(TypeAckStale, "fence_mismatch", fmt.Errorf("%w: conflict %s moved on (revision %d, epoch %d)", ErrAckStale, cmd.ConflictID, canonicalRev, c.CandidateEpoch))
	}
	return outcome(TypeAckApplied, "", nil)
}

// ResolvesOnCommit reports whether a local commit that set the conflicted
// field to revision newRev resolves c system-wins (I12): only a strictly
// higher revision of the same field, and never a legacy conflict (I14).
func ResolvesOnCommit(c ConflictState, field string, newRev uint64) bool {
	return c.Open && c.VisibleHash != "" && c.Field == field && newRev > c.CanonicalRevision
}

// ConflictResolved is the conflict.resolved event.
func ConflictResolved(id, resolution string, canonicalRev uint64, now time.Time) events.Event {
	return events.Event{Type: TypeConflictResolved, Schema: 1, At: now, Payload: map[string]any{
		"conflict_id": id, "resolution": resolution, "canonical_revision": int64(canonicalRev)}}
}

// CandidateCleared is the candidate.cleared event; the field's candidate
// epoch becomes oldEpoch+1 (no ABA, I13).
func CandidateCleared(binding, field string, oldEpoch int64, reason string, now time.Time) events.Event {
	return events.Event{Type: TypeCandidateCleared, Schema: 1, At: now, Payload: map[string]any{
		"binding": binding, "field": field, "epoch": oldEpoch + 1, "reason": reason}}
}

// InboundEvent builds one inbound event of type typ with payload p.
func InboundEvent(typ string, p map[string]any, now time.Time) events.Event {
	return events.Event{Type: typ, Schema: 1, At: now, Payload: p}
}

// DecideBlocked settles a claimed acknowledge_system row reconcile whose
// guard (the candidate-time full-row visible hash) no longer matched: a
// person edited the row again, so the write was not made and the effect is
// blocked_candidate, never an overwrite (I13). Errors: ErrStaleClaim.
func DecideBlocked(e Effect, token, code string, now time.Time) (Decision, error) {
	if (e.State != EffectProcessing && e.State != EffectUncertain) || e.ClaimToken != token {
		return Decision{}, fmt.Errorf("%w: %s (state %s)", ErrStaleClaim, e.ID, e.State)
	}
	if code == "" {
		code = "candidate_row_changed"
	}
	return transition(e, TypeEffectBlocked, now, map[string]any{"claim_token": token, "code": code}), nil
}
