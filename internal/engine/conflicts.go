package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// Conflicts lists conflicts in status ("" = all), oldest first.
func (e *Engine) Conflicts(status aggregates.ConflictStatus) ([]aggregates.Conflict, error) {
	var out []aggregates.Conflict
	err := e.onWriter(func() (err error) { out, err = e.proj.ConflictsIn(status); return err })
	return out, err
}

// AckResult reports an acknowledge_system command.
type AckResult struct {
	Outcome         aggregates.AckOutcome
	ReconcileEffect string // the row reconcile effect id (applied)
}

// Acknowledge runs acknowledge_system (aggregates.DecideAcknowledge, I13)
// in ONE fenced commit. It needs no network: the reconcile is dispatched by
// the workers of whichever run holds the store next. Errors:
// ErrConflictNotFound, aggregates.ErrAckStale, aggregates.ErrAckRejected
// (the command is still recorded), fencing and store errors.
func (e *Engine) Acknowledge(ctx context.Context, cmd aggregates.Acknowledge) (AckResult, error) {
	var res AckResult
	if err := ctx.Err(); err != nil {
		return res, err
	}
	err := e.onWriter(func() error {
		st, err := e.ackState(cmd.ConflictID)
		if err != nil {
			return err
		}
		now := e.cfg.Clock.Now()
		ch, outcome, id, derr := aggregates.DecideAcknowledge(st, cmd, e.sheet, now)
		if outcome == "" {
			return derr
		}
		res = AckResult{Outcome: outcome, ReconcileEffect: id}
		return errors.Join(e.commitWorker(ch, now), derr)
	})
	return res, err
}

// ackState reads what DecideAcknowledge needs of a conflict.
func (e *Engine) ackState(id string) (aggregates.AckState, error) {
	cf, ok, err := e.proj.Conflict(id)
	if err != nil || !ok {
		return aggregates.AckState{}, errors.Join(err, fmt.Errorf("%w: %s", ErrConflictNotFound, id))
	}
	b := newBatchState(nil)
	st := aggregates.AckState{}
	if st.Conflict, err = e.conflictState(cf, b); err != nil {
		return st, err
	}
	es, err := e.proj.EntityState(cf.Entity, cf.EntityID)
	if err != nil {
		return st, err
	}
	st.CanonicalRevision = es.Fields[cf.Field].Revision
	vals, _, err := e.proj.EntityValues(cf.Entity, cf.EntityID)
	if err != nil {
		return st, err
	}
	st.CanonicalValue = vals[cf.Field]
	st.RowOutboxVersion, err = e.version(events.OutboxStream(cf.Binding), b)
	return st, err
}

// enableNotices turns on conflict notifications once the read model has
// caught up at Open (old conflicts are not news).
func (e *Engine) enableNotices() {
	if e.sync == nil {
		return
	}
	_ = e.onWriter(func() error { e.proj.SetConflictNotes(true); return nil })
}

// notifyConflicts hands the conflicts opened or resolved by the batch just
// projected to OnConflict, in log order, on a goroutine (the writer never
// waits on the hook). Writer goroutine only.
func (e *Engine) notifyConflicts() {
	if e.sync == nil {
		return
	}
	notes := e.proj.TakeConflictNotes()
	fn := e.sync.cfg.OnConflict
	if len(notes) == 0 || fn == nil {
		return
	}
	var out []ConflictNotice
	for _, n := range notes {
		if n.Seq <= e.sync.noteSeq {
			continue // re-applied after a failed projection: already delivered
		}
		e.sync.noteSeq = n.Seq
		cf, _, _ := e.proj.Conflict(n.ConflictID)
		out = append(out, ConflictNotice{Type: n.Type, ConflictID: n.ConflictID, Entity: cf.Entity, ID: cf.EntityID, Field: cf.Field,
			SystemValue: cf.SystemValue, SheetValue: cf.SheetValue, Resolution: n.Resolution, Seq: n.Seq,
			CanonicalRevision: cf.CanonicalRevision, CandidateEpoch: cf.CandidateEpoch})
	}
	if len(out) == 0 {
		return
	}
	prev, done := e.sync.noteDone, make(chan struct{})
	e.sync.noteDone = done
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		for _, n := range out {
			fn(n)
		}
	}()
}
