package projector

import (
	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// TabRows is what the read model says one tab shows, for anti-entropy.
type TabRows struct {
	// Expected maps anchors to the full-row hash the tab shows after the
	// last applied write or accepted observation.
	Expected map[string]string
	// InFlight anchors have an unsettled effect of target.
	InFlight map[string]bool
	// Held anchors carry an open conflict, an active candidate or active
	// quarantine evidence.
	Held map[string]bool
	// Deleted anchors have active row_deleted evidence (a person deleted
	// the row and the poller recorded it).
	Deleted map[string]bool
	// MassDeleted: the tab suddenly read empty and the poller recorded a
	// suspected mass deletion that is still active.
	MassDeleted bool
}

// TabRowsOf reads TabRows of tab for target.
func (p *Projector) TabRowsOf(target, tab string) (TabRows, error) {
	r := TabRows{Expected: map[string]string{}, InFlight: map[string]bool{}, Held: map[string]bool{}, Deleted: map[string]bool{}}
	queries := []struct {
		sql  string
		args []any
		fn   func(*sqlite.Stmt)
	}{
		{"SELECT anchor, hash FROM hk_visible_state WHERE tab = ? AND hash != ''", []any{tab},
			func(st *sqlite.Stmt) { r.Expected[st.ColumnText(0)] = st.ColumnText(1) }},
		{"SELECT anchor FROM hk_outbox WHERE spreadsheet = ? AND tab = ? AND state IN " + unsettled, []any{target, tab},
			func(st *sqlite.Stmt) { r.InFlight[st.ColumnText(0)] = true }},
		{"SELECT anchor FROM hk_conflicts WHERE tab = ? AND state = 'open'", []any{tab},
			func(st *sqlite.Stmt) { r.Held[st.ColumnText(0)] = true }},
		{"SELECT anchor FROM hk_sheet_field_state WHERE tab = ? AND candidate_hash != ''", []any{tab},
			func(st *sqlite.Stmt) { r.Held[st.ColumnText(0)] = true }},
		{"SELECT anchor, reason FROM hk_quarantine WHERE tab = ? AND active = 1", []any{tab},
			func(st *sqlite.Stmt) { r.holdOrDeleted(st.ColumnText(0), st.ColumnText(1)) }},
	}
	for _, q := range queries {
		if err := p.each(q.sql, q.args, q.fn); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (r *TabRows) holdOrDeleted(anchor, reason string) {
	switch {
	case anchor == "":
		r.MassDeleted = r.MassDeleted || reason == aggregates.ReasonMassDeletion
	case reason == aggregates.ReasonRowDeleted:
		r.Deleted[anchor] = true
	default:
		r.Held[anchor] = true
	}
}
