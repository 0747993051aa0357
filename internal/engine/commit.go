package engine

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// commitChanges are the changes one entity decision d of a commit makes:
// its events and, with sync on, the effects that show it on its tabs and
// the conflict rules' outcome (I12, I15; aggregates.DecideCommitConflicts).
func (e *Engine) commitChanges(c Command, d aggregates.Decision, b *batchState, now time.Time) (aggregates.Changes, error) {
	var ch aggregates.Changes
	ch.AddDecision(d)
	if e.sync == nil {
		return ch, nil
	}
	shape, _ := e.reg.Shape(c.Entity)
	rowFx := aggregates.RowEffects(e.sheet, c.Entity, c.ID, shape.PK, d.Events[0].Payload)
	open, err := e.openConflicts(shape, c.ID, b)
	if err != nil {
		return ch, err
	}
	resolved, rowFx, err := aggregates.DecideCommitConflicts(d, open, rowFx, e.sheet, now)
	if err != nil {
		return ch, err
	}
	aggregates.ReferPersisted(rowFx, d.Events[0].Payload, shape.PK, d.ExpectedVersion+1)
	ch.Queue = append(ch.Queue, rowFx...)
	ch.Merge(resolved)
	return ch, nil
}

// openConflicts reads the decision state of an entity's open conflicts
// that no earlier unit of the same commit resolved.
func (e *Engine) openConflicts(shape events.EntityShape, id string, b *batchState) ([]aggregates.ConflictState, error) {
	if !shape.HasUserFields() {
		return nil, nil // no Input tab: no candidates, no conflicts
	}
	if some, err := e.anyOpenConflict(b); err != nil || !some {
		return nil, err // none in the store (a backfill's units): no read per entity
	}
	open, err := e.proj.OpenConflictsFor(shape.Name, id)
	if err != nil || len(open) == 0 {
		return nil, err
	}
	var out []aggregates.ConflictState
	for _, cf := range open {
		if b.touched(events.ConflictStream(cf.ID)) {
			continue // resolved by an earlier unit of this group commit
		}
		cs, err := e.conflictState(cf, b)
		if err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, nil
}

// anyOpenConflict reports whether the read model holds any open conflict,
// read once per group of units (b.open).
func (e *Engine) anyOpenConflict(b *batchState) (bool, error) {
	if b.open.proj != nil && b.open.proj == e.proj {
		return b.open.some, nil
	}
	some, err := e.proj.AnyOpenConflict()
	if err == nil {
		*b.open = openConflicts{proj: e.proj, some: some}
	}
	return some, err
}

// conflictState reads what a conflict decision needs of cf.
func (e *Engine) conflictState(cf aggregates.Conflict, b *batchState) (aggregates.ConflictState, error) {
	cs := aggregates.ConflictState{Conflict: cf}
	sheet, err := e.proj.SheetFields(cf.Binding)
	if err != nil {
		return cs, err
	}
	cs.Sheet = sheet[cf.Field]
	if cs.Version, err = e.version(events.ConflictStream(cf.ID), b); err != nil {
		return cs, err
	}
	cs.InboundVersion, err = e.version(events.InboundStream(cf.Tab), b)
	return cs, err
}
