package projector

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

const outboxCols = `effect_id, spreadsheet, tab, anchor, binding, stream_sequence, op, payload, payload_hash, entity, entity_id,
  state, terminal, coalesce(claim_token, ''), attempts, probes, coalesce(due_at, ''), coalesce(last_code, ''), version,
  coalesce(observed_hash, ''), coalesce(expected_hash, ''), queued_seq`

// outboxColsNoPayload is outboxCols with the payload left out (NULL).
var outboxColsNoPayload = strings.Replace(outboxCols, "op, payload,", "op, NULL,", 1)

// unsettled is the SQL list of the states that hold a row's stream, from
// the claim-order rule (aggregates.EffectState.Settled, I07).
var unsettled = func() string {
	var quoted []string
	for _, s := range aggregates.Unsettled() {
		quoted = append(quoted, "'"+string(s)+"'")
	}
	return "(" + strings.Join(quoted, ", ") + ")"
}()

func scanEffect(st *sqlite.Stmt) (aggregates.Effect, error) {
	r := aggregates.Effect{ID: st.ColumnText(0), StreamSeq: uint64(st.ColumnInt64(5)), Op: events.Op(st.ColumnText(6)),
		Target:      aggregates.Target{Spreadsheet: st.ColumnText(1), Tab: st.ColumnText(2), Anchor: st.ColumnText(3), Binding: st.ColumnText(4)},
		PayloadHash: st.ColumnText(8), Entity: st.ColumnText(9), EntityID: st.ColumnText(10), State: aggregates.EffectState(st.ColumnText(11)),
		Terminal: st.ColumnInt64(12) != 0, ClaimToken: st.ColumnText(13), Attempts: st.ColumnInt64(14), Probes: st.ColumnInt64(15),
		LastCode: st.ColumnText(17), Version: uint64(st.ColumnInt64(18)), ObservedHash: st.ColumnText(19),
		ExpectedHash: st.ColumnText(20), QueuedSeq: uint64(st.ColumnInt64(21))}
	if due := st.ColumnText(16); due != "" {
		r.DueAt, _ = time.Parse(TimeLayout, due)
	}
	if st.ColumnType(7) == sqlite.TypeNull { // a query that leaves the payload out
		return r, nil
	}
	buf := make([]byte, st.ColumnLen(7))
	st.ColumnBytes(7, buf)
	var err error
	r.Values, err = decodePayload(r.ID, buf)
	return r, err
}

// decodePayload decodes effect id's outbox payload (its values; nil for
// none).
func decodePayload(id string, payload []byte) (map[string]any, error) {
	v, err := events.DecodeCanonical(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: outbox payload of %s: %w", ErrReadModelInvalid, id, err)
	}
	m, _ := v.(map[string]any)
	return m, nil
}

func (p *Projector) queryEffects(sqlText string, args ...any) ([]aggregates.Effect, error) {
	return p.queryEffectsInto(nil, sqlText, args...)
}

// queryEffectsInto is queryEffects appending to out (room made for the
// rows expected).
func (p *Projector) queryEffectsInto(out []aggregates.Effect, sqlText string, args ...any) ([]aggregates.Effect, error) {
	err := p.query(sqlText, func(st *sqlite.Stmt) error {
		r, err := scanEffect(st)
		out = append(out, r)
		return err
	}, args...)
	return out, err
}

// Claimable returns up to max effects of spreadsheet that may be claimed
// at now, in queue order: the claimable heads of their rows (I07: every
// earlier stream_sequence of the row settled; the claim-order rule of
// aggregates, in SQL). The pending effects and the recoverable failed ones
// are each read in the order of their index (hk_outbox_state: state,
// spreadsheet, rowid; rows are inserted in log order, so rowid order is
// queue order) and merged: no sort of the whole backlog, and each read
// stops at max heads (one query with both states sorted every pending
// effect on each claim: a temporary b-tree of the backlog).
func (p *Projector) Claimable(spreadsheet string, now time.Time, max int) ([]aggregates.Effect, error) {
	var room []aggregates.Effect
	if n := min(max, 1024); n > 0 {
		room = make([]aggregates.Effect, 0, n)
	}
	due := now.UTC().Format(TimeLayout)
	pending, err := p.queryEffectsInto(room, ClaimableQuery, string(aggregates.EffectPending), spreadsheet, 1, due, int64(max))
	if err != nil {
		return nil, err
	}
	failed, err := p.queryEffects(ClaimableQuery, string(aggregates.EffectFailed), spreadsheet, 0, due, int64(max))
	if err != nil {
		return nil, err
	}
	fx := mergeQueued(pending, failed, max)
	if len(fx) == 0 {
		return nil, nil // none: nil, as before the room was made
	}
	return fx, nil
}

// ClaimableQuery selects the claimable heads of one state (?1) of a
// spreadsheet (?2) whose terminal flag is at most ?3, due at ?4, at most
// ?5 of them, in queue order, by a search of hk_outbox_state without a
// sort (exported for the plan test).
var ClaimableQuery = `SELECT ` + outboxCols + ` FROM hk_outbox AS o
WHERE o.state = ?1 AND o.spreadsheet = ?2 AND o.terminal <= ?3 AND (o.due_at IS NULL OR o.due_at <= ?4)
  AND NOT EXISTS (SELECT 1 FROM hk_outbox AS q WHERE q.binding = o.binding AND q.stream_sequence < o.stream_sequence
                  AND q.state IN ` + unsettled + `)
ORDER BY o.rowid LIMIT ?5`

// mergeQueued merges two lists of effects in queue order into one of at
// most max, in queue order (a, when it has room, is reused).
func mergeQueued(a, b []aggregates.Effect, max int) []aggregates.Effect {
	if len(b) == 0 {
		return a
	}
	out := make([]aggregates.Effect, 0, min(len(a)+len(b), max))
	for len(out) < max && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && a[0].QueuedSeq < b[0].QueuedSeq) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// OutboxTail returns the effect queued last for the row binding (the
// highest stream_sequence), if any: the one a later change may coalesce
// into (I32).
func (p *Projector) OutboxTail(binding string) (aggregates.Effect, bool, error) {
	fx, err := p.queryEffects(`SELECT `+outboxCols+` FROM hk_outbox WHERE binding = ? ORDER BY stream_sequence DESC LIMIT 1`, binding)
	if err != nil || len(fx) == 0 {
		return aggregates.Effect{}, false, err
	}
	return fx[0], true, nil
}

// Due returns up to max effects of spreadsheet in state, due at now (any
// due time when now is zero), oldest first.
func (p *Projector) Due(spreadsheet string, state aggregates.EffectState, now time.Time, max int) ([]aggregates.Effect, error) {
	due := "9999"
	if !now.IsZero() {
		due = now.UTC().Format(TimeLayout)
	}
	return p.queryEffects(`SELECT `+outboxCols+` FROM hk_outbox WHERE spreadsheet = ? AND state = ?
  AND (due_at IS NULL OR due_at <= ?) ORDER BY queued_seq LIMIT ?`, spreadsheet, string(state), due, int64(max))
}

// TerminalHeads returns terminal failed effects that block their row: the
// reconciliation scanner supersedes them (I10).
func (p *Projector) TerminalHeads(spreadsheet string, max int) ([]aggregates.Effect, error) {
	return p.queryEffects(`SELECT `+outboxCols+` FROM hk_outbox WHERE spreadsheet = ? AND state = 'failed' AND terminal = 1
ORDER BY queued_seq LIMIT ?`, spreadsheet, int64(max))
}

// PendingBehind returns the pending effects of spreadsheet on binding
// queued after stream_sequence seq, in order.
func (p *Projector) PendingBehind(spreadsheet, binding string, seq uint64) ([]aggregates.Effect, error) {
	return p.queryEffects(`SELECT `+outboxCols+` FROM hk_outbox WHERE spreadsheet = ? AND binding = ? AND state = 'pending'
AND stream_sequence > ? ORDER BY stream_sequence`, spreadsheet, binding, int64(seq))
}

// RowEffects returns every effect of spreadsheet on binding, in
// stream_sequence order, whatever their state: what the store wrote or
// meant to write to that row (ConflictRowCorrection folds them).
func (p *Projector) RowEffects(spreadsheet, binding string) ([]aggregates.Effect, error) {
	return p.queryEffects(`SELECT `+outboxCols+` FROM hk_outbox WHERE spreadsheet = ? AND binding = ?
ORDER BY stream_sequence`, spreadsheet, binding)
}

// Effect returns one effect by id, and false if unknown.
func (p *Projector) Effect(id string) (aggregates.Effect, bool, error) {
	rows, err := p.queryEffects(`SELECT `+outboxCols+` FROM hk_outbox WHERE effect_id = ?`, id)
	if err != nil || len(rows) == 0 {
		return aggregates.Effect{}, false, err
	}
	return rows[0], true, nil
}

// EffectStates returns the effects with the given ids, keyed by id, in one
// query, WITHOUT their payload (Values is nil): what settling a dispatched
// batch needs. Unknown ids are absent from the map.
func (p *Projector) EffectStates(ids []string) (map[string]aggregates.Effect, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := p.queryEffectsInto(make([]aggregates.Effect, 0, len(ids)), EffectStatesQuery, string(list))
	out := make(map[string]aggregates.Effect, len(rows))
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, err
}

// EffectStatesQuery reads the outbox rows of the effects listed in a JSON
// array (?1): a search of the effect_id index per listed id, driven by
// json_each (an IN list would first copy the ids into a temporary list
// and its bloom filter); an id listed twice reads its row twice
// (EffectStates keys them). Exported for the plan test.
var EffectStatesQuery = `SELECT ` + outboxColsNoPayload + ` FROM json_each(?1) AS j JOIN hk_outbox ON hk_outbox.effect_id = j.value`

// InFlight reports whether a row has an effect that has not settled: the
// row is in transition and its observation waits for the next pass.
func (p *Projector) InFlight(binding string) (bool, error) {
	n := 0
	err := p.each(`SELECT 1 FROM hk_outbox WHERE binding = ? AND state IN `+unsettled+` LIMIT 1`,
		[]any{binding}, func(*sqlite.Stmt) { n++ })
	return n > 0, err
}

// Visible returns the full-row visible hash, revision and the log
// sequence that last set it (an applied effect or an accepted
// observation); ok is false when nothing was applied to the row yet.
func (p *Projector) Visible(binding string) (hash string, revision int64, seq uint64, ok bool, err error) {
	err = p.each("SELECT hash, revision, seq FROM hk_visible_state WHERE binding = ?", []any{binding}, func(st *sqlite.Stmt) {
		hash, revision, seq, ok = st.ColumnText(0), st.ColumnInt64(1), uint64(st.ColumnInt64(2)), true
	})
	return hash, revision, seq, ok, err
}
