package projector

import (
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
)

// OutboxRow is one effect as projected into hk_outbox.
type OutboxRow struct {
	ID          string
	Spreadsheet string
	Tab         string
	Anchor      string
	Binding     string
	StreamSeq   uint64
	Op          string
	Values      map[string]any // decoded canonical payload (nil for deletes)
	PayloadHash string
	Entity      string
	EntityID    string
	State       string
	Terminal    bool
	ClaimToken  string
	Attempts    int64
	Probes      int64
	DueAt       time.Time // zero = due now
	LastCode    string
	Version     uint64
	// ObservedHash is the row hash a guard failure found (correction evidence).
	ObservedHash string
	// ExpectedHash, on a correction effect, is the evidence its write is
	// guarded by instead of the binding's visible hash.
	ExpectedHash string
}

const outboxCols = `effect_id, spreadsheet, tab, anchor, binding, stream_sequence, op, payload, payload_hash, entity, entity_id,
  state, terminal, coalesce(claim_token, ''), attempts, probes, coalesce(due_at, ''), coalesce(last_code, ''), version,
  coalesce(observed_hash, ''), coalesce(expected_hash, '')`

func scanOutbox(st *sqlite.Stmt) (OutboxRow, error) {
	r := OutboxRow{ID: st.ColumnText(0), Spreadsheet: st.ColumnText(1), Tab: st.ColumnText(2), Anchor: st.ColumnText(3),
		Binding: st.ColumnText(4), StreamSeq: uint64(st.ColumnInt64(5)), Op: st.ColumnText(6), PayloadHash: st.ColumnText(8),
		Entity: st.ColumnText(9), EntityID: st.ColumnText(10), State: st.ColumnText(11), Terminal: st.ColumnInt64(12) != 0,
		ClaimToken: st.ColumnText(13), Attempts: st.ColumnInt64(14), Probes: st.ColumnInt64(15), LastCode: st.ColumnText(17),
		Version: uint64(st.ColumnInt64(18)), ObservedHash: st.ColumnText(19), ExpectedHash: st.ColumnText(20)}
	if st.ColumnType(7) == sqlite.TypeNull { // a query that leaves the payload out
		return r, scanDue(st, &r)
	}
	buf := make([]byte, st.ColumnLen(7))
	st.ColumnBytes(7, buf)
	v, err := events.DecodeCanonical(buf)
	if err != nil {
		return r, fmt.Errorf("%w: outbox payload of %s: %w", ErrReadModelInvalid, r.ID, err)
	}
	r.Values, _ = v.(map[string]any)
	return r, scanDue(st, &r)
}

func scanDue(st *sqlite.Stmt, r *OutboxRow) error {
	if due := st.ColumnText(16); due != "" {
		r.DueAt, _ = time.Parse(TimeLayout, due)
	}
	return nil
}

func (p *Projector) queryOutbox(sqlText string, args ...any) ([]OutboxRow, error) {
	var out []OutboxRow
	err := p.query(sqlText, func(st *sqlite.Stmt) error {
		r, err := scanOutbox(st)
		out = append(out, r)
		return err
	}, args...)
	return out, err
}

// settledStates are the states after which the next stream_sequence of the
// same binding may be claimed (I07).
const settledStates = `('applied', 'superseded', 'conflict', 'blocked_candidate')`

// Claimable returns up to max effects of spreadsheet that may be claimed at
// now: pending or recoverably failed, due, and the head of their binding
// (every earlier stream_sequence settled, I07), in queue order.
func (p *Projector) Claimable(spreadsheet string, now time.Time, max int) ([]OutboxRow, error) {
	return p.queryOutbox(`SELECT `+outboxCols+` FROM hk_outbox AS o
WHERE o.spreadsheet = ? AND (o.state = 'pending' OR (o.state = 'failed' AND o.terminal = 0))
  AND (o.due_at IS NULL OR o.due_at <= ?)
  AND NOT EXISTS (SELECT 1 FROM hk_outbox AS q WHERE q.binding = o.binding AND q.stream_sequence < o.stream_sequence
                  AND q.state NOT IN `+settledStates+`)
ORDER BY o.queued_seq LIMIT ?`, spreadsheet, now.UTC().Format(TimeLayout), int64(max))
}

// InState returns up to max effects of spreadsheet in state, due at now
// (any due time when now is zero), oldest first.
func (p *Projector) InState(spreadsheet, state string, now time.Time, max int) ([]OutboxRow, error) {
	due := "9999"
	if !now.IsZero() {
		due = now.UTC().Format(TimeLayout)
	}
	return p.queryOutbox(`SELECT `+outboxCols+` FROM hk_outbox WHERE spreadsheet = ? AND state = ?
  AND (due_at IS NULL OR due_at <= ?) ORDER BY queued_seq LIMIT ?`, spreadsheet, state, due, int64(max))
}

// TerminalHeads returns terminal failed effects that block their binding:
// the reconciliation scanner supersedes them (I10).
func (p *Projector) TerminalHeads(spreadsheet string, max int) ([]OutboxRow, error) {
	return p.queryOutbox(`SELECT `+outboxCols+` FROM hk_outbox WHERE spreadsheet = ? AND state = 'failed' AND terminal = 1
ORDER BY queued_seq LIMIT ?`, spreadsheet, int64(max))
}

// Effect returns one effect by id, and false if unknown.
func (p *Projector) Effect(id string) (OutboxRow, bool, error) {
	rows, err := p.queryOutbox(`SELECT `+outboxCols+` FROM hk_outbox WHERE effect_id = ?`, id)
	if err != nil || len(rows) == 0 {
		return OutboxRow{}, false, err
	}
	return rows[0], true, nil
}

// Visible returns the full-row visible hash and revision of a binding after
// its last applied effect; ok is false when nothing was applied yet.
func (p *Projector) Visible(binding string) (hash string, revision int64, ok bool, err error) {
	err = p.query("SELECT hash, revision FROM hk_visible_state WHERE binding = ?", func(st *sqlite.Stmt) error {
		hash, revision, ok = st.ColumnText(0), st.ColumnInt64(1), true
		return nil
	}, binding)
	return hash, revision, ok, err
}

// OutboxCounts returns the number of effects per state.
func (p *Projector) OutboxCounts() (map[string]int64, error) {
	out := map[string]int64{}
	err := p.query("SELECT state, count(*) FROM hk_outbox GROUP BY state", func(st *sqlite.Stmt) error {
		out[st.ColumnText(0)] = st.ColumnInt64(1)
		return nil
	})
	return out, err
}
