package aggregates

import (
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/hikoutei/hikoutei-go/events"
)

// ConflictID is deterministic: one conflict per (row binding, field,
// candidate epoch), so a replay or a repeated poll never opens two.
func ConflictID(binding, field string, epoch int64) string {
	return fmt.Sprintf("cf%016x", xxhash.Sum64String(fmt.Sprintf("%s\x00%s\x00%d", binding, field, epoch)))
}

// ConflictStatus is where a conflict stands.
type ConflictStatus string

// Conflict statuses.
const (
	ConflictOpen     ConflictStatus = "open"
	ConflictResolved ConflictStatus = "resolved"
)

// Conflict is one conflict as the read model holds it: the field a person
// and the system both changed, the candidate fence and the candidate-time
// visible evidence. An empty VisibleHash marks a legacy conflict (I14).
type Conflict struct {
	ID, Entity, EntityID, Field, Tab, Anchor, Binding string
	Status                                            ConflictStatus
	CanonicalRevision                                 uint64
	CandidateHash                                     string
	CandidateEpoch                                    int64
	VisibleRevision                                   int64
	VisibleHash                                       string
	SystemValue, SheetValue                           string
	// ReconcileEffect and ReconcileState follow the row reconcile an
	// acknowledge_system queued.
	ReconcileEffect, ReconcileState string
	OpenedSeq, ResolvedSeq          uint64
	OpenedAt                        time.Time
	Resolution                      events.Resolution
}

// ConflictState is what a conflict decision needs: the conflict, its
// field's sheet-side state (the active candidate fences commands) and the
// versions of the streams a resolution appends to.
type ConflictState struct {
	Conflict
	Sheet          SheetField
	Version        uint64 // the conflict stream's version
	InboundVersion uint64 // the Input tab's inbound stream version
}

// Acknowledge is the acknowledge_system command: keep the system's value
// for the conflicted field, fenced by what the caller saw (I13). The same
// fenced shape is accept_user's (I30, DecideAcceptUser). CommandID, when
// given, makes the command idempotent (see CommandRecord); Actor is who
// asked.
type Acknowledge struct {
	ConflictID        string
	CanonicalRevision uint64
	CandidateHash     string
	CandidateEpoch    int64
	CommandID         string
	Actor             events.Actor
}

// fence is the command as its events record it.
func (a Acknowledge) fence() events.AckCommand {
	return events.AckCommand{ConflictID: a.ConflictID, CanonicalRevision: a.CanonicalRevision, CandidateHash: a.CandidateHash,
		CandidateEpoch: a.CandidateEpoch, CommandID: a.CommandID, Actor: a.Actor}
}

// AckOutcome is how a resolution command (acknowledge_system, accept_user)
// ended.
type AckOutcome string

// Acknowledge outcomes.
const (
	AckApplied  AckOutcome = "applied"
	AckStale    AckOutcome = "stale"
	AckRejected AckOutcome = "rejected"
)

// AckState is what DecideAcknowledge and DecideAcceptUser need besides the
// conflict: the field's current canonical revision and value, the version
// of the Input row's outbox stream (where the reconcile is queued), the
// first outcome of the command's id (Prior, nil when new) and, for
// accept_user, the entity's state, its key field and the candidate value.
type AckState struct {
	Conflict          ConflictState
	CanonicalRevision uint64
	CanonicalValue    any
	RowOutboxVersion  uint64
	Prior             *CommandRecord
	Entity            EntityState
	KeyField          string
	CandidateValue    any
	CandidateKnown    bool
	// Stale are canonical values of the row's other user cells that it
	// does not show: the store's last write of them is not canonical
	// (an application write that met the person's edit was lost there),
	// and no candidate or conflict holds them. The resolution's write of
	// the row carries them.
	Stale map[string]any
}

// rowValues are the values the resolution writes on the Input row: the
// stale cells, then the resolved field's value.
func (st AckState) rowValues(field string, v any) map[string]any {
	out := make(map[string]any, len(st.Stale)+1)
	for f, x := range st.Stale {
		out[f] = x
	}
	out[field] = v
	return out
}

// DecideAcknowledge fences an acknowledge_system command (I13). It always
// records the command: requested, then applied, stale or rejected. When
// the fence holds it resolves the conflict in the same commit, clears the
// candidate (epoch + 1) and queues the row reconcile: an update of the
// Input cell to the canonical value guarded by the candidate-time full-row
// visible hash, so a later human edit makes it blocked_candidate instead of
// being overwritten. It returns the changes, the outcome, the reconcile
// effect's id (applied) and ErrAckStale or ErrAckRejected for the two other
// outcomes (their events are still the command's audit trail; the errors
// also match ErrConflictStale, ErrConflictNotOpen or ErrConflictBlocked).
// A command id seen before returns its first outcome and records nothing
// (ErrCommandIDReused when the payload differs).
func DecideAcknowledge(st AckState, cmd Acknowledge, sheet Sheet, now time.Time) (Changes, AckOutcome, string, error) {
	if st.Prior != nil {
		return replayed(*st.Prior, cmd, events.ResolutionAcknowledged)
	}
	cs := st.Conflict
	fence := cmd.fence()
	var c Changes
	stream := events.ConflictStream(cmd.ConflictID)
	c.Add(stream, cs.Version, events.New(stream, events.AckRequested(fence), now))
	if outcome, reason, err := ackFence(cs, st.CanonicalRevision, cmd, events.ResolutionAcknowledged); err != nil {
		fence.Reason = reason
		var p events.Payload = events.AckRejected(fence)
		if outcome == AckStale {
			p = events.AckStale(fence)
		}
		c.Add(stream, cs.Version, events.New(stream, p, now))
		return c, outcome, "", err
	}
	q := Queue{Target: sheet.Target(cs.Tab, cs.Anchor), Op: events.OpUpdate, Entity: cs.Entity, ID: cs.EntityID,
		Values: st.rowValues(cs.Field, st.CanonicalValue), ExpectedHash: cs.Sheet.CandidateRow}
	qd, id, err := DecideQueue(st.RowOutboxVersion, q, now)
	if err != nil {
		return Changes{}, "", "", err
	}
	fence.ReconcileEffect = id
	c.Add(stream, cs.Version, events.New(stream, events.AckApplied(fence), now))
	c.AddDecision(qd)
	c.Merge(resolve(cs, events.ResolutionAcknowledged, st.CanonicalRevision, cmd.Actor, sheet, now))
	return c, AckApplied, id, nil
}

// Reasons a resolution command changed nothing (events.AckCommand.Reason).
const (
	reasonNotOpen          = "conflict_not_open"
	reasonNoEvidence       = "no_visible_evidence"
	reasonFenceMismatch    = "fence_mismatch"
	reasonCandidateUnknown = "candidate_value_unknown"
)

// ackFence checks the command's fence against the conflict.
func ackFence(cs ConflictState, canonicalRev uint64, cmd Acknowledge, how events.Resolution) (AckOutcome, string, error) {
	switch {
	case cs.Status != ConflictOpen && cs.Resolution == events.ResolutionSystemWins && canonicalRev != cmd.CanonicalRevision:
		// An application commit raised the field's revision since the
		// fence and so resolved the conflict system-wins (I12): stale.
		return AckStale, reasonFenceMismatch, fenceError(how, reasonFenceMismatch, cmd.ConflictID,
			fmt.Sprintf("moved on (revision %d)", canonicalRev))
	case cs.Status != ConflictOpen:
		return AckRejected, reasonNotOpen, fenceError(how, reasonNotOpen, cmd.ConflictID, "is not open")
	case cs.VisibleHash == "":
		return AckRejected, reasonNoEvidence, fenceError(how, reasonNoEvidence, cmd.ConflictID, "has no candidate visible evidence")
	case canonicalRev != cmd.CanonicalRevision || cs.Sheet.CandidateHash == "" || cs.Sheet.CandidateHash != cmd.CandidateHash ||
		cs.Sheet.CandidateEpoch != cmd.CandidateEpoch:
		return AckStale, reasonFenceMismatch, fenceError(how, reasonFenceMismatch, cmd.ConflictID,
			fmt.Sprintf("moved on (revision %d, epoch %d)", canonicalRev, cs.Sheet.CandidateEpoch))
	}
	return AckApplied, "", nil
}

// resolvesOnCommit reports whether a local commit that set the conflicted
// field to revision newRev resolves c system-wins (I12): only a strictly
// higher revision of the same field, and never a legacy conflict (I14).
func resolvesOnCommit(c ConflictState, field string, newRev uint64) bool {
	return c.Status == ConflictOpen && c.VisibleHash != "" && c.Field == field && newRev > c.CanonicalRevision
}

// DecideCommitConflicts applies the conflict rules to an entity decision
// d of an entity with open conflicts (ones no earlier unit of the same
// commit resolved). A remove fails closed before anything commits (I15:
// ErrConflictOpen). A persist that strictly raises the revision of a
// conflicted field resolves that conflict system-wins in the same commit
// (I12): conflict.resolved, candidate.cleared (epoch + 1), the audit row's
// update, and the Input row's rewrite among rowFx guarded by the
// candidate-time row hash, so a later human edit is not overwritten. It
// returns the changes and rowFx with those guards.
func DecideCommitConflicts(d Decision, open []ConflictState, rowFx []Queue, sheet Sheet, now time.Time) (Changes, []Queue, error) {
	var c Changes
	if len(open) == 0 || len(d.Events) == 0 {
		return c, rowFx, nil
	}
	p, persisted := d.Events[0].Payload.(events.EntityPersisted)
	if !persisted {
		cf := open[0]
		return c, nil, fmt.Errorf("%w: %s %q has %d unresolved conflict(s)", ErrConflictOpen, cf.Entity, cf.EntityID, len(open))
	}
	for _, cs := range open {
		rev, ok := p.Revisions[cs.Field]
		if !ok || !resolvesOnCommit(cs, cs.Field, rev) {
			continue // unrelated fields and same-value writes are not approval
		}
		c.Merge(resolve(cs, events.ResolutionSystemWins, rev, events.ActorApplication, sheet, now))
		rowFx = guard(rowFx, cs.Binding, cs.Sheet.CandidateRow)
	}
	return c, rowFx, nil
}

// guard makes the effects of binding write only over the row hash h.
func guard(fx []Queue, binding, h string) []Queue {
	if h == "" {
		return fx
	}
	out := append([]Queue(nil), fx...)
	for i := range out {
		if out[i].Target.Binding == binding {
			out[i].ExpectedHash = h
		}
	}
	return out
}

// resolve records a resolution by actor: conflict.resolved,
// candidate.cleared (the candidate epoch + 1: no ABA) and the audit row's
// RESOLVED update.
func resolve(cs ConflictState, how events.Resolution, rev uint64, actor events.Actor, sheet Sheet, now time.Time) Changes {
	var c Changes
	cstream, istream := events.ConflictStream(cs.ID), events.InboundStream(cs.Tab)
	c.Add(cstream, cs.Version, events.New(cstream, events.ConflictResolved{ConflictID: cs.ID, Resolution: how, CanonicalRevision: rev,
		Actor: actor}, now))
	c.Add(istream, cs.InboundVersion, events.New(istream, events.CandidateCleared{Binding: cs.Binding, Field: cs.Field,
		Epoch: cs.Sheet.CandidateEpoch + 1, Reason: string(how)}, now))
	c.Queue = append(c.Queue, Queue{Target: sheet.Target(sheet.ConflictsTab(), cs.ID), Op: events.OpUpdate, Entity: cs.Entity,
		ID: cs.EntityID, Values: sheet.AuditResolved(how, actor, now)})
	return c
}
