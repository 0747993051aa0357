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
	// Newer anchors' visible state was written after the caller's base
	// (the read compared may predate that write).
	Newer map[string]bool
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

// TabRowsOf reads TabRows of tab for target, for a read at checkpoint
// base.
func (p *Projector) TabRowsOf(target, tab string, base uint64) (TabRows, error) {
	r := TabRows{Expected: map[string]string{}, InFlight: map[string]bool{}, Newer: map[string]bool{}, Held: map[string]bool{},
		Deleted: map[string]bool{}}
	queries := []struct {
		sql  string
		args []any
		fn   func(*sqlite.Stmt)
	}{
		{"SELECT anchor, hash, seq FROM hk_visible_state WHERE tab = ? AND (hash != '' OR seq > ?)", []any{tab, int64(base)},
			func(st *sqlite.Stmt) { r.visible(st.ColumnText(0), st.ColumnText(1), uint64(st.ColumnInt64(2)), base) }},
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

// Pending reports whether the tab may not show anchor's last write yet:
// an effect of it is in flight, or it was written after the base.
func (r TabRows) Pending(anchor string) bool { return r.InFlight[anchor] || r.Newer[anchor] }

func (r *TabRows) visible(anchor, hash string, seq, base uint64) {
	if hash != "" {
		r.Expected[anchor] = hash
	}
	if seq > base {
		r.Newer[anchor] = true
	}
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
