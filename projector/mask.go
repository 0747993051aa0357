package projector

import (
	"fmt"
	"maps"

	"github.com/hikoutei/hikoutei-go/events"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Remask rewrites, in one transaction, the rows of entity's records ids
// through Options.Mask, then checkpoints the WAL into read.sqlite and
// truncates it, so that (with secure_delete) no page of the read model's
// files keeps a value the mask replaced: Store.Erase masks this way the
// values an erased subject has in clear (docs/erasure.md). A record
// without a row is skipped. The outbox's writes of those records (their
// payloads, the applied ones kept included) are masked the same way. It
// returns how many values changed; busy is true when a reader kept the
// truncation from completing: the WAL keeps the old pages until the
// background checkpointer, which then owes it, truncates it (tried every
// walSpacing until a try completes).
func (p *Projector) Remask(entity string, ids []string) (n int, busy bool, err error) {
	if _, known := p.tables[entity]; !known {
		return 0, false, fmt.Errorf("%w: entity %s is not in the schema", ErrInvalidSchema, entity)
	}
	if p.mask == nil || len(ids) == 0 {
		return 0, false, nil
	}
	if n, err = p.remaskRows(entity, ids); err != nil {
		return n, false, err
	}
	busy, err = p.truncateOrOwe()
	return n, busy, err
}

// truncateOrOwe truncates the WAL (checkpointTruncate); when a reader
// keeps that from completing, the background checkpointer owes it.
func (p *Projector) truncateOrOwe() (busy bool, err error) {
	if busy, err = p.checkpointTruncate(); busy {
		p.wal.oweTruncate()
	}
	return busy, err
}

func (p *Projector) remaskRows(entity string, ids []string) (n int, err error) {
	end, err := sqlitex.ImmediateTransaction(p.conn)
	if err != nil {
		return 0, err
	}
	defer end(&err)
	for _, id := range ids {
		vals, ok, err := p.EntityValues(entity, id)
		if err != nil {
			return n, err
		}
		if !ok {
			continue
		}
		m, err := p.remaskOutbox(entity, id, vals)
		if err != nil {
			return n, err
		}
		changed := changedFields(vals, p.mask(entity, id, vals))
		if len(changed) > 0 {
			if err := p.writeRow(p.tables[entity], id, changed); err != nil {
				return n, err
			}
		}
		n += m + len(changed)
	}
	return n, nil
}

// changedFields is the fields of masked that differ from vals (a mask
// writes strings: the marker); nil when none does (the common case,
// which allocates nothing).
func changedFields(vals, masked map[string]any) map[string]any {
	var out map[string]any
	for name, v := range masked {
		if s, ok := v.(string); ok && s != vals[name] {
			if out == nil {
				out = map[string]any{}
			}
			out[name] = v
		}
	}
	return out
}

// checkpointTruncate copies the WAL into read.sqlite and truncates it.
func (p *Projector) checkpointTruncate() (busy bool, err error) {
	if p.wal != nil { // not beside a background checkpoint
		p.wal.mu.Lock()
		defer p.wal.mu.Unlock()
	}
	return truncateCheckpoint(p.conn)
}

// truncateCheckpoint copies the WAL into read.sqlite on conn and truncates
// it; busy is true when a writer or a reader kept it from completing.
func truncateCheckpoint(conn *sqlite.Conn) (busy bool, err error) {
	err = sqlitex.ExecuteTransient(conn, "PRAGMA wal_checkpoint(TRUNCATE)", &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error {
			busy = st.ColumnInt(0) != 0
			return nil
		},
	})
	return busy, err
}

// maskPayload is the values of an outbox write of entity's record id
// through Options.Mask; row (nil: unknown) completes them with the
// record's other values (its subject field) for the mask to decide.
func (p *Projector) maskPayload(entity, id string, row, values map[string]any) map[string]any {
	if p.mask == nil || entity == "" || id == "" || len(values) == 0 {
		return values
	}
	all := values
	if row != nil {
		all = make(map[string]any, len(row)+len(values))
		for k, v := range row {
			all[k] = v
		}
		for k, v := range values {
			all[k] = v
		}
	}
	masked := changedFields(all, p.mask(entity, id, all))
	var out map[string]any
	for name, v := range masked {
		if _, ok := values[name]; !ok {
			continue
		}
		if out == nil {
			out = maps.Clone(values) // copied on the first change
		}
		out[name] = v
	}
	if out == nil {
		return values
	}
	return out
}

// remaskOutbox masks the payloads of the outbox's writes of entity's
// record id (row: its values), returning how many changed.
func (p *Projector) remaskOutbox(entity, id string, row map[string]any) (int, error) {
	payloads := map[string]map[string]any{}
	err := p.query(`SELECT effect_id, payload FROM hk_outbox WHERE entity = ? AND entity_id = ?`, func(st *sqlite.Stmt) error {
		buf := make([]byte, st.ColumnLen(1))
		st.ColumnBytes(1, buf)
		v, err := events.DecodeCanonical(buf)
		if err != nil {
			return fmt.Errorf("%w: outbox payload of %s: %w", ErrReadModelInvalid, st.ColumnText(0), err)
		}
		if vals, ok := v.(map[string]any); ok {
			payloads[st.ColumnText(0)] = vals
		}
		return nil
	}, entity, id)
	if err != nil {
		return 0, err
	}
	n := 0
	for effect, vals := range payloads {
		masked := p.maskPayload(entity, id, row, vals)
		if len(changedFields(vals, masked)) == 0 {
			continue
		}
		enc, err := events.EncodeCanonical(masked)
		if err != nil {
			return n, err
		}
		if err := p.exec(`UPDATE hk_outbox SET payload = ? WHERE effect_id = ?`, enc, effect); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
