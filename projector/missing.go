package projector

import "zombiezen.com/go/sqlite"

// EntityRef names one entity.
type EntityRef struct{ Entity, ID string }

// Unsynced returns up to max existing entities of which spreadsheet has
// never been told: no effect was ever queued for their System row (e.g.
// committed before sync was turned on). Reconciliation queues their rows.
func (p *Projector) Unsynced(spreadsheet string, max int) ([]EntityRef, error) {
	var out []EntityRef
	err := p.query(`SELECT e.entity, e.id FROM hk_entity_state AS e
WHERE e.removed = 0 AND NOT EXISTS (SELECT 1 FROM hk_outbox AS o
  WHERE o.spreadsheet = ? AND o.tab = e.entity || '_System' AND o.anchor = e.id)
ORDER BY e.last_seq LIMIT ?`, func(st *sqlite.Stmt) error {
		out = append(out, EntityRef{Entity: st.ColumnText(0), ID: st.ColumnText(1)})
		return nil
	}, spreadsheet, int64(max))
	return out, err
}
