package projector

import (
	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// The outbox's counts by state (hk_outbox_counts, schema 8) are kept by
// the statements that insert an outbox row or move its state: each adds
// the moves it made to p.moved (the state each row left and the one it
// entered), and applyAll writes them, one row per state moved, in the
// same transaction before it commits. A failed transaction drops them
// with everything else it wrote. (SQLite triggers kept them as well, and
// cost more than the outbox's own writes: a trigger program per row, and
// two passes of every multi-row UPDATE; see bench/README.md.)

// outboxCountsTable keeps the number of outbox rows in each state.
const outboxCountsTable = "hk_outbox_counts"

// OutboxCountsQuery reads the kept count of each state that holds an
// effect (exported for the plan test).
const OutboxCountsQuery = `SELECT state, n FROM hk_outbox_counts WHERE n != 0`

// OutboxCountQuery counts the outbox rows of each state: every effect ever
// queued, for a read model older than hk_outbox_counts (schema 8), and
// the tests' reference for the kept counts.
const OutboxCountQuery = `SELECT state, count(*) FROM hk_outbox GROUP BY state`

// outboxCountsAdd adds ?2 to the kept count of state ?1.
const outboxCountsAdd = `INSERT INTO hk_outbox_counts (state, n) VALUES (?1, ?2) ON CONFLICT (state) DO UPDATE SET n = n + ?2`

// OutboxCounts returns the number of effects in every state (zero
// included): the kept counts, a read of a few rows whatever the store's
// history.
func (p *Projector) OutboxCounts() (map[aggregates.EffectState]int64, error) {
	return outboxCounts(p.conn, OutboxCountsQuery)
}

// ReadOutboxCounts is OutboxCounts on a connection of its own (status
// reads the read model read-only): the kept counts, or the count of every
// row when the read model predates them (not migrated yet).
func ReadOutboxCounts(conn *sqlite.Conn) (map[aggregates.EffectState]int64, error) {
	kept := false
	err := queryConn(conn, `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '`+outboxCountsTable+`'`,
		func(*sqlite.Stmt) error { kept = true; return nil })
	if err != nil {
		return nil, err
	}
	if !kept {
		return outboxCounts(conn, OutboxCountQuery)
	}
	return outboxCounts(conn, OutboxCountsQuery)
}

// outboxCounts runs q (rows of state and count) into a map of every
// state, zero included.
func outboxCounts(conn *sqlite.Conn, q string) (map[aggregates.EffectState]int64, error) {
	out := make(map[aggregates.EffectState]int64, len(aggregates.EffectStates))
	for _, s := range aggregates.EffectStates {
		out[s] = 0
	}
	err := queryConn(conn, q, func(st *sqlite.Stmt) error {
		out[aggregates.EffectState(st.ColumnText(0))] = st.ColumnInt64(1)
		return nil
	})
	return out, err
}

// moveCount records that n outbox rows left state from ("" for none: an
// insert) and entered state to.
func (p *Projector) moveCount(from, to string, n int64) {
	if n == 0 || from == to {
		return
	}
	if p.moved == nil {
		p.moved = map[string]int64{}
	}
	if from != "" {
		p.moved[from] -= n
	}
	p.moved[to] += n
}

// writeCounts adds the moves recorded since the last call to the kept
// counts (in the projection's transaction).
func (p *Projector) writeCounts() error {
	for state, n := range p.moved {
		if n != 0 {
			if err := p.exec(outboxCountsAdd, state, n); err != nil {
				return err
			}
		}
	}
	clear(p.moved)
	return nil
}

// stateOf returns the state of effect id's outbox row ("" for none).
func (p *Projector) stateOf(id string) (string, error) {
	state := ""
	err := p.query(`SELECT state FROM hk_outbox WHERE effect_id = ?`, func(st *sqlite.Stmt) error {
		state = st.ColumnText(0)
		return nil
	}, id)
	return state, err
}

// claimedStates records the moves of a batch claim of the effects listed
// in list (a JSON object keyed by effect id) to processing: read before
// the claim's update, which moves every listed row found.
func (p *Projector) claimedStates(list string) error {
	return p.query(`SELECT o.state, count(*) FROM json_each(?) AS j JOIN hk_outbox AS o ON o.effect_id = j.key GROUP BY o.state`,
		func(st *sqlite.Stmt) error {
			p.moveCount(st.ColumnText(0), string(aggregates.EffectProcessing), st.ColumnInt64(1))
			return nil
		}, list)
}
