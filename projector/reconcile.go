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
	r := TabRows{Expected: map[string]string{}}
	err := p.tabRows(&r, target, tab, func(anchor, hash string) { r.Expected[anchor] = hash })
	return r, err
}

// TabRowsSorted reads TabRows of tab for target, except Expected, which
// it hands to expected one anchor at a time in ascending byte order (the
// order of the index it is read by) instead of keeping it in a map: a
// caller that merges it with rows it holds sorted by anchor keeps no
// second copy of a large tab's anchors (anti-entropy). Expected is nil.
func (p *Projector) TabRowsSorted(target, tab string, expected func(anchor, hash string)) (TabRows, error) {
	var r TabRows
	err := p.tabRows(&r, target, tab, expected)
	return r, err
}

// tabRows fills r's sets and hands each expected row to expected, by
// anchor.
func (p *Projector) tabRows(r *TabRows, target, tab string, expected func(anchor, hash string)) error {
	r.InFlight, r.Held, r.Deleted = map[string]bool{}, map[string]bool{}, map[string]bool{}
	queries := []struct {
		sql  string
		args []any
		fn   func(*sqlite.Stmt)
	}{
		{"SELECT anchor, hash FROM hk_visible_state WHERE tab = ? AND hash != '' ORDER BY anchor", []any{tab},
			func(st *sqlite.Stmt) { expected(st.ColumnText(0), st.ColumnText(1)) }},
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
			return err
		}
	}
	return nil
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
