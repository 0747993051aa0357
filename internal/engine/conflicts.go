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

// AckResult reports a resolution command (acknowledge_system, accept_user).
type AckResult struct {
	Outcome         aggregates.AckOutcome
	ReconcileEffect string // the row reconcile effect id (applied)
}

// Acknowledge runs acknowledge_system (aggregates.DecideAcknowledge, I13);
// see Resolve.
func (e *Engine) Acknowledge(ctx context.Context, cmd aggregates.Acknowledge) (AckResult, error) {
	return e.Resolve(ctx, events.ResolutionAcknowledged, cmd)
}

// Resolve runs a resolution command in ONE fenced commit, read-decide-
// append on the writer: keep the system's value (events.ResolutionAcknowledged,
// aggregates.DecideAcknowledge, I13) or use the sheet's value
// (events.ResolutionUseSheet, aggregates.DecideAcceptUser, I30). It needs
// no network: the row effects are dispatched by the workers of whichever
// run holds the store next. Errors: ErrConflictNotFound,
// aggregates.ErrConflictStale, ErrConflictNotOpen, ErrConflictBlocked
// (the command is still recorded), aggregates.ErrCommandIDReused,
// aggregates.ErrInvalidCommand (another resolution), fencing and store
// errors.
func (e *Engine) Resolve(ctx context.Context, how events.Resolution, cmd aggregates.Acknowledge) (AckResult, error) {
	var res AckResult
	if err := ctx.Err(); err != nil {
		return res, err
	}
	decide := aggregates.DecideAcknowledge
	switch how {
	case events.ResolutionAcknowledged:
	case events.ResolutionUseSheet:
		decide = aggregates.DecideAcceptUser
	default:
		return res, fmt.Errorf("%w: resolution %q", aggregates.ErrInvalidCommand, how)
	}
	err := e.onWriter(func() error {
		st, err := e.ackState(cmd, how == events.ResolutionUseSheet)
		if err != nil {
			return err
		}
		now := e.cfg.Clock.Now()
		ch, outcome, id, derr := decide(st, cmd, e.sheet, now)
		if outcome == "" {
			return derr
		}
		res = AckResult{Outcome: outcome, ReconcileEffect: id}
		return errors.Join(e.commitWorker(ch, now), derr)
	})
	return res, err
}

// ackState reads what a resolution decision needs of a conflict; with
// useSheet also the entity's state and the candidate's value.
func (e *Engine) ackState(cmd aggregates.Acknowledge, useSheet bool) (aggregates.AckState, error) {
	cf, ok, err := e.proj.Conflict(cmd.ConflictID)
	if err != nil || !ok {
		return aggregates.AckState{}, errors.Join(err, fmt.Errorf("%w: %s", ErrConflictNotFound, cmd.ConflictID))
	}
	b := newBatchState(nil)
	st := aggregates.AckState{}
	if st.Prior, err = e.prior(cmd.CommandID); err != nil {
		return st, err
	}
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
	if st.Stale, err = e.staleCells(cf.Tab, cf.Binding, cf.Field, vals); err != nil {
		return st, err
	}
	if st.RowOutboxVersion, err = e.version(events.OutboxStream(cf.Binding), b); err != nil || !useSheet {
		return st, err
	}
	return st, e.acceptState(&st, es, b)
}

// staleCells are the canonical values of the user cells of an Input row,
// other than field, that the row does not show: the store's last write
// (or accepted edit) of the cell is known and is not the canonical value,
// and no candidate or conflict holds the cell (aggregates.AckState.Stale).
func (e *Engine) staleCells(tab, binding, field string, vals map[string]any) (map[string]any, error) {
	spec, ok := e.sheet.Schema.Tab(tab)
	if !ok {
		return nil, nil
	}
	fields, err := e.proj.SheetFields(binding)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	for f, sf := range fields {
		v, known := vals[f]
		if f == field || !known || spec.ColumnIndex(f) < 0 || !sf.ShownKnown || sf.CandidateHash != "" || sf.ConflictID != "" {
			continue
		}
		if h, err := aggregates.ShownHash(v); err != nil || h == sf.ShownHash {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[f] = v
	}
	return out, nil
}

// prior reads the first outcome of a command id (nil: none, or no id).
func (e *Engine) prior(commandID string) (*aggregates.CommandRecord, error) {
	if commandID == "" {
		return nil, nil
	}
	rec, ok, err := e.proj.Command(commandID)
	if err != nil || !ok {
		return nil, err
	}
	return &rec, nil
}

// acceptState adds what accept_user needs: the entity's state at its log
// version, its key field and the active candidate's value.
func (e *Engine) acceptState(st *aggregates.AckState, es aggregates.EntityState, b *batchState) error {
	cf := st.Conflict
	var err error
	if es.Version, err = e.version(events.EntityStream(cf.Entity, cf.EntityID), b); err != nil {
		return err
	}
	st.Entity = es
	shape, _ := e.reg.Shape(cf.Entity)
	st.KeyField = shape.PK
	st.CandidateValue, st.CandidateKnown, err = e.proj.CandidateValue(cf.Binding, cf.Field)
	return err
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
			SystemValue: cf.SystemValue, SheetValue: cf.SheetValue, Resolution: n.Resolution, Actor: n.Actor, Seq: n.Seq,
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

// Conflict returns one conflict by id. Errors: ErrConflictNotFound.
func (e *Engine) Conflict(id string) (aggregates.Conflict, error) {
	var cf aggregates.Conflict
	err := e.onWriter(func() error {
		var ok bool
		var err error
		cf, ok, err = e.proj.Conflict(id)
		if err == nil && !ok {
			err = fmt.Errorf("%w: %s", ErrConflictNotFound, id)
		}
		return err
	})
	return cf, err
}
