package projector

import (
	"encoding/json"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// TabSyncFacts is what the read model knows of one tab's sync: the input
// of sync health (the engine's SyncHealth), read from local state only.
type TabSyncFacts struct {
	// Pending counts the effects that have not settled (pending,
	// processing, delivery_uncertain, failed).
	Pending int64
	// OldestQueued is when the oldest of them was queued (zero: none, or
	// queued before the read model recorded queue times).
	OldestQueued time.Time
	// Codes counts the last failure codes of failed and
	// delivery_uncertain effects (e.g. sheet_tab_missing).
	Codes map[string]int64
	// MassDeletion: the tab has active suspected_mass_deletion evidence.
	MassDeletion bool
	// Lost counts the rows whose write was lost (it met a person's edit
	// and was not made; nothing set the row since) that no open conflict
	// nor active quarantine holds: the store knows they differ until the
	// next poll decides them.
	Lost int64
	// Dropped counts the rows whose last write was superseded with no
	// correction (its tab was no longer declared: nothing was written)
	// and that no later write reached: the row still shows what it
	// showed before that write (e.g. a removed record's row), unless
	// the write was of a removed record whose row was gone. Only a
	// reconciliation pass over the tab knows more (the engine counts
	// them until one compared the tab).
	Dropped int64
	// Migrated counts the rows a layout migration left differing from
	// canonical state (sheet.layout_migrated rows[].differs) that nothing
	// wrote or accepted since and that no open conflict, active candidate
	// or quarantine holds; a row that shows the store's last write is
	// left out while a write of it is in flight. Only a reconciliation
	// pass over the tab knows more (the engine counts them until one
	// compared the tab).
	Migrated int64
	// Retired lists the retired columns the tab's last layout migration
	// left on it ("<field> (retired)": people's values never imported,
	// kept outside the layout).
	Retired []string
}

// SyncFacts reads the sync facts of spreadsheet (the sync target's key)
// by tab, through conn (any connection to a read model: the store's read
// pool, or a tool's read-only connection). Indexed queries; cell
// payloads are never read.
func SyncFacts(conn *sqlite.Conn, spreadsheet string) (map[string]*TabSyncFacts, error) {
	out := map[string]*TabSyncFacts{}
	tab := func(name string) *TabSyncFacts {
		if out[name] == nil {
			out[name] = &TabSyncFacts{Codes: map[string]int64{}}
		}
		return out[name]
	}
	err := sqlitex.Execute(conn, `SELECT tab, count(*), coalesce(min(queued_at), '') FROM hk_outbox
WHERE state IN `+unsettled+` AND spreadsheet = ? GROUP BY tab`, &sqlitex.ExecOptions{
		Args: []any{spreadsheet},
		ResultFunc: func(st *sqlite.Stmt) error {
			f := tab(st.ColumnText(0))
			f.Pending = st.ColumnInt64(1)
			f.OldestQueued, _ = time.Parse(TimeLayout, st.ColumnText(2))
			return nil
		}})
	if err != nil {
		return nil, err
	}
	err = sqlitex.Execute(conn, `SELECT tab, last_code, count(*) FROM hk_outbox
WHERE state IN (?, ?) AND spreadsheet = ? AND coalesce(last_code, '') != '' GROUP BY tab, last_code`, &sqlitex.ExecOptions{
		Args: []any{string(aggregates.EffectFailed), string(aggregates.EffectUncertain), spreadsheet},
		ResultFunc: func(st *sqlite.Stmt) error {
			tab(st.ColumnText(0)).Codes[st.ColumnText(1)] = st.ColumnInt64(2)
			return nil
		}})
	if err != nil {
		return nil, err
	}
	err = sqlitex.Execute(conn, `SELECT DISTINCT tab FROM hk_quarantine WHERE active = 1 AND reason = ?`, &sqlitex.ExecOptions{
		Args: []any{aggregates.ReasonMassDeletion},
		ResultFunc: func(st *sqlite.Stmt) error {
			tab(st.ColumnText(0)).MassDeletion = true
			return nil
		}})
	if err != nil {
		return nil, err
	}
	if err := countLost(conn, spreadsheet, tab); err != nil {
		return nil, err
	}
	if err := countByTab(conn, droppedRows, spreadsheet, func(tabName string, n int64) { tab(tabName).Dropped = n }); err != nil {
		return nil, err
	}
	if err := countByTab(conn, migratedRows, spreadsheet, func(tabName string, n int64) { tab(tabName).Migrated = n }); err != nil {
		return nil, err
	}
	layouts, err := SheetLayouts(conn, spreadsheet)
	for name, l := range layouts {
		if len(l.Retired) > 0 {
			tab(name).Retired = l.Retired
		}
	}
	return out, err
}

// countLost counts each tab's lost rows (TabSyncFacts.Lost) into tab:
// those no open conflict nor active quarantine holds, the rows whose
// resolution write was blocked included (blockedCandidate).
func countLost(conn *sqlite.Conn, spreadsheet string, tab func(string) *TabSyncFacts) error {
	rows, err := lostRows(conn, blockedCandidate, `AND o.spreadsheet = ?
  AND NOT EXISTS (SELECT 1 FROM hk_conflicts c WHERE c.binding = o.binding AND c.state = 'open')
  AND NOT EXISTS (SELECT 1 FROM hk_quarantine q WHERE q.tab = o.tab AND q.anchor = o.anchor AND q.active = 1)`, spreadsheet)
	for name, anchors := range rows {
		tab(name).Lost = int64(len(anchors))
	}
	return err
}

// countByTab runs query (rows of tab and a count, for spreadsheet) and
// hands each row to set.
func countByTab(conn *sqlite.Conn, query, spreadsheet string, set func(tab string, n int64)) error {
	return sqlitex.Execute(conn, query, &sqlitex.ExecOptions{
		Args: []any{spreadsheet},
		ResultFunc: func(st *sqlite.Stmt) error {
			set(st.ColumnText(0), st.ColumnInt64(1))
			return nil
		}})
}

// droppedRows counts TabSyncFacts.Dropped by tab: superseded effects no
// correction replaced (few: failed writes) with no write of their row
// applied after them, of a live record, or of a removed record whose row
// the store believes shown (a delete that found no row showed nothing).
const droppedRows = `SELECT o.tab, count(DISTINCT o.binding) FROM hk_outbox o
WHERE o.state = '` + string(aggregates.EffectSuperseded) + `' AND o.spreadsheet = ? AND coalesce(o.superseded_by, '') = ''
  AND NOT EXISTS (SELECT 1 FROM hk_outbox l WHERE l.binding = o.binding AND l.stream_sequence > o.stream_sequence
    AND l.state = '` + string(aggregates.EffectApplied) + `')
  AND (EXISTS (SELECT 1 FROM hk_entity_state s WHERE s.entity = o.entity AND s.id = o.entity_id AND s.removed = 0)
    OR (coalesce(o.last_code, '') != '` + aggregates.CodeAnchorNotFound + `'
      AND EXISTS (SELECT 1 FROM hk_visible_state v WHERE v.binding = o.binding AND v.hash != '')))
GROUP BY o.tab`

// migratedRows counts TabSyncFacts.Migrated by tab: it reads
// hk_migrated_rows (the rows migrations left differing: few) and, for
// each, indexed look-ups.
var migratedRows = `SELECT m.tab, count(*) FROM hk_migrated_rows m
JOIN hk_visible_state v ON v.tab = m.tab AND v.anchor = m.anchor AND v.seq = m.seq
WHERE NOT EXISTS (SELECT 1 FROM hk_conflicts c WHERE c.binding = v.binding AND c.state = 'open')
  AND NOT EXISTS (SELECT 1 FROM hk_sheet_field_state f WHERE f.binding = v.binding AND f.candidate_hash != '')
  AND NOT EXISTS (SELECT 1 FROM hk_quarantine q WHERE q.tab = m.tab AND q.anchor = m.anchor AND q.active = 1
    AND q.reason != '` + aggregates.ReasonRowDeleted + `')
  AND NOT (m.stale = 1 AND EXISTS (SELECT 1 FROM hk_outbox o WHERE o.tab = m.tab AND o.anchor = m.anchor
    AND o.spreadsheet = ? AND o.state IN ` + unsettled + `))
GROUP BY m.tab`

// SheetLayouts reads the layouts recorded for the tabs of spreadsheet
// (the sync target's key) by their last migration, by tab, through conn.
func SheetLayouts(conn *sqlite.Conn, spreadsheet string) (map[string]SheetLayout, error) {
	prefix := layoutKey(spreadsheet, "")
	out := map[string]SheetLayout{}
	err := sqlitex.Execute(conn, `SELECT key, value FROM hk_meta WHERE key >= ? AND key < ? ORDER BY key`, &sqlitex.ExecOptions{
		Args: []any{prefix, prefix + "\xff"},
		ResultFunc: func(st *sqlite.Stmt) error {
			var l SheetLayout
			if err := json.Unmarshal([]byte(st.ColumnText(1)), &l); err != nil {
				return err
			}
			out[strings.TrimPrefix(st.ColumnText(0), prefix)] = l
			return nil
		}})
	return out, err
}

// SyncTargets lists the sync target the store serves now (the last
// sync.target_bound), or, for a store that never recorded one, the keys
// the outbox holds effects for, sorted. Spreadsheets switched away from
// are not listed: nothing is written to them any more.
func SyncTargets(conn *sqlite.Conn) ([]string, error) {
	var out []string
	err := sqlitex.Execute(conn, `SELECT value FROM hk_meta WHERE key = ?`, &sqlitex.ExecOptions{
		Args:       []any{metaSyncTarget},
		ResultFunc: func(st *sqlite.Stmt) error { out = append(out, st.ColumnText(0)); return nil }})
	if err != nil || len(out) > 0 {
		return out, err
	}
	err = sqlitex.Execute(conn, `SELECT DISTINCT spreadsheet FROM hk_outbox ORDER BY spreadsheet`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error { out = append(out, st.ColumnText(0)); return nil }})
	return out, err
}
