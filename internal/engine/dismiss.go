package engine

import (
	"fmt"
	"strings"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// DismissQuarantine drops a person's quarantined edit: the row is
// rewritten to canonical state, guarded by the row hash the quarantine
// recorded (aggregates.DecideDismiss), in one fenced commit. Errors: projector.ErrQuarantineEntryNotFound,
// aggregates.ErrQuarantineNotDismissable, fencing and store errors.
func (e *Engine) DismissQuarantine(id string) error {
	return e.onWriter(func() error {
		q, err := projector.QuarantineEntryByID(e.proj.Conn(), id)
		if err != nil {
			return err
		}
		spec, ok := e.sheet.Schema.Tab(q.Tab)
		if !ok && strings.HasSuffix(q.Tab, sheetsio.KeptSuffix) {
			return fmt.Errorf("%w: quarantine record %s is a row of a tab adopted and kept as it was (the store never writes it): fix the row there and adopt that tab again, or leave it",
				aggregates.ErrQuarantineNotDismissable, id)
		}
		if !ok {
			return fmt.Errorf("%w: quarantine record %s is on a tab the sheet no longer has", aggregates.ErrQuarantineNotDismissable, id)
		}
		vals, exists, err := e.proj.EntityValues(spec.Entity, q.Anchor)
		if err != nil {
			return err
		}
		row := aggregates.QuarantinedRow{ID: q.ID, Target: e.sheet.Target(q.Tab, q.Anchor), Entity: spec.Entity, Anchor: q.Anchor,
			RowHash: q.RowHash, Active: q.Active}
		queue, err := aggregates.DecideDismiss(row, vals, exists, e.sheet.Columns(q.Tab))
		if err != nil {
			return err
		}
		return e.commitWorker(aggregates.Changes{Queue: []aggregates.Queue{queue}}, e.cfg.Clock.Now())
	})
}
