package projector

import (
	"encoding/json"
	"slices"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// SheetLayout is what the read model knows of a tab's layout after its
// last migration (sheet.layout_migrated): the header it shows and the
// retired columns on it.
type SheetLayout struct {
	Header  []string `json:"header"`
	Retired []string `json:"retired,omitempty"`
	Seq     uint64   `json:"seq"`
}

// layoutKey is the hk_meta key of a tab's layout.
func layoutKey(target, tab string) string { return "sheet_layout:" + target + "/" + tab }

// layoutMigrated projects sheet.layout_migrated: each row's new visible
// hash; the row hashes recorded as it showed before (a candidate's
// candidate-time row, an open conflict's, the guard of a write queued
// before) follow the row to the hash the migration left on it; the
// renamed columns' shown state; and the tab's layout.
func (p *Projector) layoutMigrated(e *events.Event, x events.SheetLayoutMigrated) error {
	vis := p.conn.Prep(`UPDATE hk_visible_state SET hash = ?, revision = revision + 1, effect_id = '', seq = ? WHERE tab = ? AND anchor = ?`)
	for _, r := range x.Rows {
		bindAll(vis, r.Hash, int64(e.Seq), x.Tab, r.Anchor)
		if err := run(vis); err != nil {
			return err
		}
		if err := p.followRow(x.Tab, r); err != nil {
			return err
		}
		if err := p.shownMigrated(x.Tab, r, e.Seq); err != nil {
			return err
		}
		if err := p.migratedRow(x.Tab, r, e.Seq); err != nil {
			return err
		}
	}
	if err := p.renameShown(x.Tab, x.Renamed); err != nil {
		return err
	}
	// Writes of the tab that failed on its old header are due again.
	due := p.conn.Prep(`UPDATE hk_outbox SET due_at = NULL WHERE tab = ? AND spreadsheet = ? AND state = ? AND terminal = 0`)
	bindAll(due, x.Tab, x.Target, string(aggregates.EffectFailed))
	if err := run(due); err != nil {
		return err
	}
	return p.setLayout(e.Seq, x)
}

// followRow moves the hashes recorded for a migrated row as it showed
// before to the hash the migration left on it.
func (p *Projector) followRow(tab string, r events.MigratedRow) error {
	after := r.After
	if after == "" {
		after = r.Hash
	}
	if r.Before == "" || r.Before == after {
		return nil
	}
	for _, q := range []string{
		`UPDATE hk_sheet_field_state SET candidate_row_hash = ? WHERE tab = ? AND anchor = ? AND candidate_row_hash = ?`,
		`UPDATE hk_conflicts SET visible_hash = ? WHERE tab = ? AND anchor = ? AND state = 'open' AND visible_hash = ?`,
		`UPDATE hk_outbox SET expected_hash = ? WHERE tab = ? AND anchor = ? AND expected_hash = ? AND state IN ` + unsettled,
	} {
		stmt := p.conn.Prep(q)
		bindAll(stmt, after, tab, r.Anchor, r.Before)
		if err := run(stmt); err != nil {
			return err
		}
	}
	return nil
}

// shownMigrated records what the cells a migration wrote on an Input row
// show.
func (p *Projector) shownMigrated(tab string, r events.MigratedRow, seq uint64) error {
	stmt := p.conn.Prep(`INSERT INTO hk_sheet_field_state (binding, field, tab, anchor, shown_hash, shown_seq)
SELECT binding, ?, tab, anchor, ?, ? FROM hk_visible_state WHERE tab = ? AND anchor = ?
ON CONFLICT (binding, field) DO UPDATE SET shown_hash = excluded.shown_hash, shown_seq = excluded.shown_seq`)
	for _, f := range sortedFields(r.Shown) {
		bindAll(stmt, f, r.Shown[f], int64(seq), tab, r.Anchor)
		if err := run(stmt); err != nil {
			return err
		}
	}
	return nil
}

// migratedRow records whether the migration left the row differing from
// canonical state (hk_migrated_rows): sync health counts it until the
// row's visible state moves on.
func (p *Projector) migratedRow(tab string, r events.MigratedRow, seq uint64) error {
	if !r.Differs {
		del := p.conn.Prep(`DELETE FROM hk_migrated_rows WHERE tab = ? AND anchor = ?`)
		bindAll(del, tab, r.Anchor)
		return run(del)
	}
	stale := int64(0)
	if r.After == "" {
		stale = 1
	}
	ins := p.conn.Prep(`INSERT OR REPLACE INTO hk_migrated_rows (tab, anchor, stale, seq) VALUES (?, ?, ?, ?)`)
	bindAll(ins, tab, r.Anchor, stale, int64(seq))
	return run(ins)
}

// renameShown moves the per-field sheet state of renamed columns to their
// new names.
func (p *Projector) renameShown(tab string, renamed []events.ColumnRename) error {
	mv := p.conn.Prep(`UPDATE OR IGNORE hk_sheet_field_state SET field = ? WHERE tab = ? AND field = ?`)
	rm := p.conn.Prep(`DELETE FROM hk_sheet_field_state WHERE tab = ? AND field = ?`)
	for _, r := range renamed {
		bindAll(mv, r.To, tab, r.From)
		if err := run(mv); err != nil {
			return err
		}
		bindAll(rm, tab, r.From)
		if err := run(rm); err != nil {
			return err
		}
	}
	return nil
}

// setLayout records the tab's header and its retired columns: those the
// migration retired and those retired before that the header still shows.
func (p *Projector) setLayout(seq uint64, x events.SheetLayoutMigrated) error {
	l := SheetLayout{Seq: seq}
	for _, c := range x.NewHeader {
		l.Header = append(l.Header, c.Header)
	}
	prev, err := p.SheetLayoutOf(x.Target, x.Tab)
	if err != nil {
		return err
	}
	for _, r := range prev.Retired {
		if slices.Contains(l.Header, r) {
			l.Retired = append(l.Retired, r)
		}
	}
	for _, r := range x.Retired {
		if !slices.Contains(l.Retired, r.Header) {
			l.Retired = append(l.Retired, r.Header)
		}
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return p.setMeta(layoutKey(x.Target, x.Tab), string(b))
}

// SheetLayoutOf returns the layout recorded for tab of target (zero when
// the tab was never migrated).
func (p *Projector) SheetLayoutOf(target, tab string) (SheetLayout, error) {
	var l SheetLayout
	v, err := p.MetaValue(layoutKey(target, tab))
	if err != nil || v == "" {
		return l, err
	}
	return l, json.Unmarshal([]byte(v), &l)
}

// TabSending reports whether an effect of spreadsheet on tab is being
// sent or its outcome is unknown (processing, delivery_uncertain): a
// layout migration of the tab waits for them to settle.
func (p *Projector) TabSending(spreadsheet, tab string) (bool, error) {
	n := 0
	err := p.each(`SELECT 1 FROM hk_outbox WHERE tab = ? AND spreadsheet = ? AND state IN (?, ?) LIMIT 1`,
		[]any{tab, spreadsheet, string(aggregates.EffectProcessing), string(aggregates.EffectUncertain)}, func(*sqlite.Stmt) { n++ })
	return n > 0, err
}

// ShownBefore reports whether the tab showed a row the store wrote or
// accepted before log sequence seq.
func (p *Projector) ShownBefore(tab string, seq uint64) (bool, error) {
	return TabShownBefore(p.conn, tab, seq)
}

// TabShownBefore is ShownBefore through conn (any connection to a read
// model).
func TabShownBefore(conn *sqlite.Conn, tab string, seq uint64) (bool, error) {
	n := 0
	err := sqlitex.Execute(conn, `SELECT 1 FROM hk_visible_state WHERE tab = ? AND seq < ? AND hash != '' LIMIT 1`,
		&sqlitex.ExecOptions{Args: []any{tab, int64(seq)}, ResultFunc: func(*sqlite.Stmt) error { n++; return nil }})
	return n > 0, err
}
