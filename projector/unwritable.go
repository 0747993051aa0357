package projector

import (
	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
)

// hk_unwritable holds, per row binding and field, the values the sheet
// shows as a marker because Google Sheets cannot hold them: recorded by
// effect.value_unwritable, cleared when a later applied effect writes the
// field again (the same commit's effect.value_unwritable, if any, records
// it anew) or deletes the row.

// unwritableRecorded records the cells an applied effect wrote as markers.
// The event is on the effect's stream: the outbox row follows its version.
func (p *Projector) unwritableRecorded(e *events.Event, x events.EffectValueUnwritable) error {
	if err := p.exec("UPDATE hk_outbox SET version = ?, updated_seq = ? WHERE effect_id = ?",
		int64(e.Version), int64(e.Seq), x.EffectID); err != nil {
		return err
	}
	stmt := p.conn.Prep(`INSERT INTO hk_unwritable (binding, field, tab, entity, id, reason, chars, effect_id, seq)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (binding, field) DO UPDATE SET tab = excluded.tab, entity = excluded.entity, id = excluded.id,
  reason = excluded.reason, chars = excluded.chars, effect_id = excluded.effect_id, seq = excluded.seq`)
	for _, f := range x.Fields {
		bindAll(stmt, x.Binding, f.Field, x.Tab, x.Entity, x.ID, f.Reason, f.Chars, x.EffectID, int64(e.Seq))
		if err := run(stmt); err != nil {
			return err
		}
	}
	return nil
}

// unwritableCleared forgets the markers of the fields an applied effect
// wrote (all of the row's when it deleted the row). Almost every row has
// none: one indexed lookup, and the effect's payload is read only when
// the row has some.
func (p *Projector) unwritableCleared(x events.EffectApplied) error {
	if !p.applied.found { // no such effect: no row to clear
		return nil
	}
	binding := p.applied.binding
	var marked map[string]bool
	err := p.each(`SELECT field FROM hk_unwritable WHERE binding = ?`, []any{binding}, func(st *sqlite.Stmt) {
		if marked == nil {
			marked = map[string]bool{}
		}
		marked[st.ColumnText(0)] = true
	})
	if err != nil || len(marked) == 0 {
		return err
	}
	fx, ok, err := p.Effect(x.EffectID)
	if err != nil || !ok {
		return err
	}
	if fx.Op == events.OpDelete {
		if x.WrittenHash != "" {
			return nil // a surplus copy's delete: the row still shows
		}
		return p.exec("DELETE FROM hk_unwritable WHERE binding = ?", binding)
	}
	for f := range fx.Values {
		if marked[f] {
			if err := p.exec("DELETE FROM hk_unwritable WHERE binding = ? AND field = ?", binding, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// unwritableTypedOver forgets the markers a person's accepted edit typed
// over: those cells now show the person's value.
func (p *Projector) unwritableTypedOver(binding string, fields map[string]any) error {
	for f := range fields { // order-free: each delete is independent
		if err := p.exec("DELETE FROM hk_unwritable WHERE binding = ? AND field = ?", binding, f); err != nil {
			return err
		}
	}
	return nil
}

// Unwritable is one value the sheet shows as a marker: which entity's
// field, on which tab, and why. It never carries the value.
type Unwritable struct {
	Tab, Entity, ID, Field, Reason string
	Chars                          int64
}

// Unwritables lists the values the sheet shows as markers, by entity, key,
// field and tab.
func (p *Projector) Unwritables() ([]Unwritable, error) {
	var out []Unwritable
	err := p.each(`SELECT tab, entity, id, field, reason, chars FROM hk_unwritable ORDER BY entity, id, field, tab`, nil,
		func(st *sqlite.Stmt) {
			out = append(out, Unwritable{Tab: st.ColumnText(0), Entity: st.ColumnText(1), ID: st.ColumnText(2),
				Field: st.ColumnText(3), Reason: st.ColumnText(4), Chars: st.ColumnInt64(5)})
		})
	return out, err
}
