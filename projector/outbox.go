package projector

import (
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// applyEffect projects the outbox: effect.queued inserts the effect, every
// later transition moves its state. It reports whether it handled pl.
func (p *Projector) applyEffect(e *events.Event, pl events.Payload) (bool, error) {
	switch x := pl.(type) {
	case events.EffectQueued:
		return true, p.effectQueued(e, x)
	case events.EffectCoalesced:
		return true, p.effectCoalesced(e, x)
	case events.EffectClaimed:
		return true, p.effectSet(e, x.EffectID, aggregates.EffectProcessing, "claim_token = ?, attempts = ?, probes = 0, due_at = NULL, last_code = NULL",
			x.ClaimToken, x.Attempt)
	case events.EffectApplied:
		if err := p.appliedSet(e, x); err != nil {
			return true, err
		}
		if err := p.unwritableCleared(x); err != nil {
			return true, err
		}
		return true, p.visibleApplied(e, x)
	case events.EffectValueUnwritable:
		return true, p.unwritableRecorded(e, x)
	case events.EffectUncertain:
		return true, p.effectSet(e, x.EffectID, aggregates.EffectUncertain, "due_at = ?, last_code = ?", timeText(x.ProbeAt), x.Code)
	case events.EffectProbeScheduled:
		return true, p.effectSet(e, x.EffectID, aggregates.EffectUncertain, "due_at = ?, probes = ?", timeText(x.ProbeAt), x.Probes)
	case events.EffectFailed:
		return true, p.effectSet(e, x.EffectID, aggregates.EffectFailed, "terminal = ?, due_at = ?, last_code = ?, observed_hash = ?",
			x.Terminal, timeText(x.RetryAt), x.Code, x.ObservedHash)
	case events.EffectSuperseded:
		return true, p.effectSet(e, x.EffectID, aggregates.EffectSuperseded, "superseded_by = ?", x.By)
	case events.EffectConflict:
		return true, p.effectSet(e, x.EffectID, aggregates.EffectConflict, "last_code = ?, observed_hash = ?", x.Code, x.ObservedHash)
	case events.EffectBlocked:
		return true, p.effectSet(e, x.EffectID, aggregates.EffectBlocked, "last_code = ?", x.Code)
	}
	return false, nil
}

// timeText renders a time as the stored TEXT form, or nil for the zero time.
func timeText(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(TimeLayout)
}

// queuedSQL inserts an effect.queued's outbox row.
const queuedSQL = `INSERT INTO hk_outbox (effect_id, spreadsheet, tab, anchor, binding, stream_sequence, op, payload,
  payload_hash, entity, entity_id, queued_seq, updated_seq, expected_hash, state, version, queued_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, ''), ?, 0, ?)`

// effectQueued inserts the effect's outbox row, its values' canonical
// bytes encoded into a buffer kept for the next one and each column bound
// as its type (a commit of new rows inserts one per row and tab).
func (p *Projector) effectQueued(e *events.Event, x events.EffectQueued) error {
	var values any
	if x.Values != nil {
		values = p.maskPayload(x.Entity, x.ID, nil, x.Values)
	}
	enc, err := events.AppendCanonical(p.payloadBuf[:0], values)
	if err != nil {
		return err
	}
	p.payloadBuf = enc
	st, err := p.conn.Prepare(queuedSQL)
	if err != nil {
		return err
	}
	for i, s := range [...]string{x.EffectID, x.Spreadsheet, x.Tab, x.Anchor, x.Binding} {
		st.BindText(i+1, s)
	}
	st.BindInt64(6, int64(x.StreamSequence))
	st.BindText(7, string(x.Op))
	st.BindBytes(8, enc) // copied before it returns
	st.BindText(9, x.PayloadHash)
	st.BindText(10, x.Entity)
	st.BindText(11, x.ID)
	st.BindInt64(12, int64(e.Seq))
	st.BindInt64(13, int64(e.Seq))
	st.BindText(14, x.ExpectedHash)
	st.BindText(15, string(aggregates.EffectPending))
	BindValue(st, 16, timeText(e.At))
	if err := run(st); err != nil {
		return err
	}
	p.moveCount("", string(aggregates.EffectPending), 1)
	return nil
}

// effectCoalesced rewrites a pending effect's write to the merged one
// (I32); its state and place stay.
func (p *Projector) effectCoalesced(e *events.Event, x events.EffectCoalesced) error {
	var values any
	if x.Values != nil {
		values = x.Values
	}
	enc, err := events.EncodeCanonical(values)
	if err != nil {
		return err
	}
	return p.exec(`UPDATE hk_outbox SET op = ?, payload = ?, payload_hash = ?, version = ?, updated_seq = ? WHERE effect_id = ?`,
		string(x.Op), enc, x.PayloadHash, int64(e.Version), int64(e.Seq), x.EffectID)
}

// effectSet moves an effect to state and sets extra columns (set is a
// fixed SQL fragment with ? placeholders for args). An item of a batch
// event (on a dispatch stream) leaves the effect's stream version as it is.
func (p *Projector) effectSet(e *events.Event, id string, state aggregates.EffectState, set string, args ...any) error {
	from, err := p.stateOf(id) // for the kept counts ("": no such effect, nothing moves)
	if err != nil {
		return err
	}
	if events.IsDispatchStream(e.Stream) {
		err = p.exec("UPDATE hk_outbox SET state = ?, updated_seq = ?, "+set+" WHERE effect_id = ?",
			append(append([]any{string(state), int64(e.Seq)}, args...), id)...)
	} else {
		err = p.exec("UPDATE hk_outbox SET state = ?, version = ?, updated_seq = ?, "+set+" WHERE effect_id = ?",
			append(append([]any{string(state), int64(e.Version), int64(e.Seq)}, args...), id)...)
	}
	if err == nil && from != "" {
		p.moveCount(from, string(state), 1)
	}
	return err
}

// applyBatch projects a batch settle event as its per-effect events, in
// order (events.Batch).
func (p *Projector) applyBatch(e *events.Event, b events.Batch) error {
	if events.IsDispatchStream(e.Stream) && !p.itemWise { // set-wise where the items' order cannot show (outbox_batch.go)
		switch x := b.(type) {
		case events.EffectsClaimed:
			return p.claimedSet(e, x)
		case events.EffectsApplied:
			if handled, err := p.appliedBatch(e, x); handled || err != nil {
				return err
			}
		}
	}
	for _, pl := range b.Each() {
		if _, err := p.applyEffect(e, pl); err != nil {
			return err
		}
		if err := p.afterEffect(e, pl); err != nil {
			return err
		}
	}
	return nil
}

// appliedRow is the outbox row an effect.applied moved to applied: its
// binding, tab and anchor, which the statements after the move read
// (unwritableCleared, visibleApplied, shownAfterWrite) instead of looking
// the row up again. found = false: no such effect (nothing to record).
type appliedRow struct {
	id, binding, tab, anchor string
	found                    bool
}

// appliedSet moves an effect to applied (as effectSet does) and keeps its
// row's binding, tab and anchor in p.applied. (One lookup by effect id
// here spares the statements after it theirs; an UPDATE … RETURNING
// costs more than both: SQLite builds an ephemeral table for it.)
func (p *Projector) appliedSet(e *events.Event, x events.EffectApplied) error {
	if err := p.effectSet(e, x.EffectID, aggregates.EffectApplied, "written_hash = ?, due_at = NULL", x.WrittenHash); err != nil {
		return err
	}
	p.applied = appliedRow{id: x.EffectID}
	return p.query(`SELECT binding, tab, anchor FROM hk_outbox WHERE effect_id = ?`, func(st *sqlite.Stmt) error {
		p.applied.binding, p.applied.tab, p.applied.anchor, p.applied.found = st.ColumnText(0), st.ColumnText(1), st.ColumnText(2), true
		return nil
	}, x.EffectID)
}

// visibleApplied records the row's visible hash after an applied effect
// (p.applied: the row appliedSet moved; none, nothing).
func (p *Projector) visibleApplied(e *events.Event, x events.EffectApplied) error {
	if !p.applied.found {
		return nil
	}
	return p.exec(`INSERT INTO hk_visible_state (binding, tab, anchor, revision, hash, effect_id, seq) VALUES (?, ?, ?, 1, ?, ?, ?)
ON CONFLICT (binding) DO UPDATE SET revision = revision + 1, hash = excluded.hash, effect_id = excluded.effect_id, seq = excluded.seq`,
		p.applied.binding, p.applied.tab, p.applied.anchor, x.WrittenHash, x.EffectID, int64(e.Seq))
}
