package projector

import (
	"encoding/json"
	"strconv"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// A batch settle event (events.Batch) stands for its per-effect events in
// order, and applyBatch can project it so: five statements per applied
// effect, one per claimed one. The set-wise paths below write the same
// rows with a few statements per batch, the effects listed as a JSON
// object read by json_each. They are taken only where the items' statements
// touch disjoint rows, so their order cannot show: distinct effect ids
// (the batch's map keys), distinct row bindings, no unwritable markers on
// those rows. Anything else goes item by item.
//
// The statements are OR FAIL: a statement of many rows would otherwise
// keep a statement journal (to undo its own rows on an error), which costs
// allocations and system calls per batch; an error fails the whole
// projection transaction (Apply rolls it back), so nothing is kept either
// way.

// claimedSet projects an effect.batch_claimed on a dispatch stream: every
// listed effect moves to processing under the claim (as effectSet does
// for each item; an effect.claimed has no inbound follow-up).
func (p *Projector) claimedSet(e *events.Event, x events.EffectsClaimed) error {
	if len(x.Attempts) == 0 {
		return nil // no item: nothing to move (and json_each of null is one row)
	}
	list := jsonObject(x.Attempts, appendInt)
	if err := p.claimedStates(list); err != nil {
		return err
	}
	return p.exec(`UPDATE OR FAIL hk_outbox SET state = ?, updated_seq = ?, claim_token = ?, attempts = j.value, probes = 0,
  due_at = NULL, last_code = NULL FROM json_each(?) AS j WHERE hk_outbox.effect_id = j.key`,
		string(aggregates.EffectProcessing), int64(e.Seq), x.ClaimToken, list)
}

// batchRow is a listed effect's outbox row: its row binding, tab and
// anchor, its state before the batch (for the kept counts), its rowid
// (read in the same transaction, so the statements after the read find
// the row by rowid, not by a search of the effect_id index), and whether
// its row has a visible state yet.
type batchRow struct {
	binding, tab, anchor, state string
	rowid                       int64
	shown                       bool
}

// appliedBatch projects an effect.batch_applied on a dispatch stream set
// by set when its items touch disjoint rows (see above); handled = false
// leaves it to the per-item path, nothing written.
func (p *Projector) appliedBatch(e *events.Event, x events.EffectsApplied) (handled bool, err error) {
	if len(x.Written) == 0 {
		return true, nil // no item: nothing to settle
	}
	list := jsonObject(x.Written, appendJSONString)
	rows, ok, err := p.disjointRows(list)
	if err != nil || !ok {
		return false, err
	}
	byRowid := hashesByRowid(x.Written, rows, nil)
	seq := int64(e.Seq)
	if err := p.exec(AppliedBatchUpdate, string(aggregates.EffectApplied), seq, byRowid); err != nil {
		return true, err
	}
	for _, r := range rows { // each moved to applied by the update
		p.moveCount(r.state, string(aggregates.EffectApplied), 1)
	}
	if err := p.visibleAfterBatch(seq, x.Written, rows); err != nil {
		return true, err
	}
	if err := p.reconciledSet(list); err != nil {
		return true, err
	}
	return true, p.shownAfterBatch(e, x, rows)
}

// AppliedBatchUpdate moves the listed outbox rows to applied: ?3 is a JSON
// object of rowid → written hash (hashesByRowid), each row found by its
// rowid (exported for the plan test).
const AppliedBatchUpdate = `UPDATE OR FAIL hk_outbox SET state = ?1, updated_seq = ?2, written_hash = j.value, due_at = NULL
FROM json_each(?3) AS j WHERE hk_outbox.rowid = CAST(j.key AS INTEGER)`

// visibleAfterBatch records the visible hash of each row an applied batch
// wrote: an insert of the rows that had none, an update of those that had
// one, each found by its outbox rowid. (One upsert of both costs more: a
// statement that may update what it inserts keeps a statement journal,
// spilled to a temporary file once a batch's pages pass 64 KiB.)
func (p *Projector) visibleAfterBatch(seq int64, written map[string]string, rows map[string]batchRow) error {
	for _, shown := range [...]bool{false, true} {
		list := hashesByRowid(written, rows, &shown)
		if list == "{}" {
			continue
		}
		q := AppliedBatchVisible
		if shown {
			q = AppliedBatchShown
		}
		if err := p.exec(q, seq, list); err != nil {
			return err
		}
	}
	return nil
}

// AppliedBatchVisible records the visible hash of each listed row that had
// none: ?2 is a JSON object of rowid → written hash (hashesByRowid), the
// outbox row found by its rowid (exported for the plan test).
const AppliedBatchVisible = `INSERT OR FAIL INTO hk_visible_state (binding, tab, anchor, revision, hash, effect_id, seq)
SELECT o.binding, o.tab, o.anchor, 1, j.value, o.effect_id, ?1 FROM json_each(?2) AS j JOIN hk_outbox AS o ON o.rowid = CAST(j.key AS INTEGER)`

// AppliedBatchShown records the visible hash of each listed row that had
// one (?2 as in AppliedBatchVisible): its revision rises by one (exported
// for the plan test).
const AppliedBatchShown = `UPDATE OR FAIL hk_visible_state SET revision = revision + 1, hash = x.hash, effect_id = x.effect_id, seq = ?1
FROM (SELECT o.binding, j.value AS hash, o.effect_id FROM json_each(?2) AS j JOIN hk_outbox AS o ON o.rowid = CAST(j.key AS INTEGER)) AS x
WHERE hk_visible_state.binding = x.binding`

// hashesByRowid lists the written hashes of the effects found in rows as
// a JSON object keyed by their outbox rowids (an effect without a row is
// left out, as the join by effect id left it out); with shown, only those
// whose row's visible state is there (*shown) or not.
func hashesByRowid(written map[string]string, rows map[string]batchRow, shown *bool) string {
	buf := make([]byte, 0, 48*len(rows)+2)
	buf = append(buf, '{')
	for id, hash := range written {
		if r, found := rows[id]; found && (shown == nil || r.shown == *shown) {
			if len(buf) > 1 {
				buf = append(buf, ',')
			}
			buf = append(buf, '"')
			buf = strconv.AppendInt(buf, r.rowid, 10)
			buf = append(buf, `":`...)
			buf = appendJSONString(buf, hash)
		}
	}
	return string(append(buf, '}'))
}

// appendInt appends n in decimal.
func appendInt(buf []byte, n int64) []byte { return strconv.AppendInt(buf, n, 10) }

// jsonObject writes m as a JSON object, each value by appendValue, its
// members in no particular order (the set-wise statements read it by
// json_each and do not depend on it; encoding/json would sort the keys,
// through reflection, for every batch event).
func jsonObject[V any](m map[string]V, appendValue func([]byte, V) []byte) string {
	buf := make([]byte, 0, 48*len(m)+2)
	buf = append(buf, '{')
	for k, v := range m {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		buf = appendValue(buf, v)
	}
	return string(append(buf, '}'))
}

// ReconcilingQuery finds whether any conflict names a row reconcile effect,
// by a search of hk_conflicts_reconcile (exported for the plan test).
const ReconcilingQuery = `SELECT 1 FROM hk_conflicts WHERE reconcile_effect IS NOT NULL LIMIT 1`

// reconciledSet marks applied the row reconciles (acknowledge_system) among
// the effects in list. Most stores never had one: a search of the
// hk_conflicts_reconcile index finds none and the statement (which reads
// the whole list) is left out.
func (p *Projector) reconciledSet(list string) error {
	some := false
	err := p.each(ReconcilingQuery, nil, func(*sqlite.Stmt) { some = true })
	if err != nil || !some {
		return err
	}
	return p.exec(`UPDATE OR FAIL hk_conflicts SET reconcile_state = ? WHERE reconcile_effect IN (SELECT key FROM json_each(?))`,
		string(aggregates.EffectApplied), list)
}

// DisjointRowsQuery reads the outbox rows of the effects listed in a JSON
// object keyed by effect id (?1): each row's binding, tab, anchor, state
// and rowid, whether its binding has unwritable markers and whether it
// has a visible state (exported for the plan test).
const DisjointRowsQuery = `SELECT o.effect_id, o.binding, o.tab, o.anchor,
  EXISTS (SELECT 1 FROM hk_unwritable AS u WHERE u.binding = o.binding), o.rowid, o.state,
  EXISTS (SELECT 1 FROM hk_visible_state AS v WHERE v.binding = o.binding)
FROM json_each(?1) AS j JOIN hk_outbox AS o ON o.effect_id = j.key`

// disjointRows reads the outbox rows of the effects in list (a JSON
// object keyed by effect id); ok = false when two share a row binding or
// a row has unwritable markers.
func (p *Projector) disjointRows(list string) (map[string]batchRow, bool, error) {
	rows := map[string]batchRow{}
	seen := map[string]bool{}
	ok := true
	err := p.each(DisjointRowsQuery, []any{list}, func(st *sqlite.Stmt) {
		b := st.ColumnText(1)
		if seen[b] || st.ColumnInt64(4) != 0 {
			ok = false
		}
		seen[b] = true
		rows[st.ColumnText(0)] = batchRow{binding: b, tab: st.ColumnText(2), anchor: st.ColumnText(3), state: st.ColumnText(6),
			rowid: st.ColumnInt64(5), shown: st.ColumnInt64(7) != 0}
	})
	return rows, ok && err == nil, err
}

// shownAfterBatch records, in item order, what the batch's writes on
// Input tabs show (shownAfterWrite for each such item), their payloads
// read in one query by rowid rather than one search of the effect_id
// index each.
func (p *Projector) shownAfterBatch(e *events.Event, x events.EffectsApplied, rows map[string]batchRow) error {
	if len(p.inputTabs) == 0 {
		return nil
	}
	defer func() { p.applied = appliedRow{} }()
	var rowids []int64
	for id := range x.Written {
		if r, found := rows[id]; found && p.inputTabs[r.tab] {
			rowids = append(rowids, r.rowid)
		}
	}
	if len(rowids) == 0 {
		return nil
	}
	queued, err := p.queuedPayloads(rowids)
	if err != nil {
		return err
	}
	for _, pl := range x.Each() {
		a := pl.(events.EffectApplied)
		r, found := rows[a.EffectID]
		q, known := queued[r.rowid]
		if !found || !known || !p.inputTabs[r.tab] {
			continue
		}
		if err := p.shownAfterBatchItem(e, a, r, q); err != nil {
			return err
		}
	}
	return nil
}

// shownAfterBatchItem records what one applied write of a batch shows on
// its Input row r, q its write as queued (shownAfterWrite, without its
// read of the outbox row).
func (p *Projector) shownAfterBatchItem(e *events.Event, a events.EffectApplied, r batchRow, q queuedPayload) error {
	if q.op == events.OpDelete {
		p.applied = appliedRow{id: a.EffectID, binding: r.binding, tab: r.tab, anchor: r.anchor, found: true}
		return p.shownAfterWrite(e, a.EffectID, a.WrittenHash)
	}
	values, err := q.values(a.EffectID)
	if err != nil {
		return err
	}
	return p.shownValues(r.binding, r.tab, r.anchor, q.entity, q.queuedSeq, values, e.Seq)
}

// queuedPayload is what an outbox row holds of its write as queued.
type queuedPayload struct {
	op        events.Op
	entity    string
	queuedSeq uint64
	payload   []byte
}

// values decodes the payload (as scanEffect does).
func (q queuedPayload) values(id string) (map[string]any, error) { return decodePayload(id, q.payload) }

// QueuedPayloadsQuery reads the op, entity, queued_seq and payload of the
// outbox rows listed by rowid in a JSON array (?1), each found by its rowid
// (exported for the plan test).
const QueuedPayloadsQuery = `SELECT o.rowid, o.op, o.entity, o.queued_seq, o.payload
FROM json_each(?1) AS j JOIN hk_outbox AS o ON o.rowid = j.value`

// queuedPayloads reads the writes as queued of the outbox rows with the
// given rowids, by rowid.
func (p *Projector) queuedPayloads(rowids []int64) (map[int64]queuedPayload, error) {
	list, err := json.Marshal(rowids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]queuedPayload, len(rowids))
	err = p.each(QueuedPayloadsQuery, []any{string(list)}, func(st *sqlite.Stmt) {
		buf := make([]byte, st.ColumnLen(4))
		st.ColumnBytes(4, buf)
		out[st.ColumnInt64(0)] = queuedPayload{op: events.Op(st.ColumnText(1)), entity: st.ColumnText(2),
			queuedSeq: uint64(st.ColumnInt64(3)), payload: buf}
	})
	return out, err
}
