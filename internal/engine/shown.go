package engine

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// ShownFunc turns the values of an entity's record as the store holds
// them into the values its rows show in the sheet (Config.Shown): the
// root package opens sealed personal values with their subject's key (the
// erased marker once the subject was erased). It returns vals itself when
// nothing changes, a copy otherwise, never changing vals. An error leaves
// the write unsent for now (the key file is not open yet).
type ShownFunc func(entity string, vals map[string]any) (map[string]any, error)

// shown is vals as the sheet shows them (Config.Shown; vals when unset).
func (e *Engine) shown(entity string, vals map[string]any) (map[string]any, error) {
	if e.cfg.Shown == nil || vals == nil || entity == "" {
		return vals, nil
	}
	return e.cfg.Shown(entity, vals)
}

// shownEffect is fx with its values as the sheet shows them, when its tab
// shows an entity's rows: the log and the outbox keep sealed values, only
// the write sent carries what people read (docs/erasure.md).
func (e *Engine) shownEffect(fx aggregates.Effect) (aggregates.Effect, error) {
	spec, ok := e.sheet.Schema.Tab(fx.Target.Tab)
	if !ok || (spec.Role != layout.RoleSystem && spec.Role != layout.RoleInput) {
		return fx, nil
	}
	vals, err := e.shown(spec.Entity, fx.Values)
	if err != nil {
		return fx, fmt.Errorf("effect %s: %w", fx.ID, err)
	}
	fx.Values = vals
	return fx, nil
}

// canonicalHash is the full-row hash of the row showing canonical state
// vals of entity on tab spec, as the sheet shows it ("" when it cannot be
// computed: not compared).
func (e *Engine) canonicalHash(spec layout.TabSpec, columns []string, anchor string, vals map[string]any) string {
	shown, err := e.shown(spec.Entity, vals)
	if err != nil {
		return ""
	}
	return canonicalHash(spec, columns, anchor, shown)
}

// RewriteFields queues, in one fenced commit, a write of the named fields
// of each record of entity (ids) on every tab that shows them, from
// canonical state: Store.Erase rewrites an erased subject's personal cells
// this way, and the write sent shows what Config.Shown makes of them then
// (the marker). A record that does not exist is skipped; without sync it
// does nothing. It returns how many writes it queued.
// Errors: fencing and store errors, as Commit's.
func (e *Engine) RewriteFields(entity string, ids, fields []string) (int, error) {
	if e.sync == nil || len(ids) == 0 || len(fields) == 0 {
		return 0, nil
	}
	n := 0
	err := e.onWriter(func() error {
		now := e.cfg.Clock.Now()
		shape, _ := e.reg.Shape(entity)
		var ch aggregates.Changes
		for _, id := range ids {
			vals, ok, err := e.proj.EntityValues(entity, id)
			if err != nil {
				return err
			}
			if ok {
				p := events.EntityPersisted{Entity: entity, ID: id, Fields: pick(vals, fields)}
				ch.Queue = append(ch.Queue, aggregates.RowEffects(e.sheet, entity, id, shape.PK, p)...)
			}
		}
		if err := e.commitWorker(ch, now); err != nil {
			return err
		}
		if n = len(ch.Queue); n > 0 {
			e.afterCommit(true) // wake the dispatcher
		}
		return nil
	})
	return n, err
}

// pick is the named fields of vals (a field vals lacks is blank).
func pick(vals map[string]any, fields []string) map[string]any {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		out[f] = vals[f]
	}
	return out
}
