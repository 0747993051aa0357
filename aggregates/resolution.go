package aggregates

import (
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// CommandRecord is the first outcome of a resolution command with a
// command id: a repeated id with the same payload returns it, another
// payload fails closed (ErrCommandIDReused).
type CommandRecord struct {
	CommandID, ConflictID string
	Resolution            events.Resolution
	CanonicalRevision     uint64
	CandidateHash         string
	CandidateEpoch        int64
	Outcome               AckOutcome
	Reason                string
	ReconcileEffect       string
}

// same reports whether cmd, resolving how, is the command r recorded.
func (r CommandRecord) same(cmd Acknowledge, how events.Resolution) bool {
	return r.ConflictID == cmd.ConflictID && r.Resolution == how && r.CanonicalRevision == cmd.CanonicalRevision &&
		r.CandidateHash == cmd.CandidateHash && r.CandidateEpoch == cmd.CandidateEpoch
}

// replayed returns the first outcome of a command id, recording nothing.
func replayed(r CommandRecord, cmd Acknowledge, how events.Resolution) (Changes, AckOutcome, string, error) {
	if !r.same(cmd, how) {
		return Changes{}, "", "", fmt.Errorf("%w: command %s was %s of conflict %s with another fence", ErrCommandIDReused,
			cmd.CommandID, r.Resolution, r.ConflictID)
	}
	if r.Outcome == AckApplied {
		return Changes{}, AckApplied, r.ReconcileEffect, nil
	}
	return Changes{}, r.Outcome, "", fenceError(how, r.Reason, cmd.ConflictID, "(repeated command "+cmd.CommandID+")")
}

// fenceError is the typed error of a resolution command that changed
// nothing: ErrConflictNotOpen, ErrConflictStale or ErrConflictBlocked,
// and, for acknowledge_system, ErrAckRejected or ErrAckStale as before.
func fenceError(how events.Resolution, reason, id, detail string) error {
	var err error
	switch reason {
	case reasonNotOpen:
		err = ErrConflictNotOpen
	case reasonFenceMismatch:
		err = ErrConflictStale
	default:
		err = ErrConflictBlocked
	}
	if how == events.ResolutionAcknowledged {
		legacy := ErrAckRejected
		if reason == reasonFenceMismatch {
			legacy = ErrAckStale
		}
		err = alsoCode{err: err, legacy: legacy}
	}
	return fmt.Errorf("%w: conflict %s %s", err, id, detail)
}

// alsoCode is a resolution error that also matches the code
// acknowledge_system used before resolutions had their own; its text is
// the resolution's code alone (one line, one code), where errors.Join
// would print both codes on two lines.
type alsoCode struct{ err, legacy error }

func (e alsoCode) Error() string   { return e.err.Error() }
func (e alsoCode) Unwrap() []error { return []error{e.err, e.legacy} }

// DecideAcceptUser fences an accept_user command, "use the sheet's value"
// (I30), exactly like acknowledge_system (I13): canonical revision,
// candidate hash and candidate epoch. It always records the command:
// requested, then applied, stale or rejected. When the fence holds, ONE
// commit:
//   - commits the person's value as a new local revision of the field
//     (entity.persisted with the command's actor), which the System row
//     shows through the ordinary row effects;
//   - queues the Input row's reconcile guarded by the candidate-time
//     full-row visible hash, so a later human edit of the row makes it
//     blocked_candidate, never an overwrite;
//   - resolves the conflict (use_sheet), clears the candidate and bumps
//     its epoch (no ABA), and updates the audit row.
//
// An application commit that raised the field's revision since the fence
// makes it stale (ErrConflictStale). It returns the changes, the outcome,
// the reconcile effect's id and, for stale or rejected, ErrConflictStale,
// ErrConflictNotOpen or ErrConflictBlocked. A command id seen before
// returns its first outcome and records nothing.
func DecideAcceptUser(st AckState, cmd Acknowledge, sheet Sheet, now time.Time) (Changes, AckOutcome, string, error) {
	if st.Prior != nil {
		return replayed(*st.Prior, cmd, events.ResolutionUseSheet)
	}
	cs := st.Conflict
	fence := cmd.fence()
	var c Changes
	stream := events.ConflictStream(cmd.ConflictID)
	c.Add(stream, cs.Version, events.New(stream, events.AcceptUserRequested(fence), now))
	outcome, reason, err := acceptFence(st, cmd)
	if err != nil {
		fence.Reason = reason
		var p events.Payload = events.AcceptUserRejected(fence)
		if outcome == AckStale {
			p = events.AcceptUserStale(fence)
		}
		c.Add(stream, cs.Version, events.New(stream, p, now))
		return c, outcome, "", err
	}
	applied, id, err := useSheet(st, cmd, sheet, now)
	if err != nil {
		return Changes{}, "", "", err
	}
	fence.ReconcileEffect = id
	c.Add(stream, cs.Version, events.New(stream, events.AcceptUserApplied(fence), now))
	c.Merge(applied)
	return c, AckApplied, id, nil
}

// acceptFence is ackFence plus what accept_user needs: the candidate's
// value, whose hash must be the fenced candidate hash.
func acceptFence(st AckState, cmd Acknowledge) (AckOutcome, string, error) {
	outcome, reason, err := ackFence(st.Conflict, st.CanonicalRevision, cmd, events.ResolutionUseSheet)
	if err != nil {
		return outcome, reason, err
	}
	if h, herr := ShownHash(st.CandidateValue); !st.CandidateKnown || herr != nil || h != st.Conflict.Sheet.CandidateHash {
		return AckRejected, reasonCandidateUnknown, fenceError(events.ResolutionUseSheet, reasonCandidateUnknown, cmd.ConflictID,
			"has no known candidate value")
	}
	return AckApplied, "", nil
}

// useSheet is the applied accept_user's commit: the entity change, its row
// effects (the Input row's guarded by the candidate-time row hash and
// queued here, so its id is the reconcile's) and the resolution.
func useSheet(st AckState, cmd Acknowledge, sheet Sheet, now time.Time) (Changes, string, error) {
	cs := st.Conflict
	var c Changes
	d, err := DecidePersist(st.Entity, Persist{Entity: cs.Entity, ID: cs.EntityID, Values: map[string]any{cs.Field: st.CandidateValue}}, now)
	if err != nil {
		return c, "", err
	}
	rev, id := st.CanonicalRevision, ""
	if len(d.Events) > 0 {
		p := d.Events[0].Payload.(events.EntityPersisted)
		p.Actor = cmd.Actor
		d.Events[0] = events.New(d.Stream, p, now)
		rev = p.Revisions[cs.Field]
		c.AddDecision(d)
		for _, q := range RowEffects(sheet, cs.Entity, cs.EntityID, st.KeyField, p) {
			if q.Target.Binding != cs.Binding {
				c.Queue = append(c.Queue, q)
				continue
			}
			q.ExpectedHash = cs.Sheet.CandidateRow
			for f, v := range st.Stale {
				if _, ok := q.Values[f]; !ok {
					q.Values[f] = v
				}
			}
			qd, qid, err := DecideQueue(st.RowOutboxVersion, q, now)
			if err != nil {
				return Changes{}, "", err
			}
			c.AddDecision(qd)
			id = qid
		}
	}
	c.Merge(resolve(cs, events.ResolutionUseSheet, rev, cmd.Actor, sheet, now))
	return c, id, nil
}
