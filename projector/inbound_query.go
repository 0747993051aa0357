package projector

import (
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// TabExpectation reads what one Input tab is expected to show (see
// aggregates.TabExpectation).
func (p *Projector) TabExpectation(tab string) (aggregates.TabExpectation, error) {
	n := 0
	err := p.each("SELECT count(*) FROM hk_visible_state WHERE tab = ? AND hash != ''", []any{tab}, func(st *sqlite.Stmt) {
		n = st.ColumnInt(0)
	})
	if err != nil {
		return aggregates.TabExpectation{}, err
	}
	// Maps sized once: growing them row by row allocates about twice.
	x := aggregates.TabExpectation{Rows: make(map[string]string, n), Evidence: map[string]bool{}, Missing: map[string]bool{},
		Since: make(map[string]uint64, n), InFlight: map[string]bool{}}
	// Only rows an applied effect (or an accepted observation) set are
	// expected: a row whose append is still pending, processing or
	// uncertain has no visible state yet.
	err = p.each("SELECT anchor, hash, seq FROM hk_visible_state WHERE tab = ? AND hash != ''", []any{tab}, func(st *sqlite.Stmt) {
		a := st.ColumnText(0) // one string for both maps
		x.Rows[a], x.Since[a] = st.ColumnText(1), uint64(st.ColumnInt64(2))
	})
	if err != nil {
		return x, err
	}
	// "+tab": search by state (few effects are unsettled), never scan the
	// tab's whole outbox history.
	err = p.each("SELECT DISTINCT anchor FROM hk_outbox WHERE state IN "+unsettled+" AND +tab = ?", []any{tab}, func(st *sqlite.Stmt) {
		x.InFlight[st.ColumnText(0)] = true
	})
	if err != nil {
		return x, err
	}
	if x.Lost, err = p.lostWrites(tab); err != nil {
		return x, err
	}
	err = p.each("SELECT anchor, row_hash, reason FROM hk_quarantine WHERE tab = ? AND active = 1", []any{tab}, func(st *sqlite.Stmt) {
		switch st.ColumnText(2) {
		case aggregates.ReasonRowDeleted:
			x.Missing[st.ColumnText(0)] = true
		case aggregates.ReasonMassDeletion:
			x.Flagged = true
		default:
			x.Evidence[st.ColumnText(1)] = true
			if st.ColumnText(0) != "" && st.ColumnText(1) != "" {
				if x.Quarantined == nil {
					x.Quarantined = map[string]bool{}
				}
				x.Quarantined[st.ColumnText(1)] = true
			}
		}
	})
	if err != nil {
		return x, err
	}
	err = p.each("SELECT candidate_row_hash FROM hk_sheet_field_state WHERE tab = ? AND candidate_hash != ''", []any{tab}, func(st *sqlite.Stmt) {
		x.Evidence[st.ColumnText(0)] = true
	})
	return x, err
}

func (p *Projector) each(q string, args []any, fn func(*sqlite.Stmt)) error {
	return p.query(q, func(st *sqlite.Stmt) error { fn(st); return nil }, args...)
}

// SheetFields returns the field states of one Input row.
func (p *Projector) SheetFields(binding string) (map[string]aggregates.SheetField, error) {
	out := map[string]aggregates.SheetField{}
	err := p.each(`SELECT field, coalesce(shown_hash, ''), shown_hash IS NOT NULL, candidate_hash, candidate_epoch, candidate_row_hash,
  candidate_visible_revision, conflict_id FROM hk_sheet_field_state WHERE binding = ?`, []any{binding}, func(st *sqlite.Stmt) {
		out[st.ColumnText(0)] = aggregates.SheetField{ShownHash: st.ColumnText(1), ShownKnown: st.ColumnInt64(2) != 0,
			CandidateHash: st.ColumnText(3), CandidateEpoch: st.ColumnInt64(4), CandidateRow: st.ColumnText(5),
			CandidateRev: st.ColumnInt64(6), ConflictID: st.ColumnText(7)}
	})
	return out, err
}

const conflictCols = `conflict_id, entity, id, field, tab, anchor, binding, state, canonical_revision, coalesce(candidate_hash, ''),
  coalesce(candidate_epoch, 0), coalesce(visible_revision, 0), coalesce(visible_hash, ''), coalesce(system_value, ''),
  coalesce(sheet_value, ''), coalesce(reconcile_effect, ''), coalesce(reconcile_state, ''), opened_seq, coalesce(resolved_seq, 0),
  opened_at, coalesce(resolution, '')`

func scanConflict(st *sqlite.Stmt) aggregates.Conflict {
	c := aggregates.Conflict{ID: st.ColumnText(0), Entity: st.ColumnText(1), EntityID: st.ColumnText(2), Field: st.ColumnText(3),
		Tab: st.ColumnText(4), Anchor: st.ColumnText(5), Binding: st.ColumnText(6), Status: aggregates.ConflictStatus(st.ColumnText(7)),
		CanonicalRevision: uint64(st.ColumnInt64(8)), CandidateHash: st.ColumnText(9), CandidateEpoch: st.ColumnInt64(10),
		VisibleRevision: st.ColumnInt64(11), VisibleHash: st.ColumnText(12), SystemValue: st.ColumnText(13), SheetValue: st.ColumnText(14),
		ReconcileEffect: st.ColumnText(15), ReconcileState: st.ColumnText(16), OpenedSeq: uint64(st.ColumnInt64(17)),
		ResolvedSeq: uint64(st.ColumnInt64(18)), Resolution: events.Resolution(st.ColumnText(20))}
	c.OpenedAt, _ = time.Parse(TimeLayout, st.ColumnText(19))
	return c
}

func (p *Projector) conflicts(where string, args ...any) ([]aggregates.Conflict, error) {
	var out []aggregates.Conflict
	err := p.each("SELECT "+conflictCols+" FROM hk_conflicts WHERE "+where+" ORDER BY opened_seq", args, func(st *sqlite.Stmt) {
		out = append(out, scanConflict(st))
	})
	return out, err
}

// Conflict returns one conflict by id.
func (p *Projector) Conflict(id string) (aggregates.Conflict, bool, error) {
	rows, err := p.conflicts("conflict_id = ?", id)
	if err != nil || len(rows) == 0 {
		return aggregates.Conflict{}, false, err
	}
	return rows[0], true, nil
}

// ConflictsIn returns the conflicts in status ("" = all), oldest first.
func (p *Projector) ConflictsIn(status aggregates.ConflictStatus) ([]aggregates.Conflict, error) {
	if status == "" {
		return p.conflicts("1 = 1")
	}
	return p.conflicts("state = ?", string(status))
}

// OpenConflictsFor returns the open conflicts of one entity.
func (p *Projector) OpenConflictsFor(entity, id string) ([]aggregates.Conflict, error) {
	return p.conflicts("entity = ? AND id = ? AND state = 'open'", entity, id)
}

// AnyOpenConflictQuery finds whether any conflict is open, by a search of
// the partial index hk_conflicts_open (exported for the plan test).
const AnyOpenConflictQuery = `SELECT 1 FROM hk_conflicts WHERE state = 'open' LIMIT 1`

// AnyOpenConflict reports whether any conflict is open.
func (p *Projector) AnyOpenConflict() (bool, error) {
	some := false
	err := p.each(AnyOpenConflictQuery, nil, func(*sqlite.Stmt) { some = true })
	return some, err
}

// OpenConflictCount counts the open conflicts.
func (p *Projector) OpenConflictCount() (int, error) {
	n := 0
	err := p.each("SELECT count(*) FROM hk_conflicts WHERE state = 'open'", nil, func(st *sqlite.Stmt) { n = st.ColumnInt(0) })
	return n, err
}

// OpenConflictsOn counts the open conflicts of one row.
func (p *Projector) OpenConflictsOn(binding string) (int, error) {
	n := 0
	err := p.each("SELECT count(*) FROM hk_conflicts WHERE binding = ? AND state = 'open'", []any{binding}, func(st *sqlite.Stmt) {
		n = st.ColumnInt(0)
	})
	return n, err
}

// IsReconcile reports whether effect id is the row reconcile of an
// acknowledge_system command.
func (p *Projector) IsReconcile(id string) (bool, error) {
	n := 0
	err := p.each("SELECT count(*) FROM hk_conflicts WHERE reconcile_effect = ?", []any{id}, func(st *sqlite.Stmt) { n = st.ColumnInt(0) })
	return n > 0, err
}

// ActiveQuarantine returns the active evidence of a tab by id.
func (p *Projector) ActiveQuarantine(tab string) (map[string]aggregates.Quarantine, error) {
	out := map[string]aggregates.Quarantine{}
	err := p.each(`SELECT quarantine_id, tab, anchor, row_hash, reason, column_name, sheet_row FROM hk_quarantine WHERE tab = ? AND active = 1`,
		[]any{tab}, func(st *sqlite.Stmt) {
			q := aggregates.Quarantine{ID: st.ColumnText(0), Tab: st.ColumnText(1), Anchor: st.ColumnText(2), RowHash: st.ColumnText(3),
				Reason: st.ColumnText(4), Column: st.ColumnText(5), SheetRow: st.ColumnInt64(6)}
			out[q.ID] = q
		})
	return out, err
}

// EvidenceRecord is one hk_evidence row: what an inbound or sync event
// recorded about one cell or row (never a cell value).
type EvidenceRecord struct {
	Seq                                          uint64
	Kind                                         events.Type
	Tab, Anchor, Entity, ID, Field, Reason, Note string
}

// Evidence returns the evidence rows recorded by events of kind, in log
// order (e.g. events.TypeSyncWriteMisdirected: one per overwritten cell).
func (p *Projector) Evidence(kind events.Type) ([]EvidenceRecord, error) {
	var out []EvidenceRecord
	err := p.each(`SELECT seq, kind, coalesce(tab, ''), coalesce(anchor, ''), coalesce(entity, ''), coalesce(id, ''), coalesce(field, ''),
  reason, coalesce(detail, '') FROM hk_evidence WHERE kind = ? ORDER BY seq, n`, []any{string(kind)}, func(st *sqlite.Stmt) {
		out = append(out, EvidenceRecord{Seq: uint64(st.ColumnInt64(0)), Kind: events.Type(st.ColumnText(1)), Tab: st.ColumnText(2),
			Anchor: st.ColumnText(3), Entity: st.ColumnText(4), ID: st.ColumnText(5), Field: st.ColumnText(6), Reason: st.ColumnText(7),
			Note: st.ColumnText(8)})
	})
	return out, err
}

// CandidateValue returns the active candidate value of a field of an
// Input row (ok false when there is none, or it was recorded before the
// read model held candidate values).
func (p *Projector) CandidateValue(binding, field string) (v any, ok bool, err error) {
	var raw []byte
	err = p.each(`SELECT candidate_value FROM hk_sheet_field_state WHERE binding = ? AND field = ? AND candidate_hash != ''
  AND candidate_value IS NOT NULL`, []any{binding, field}, func(st *sqlite.Stmt) {
		raw, ok = make([]byte, st.ColumnLen(0)), true
		st.ColumnBytes(0, raw)
	})
	if err != nil || !ok {
		return nil, false, err
	}
	if v, err = events.DecodeCanonical(raw); err != nil {
		return nil, false, fmt.Errorf("%w: candidate value of %s: %w", ErrReadModelInvalid, field, err)
	}
	return v, true, nil
}

// Command returns the first outcome of a resolution command id.
func (p *Projector) Command(id string) (rec aggregates.CommandRecord, ok bool, err error) {
	err = p.each(`SELECT command_id, conflict_id, resolution, canonical_revision, candidate_hash, candidate_epoch, outcome, reason,
  reconcile_effect FROM hk_commands WHERE command_id = ?`, []any{id}, func(st *sqlite.Stmt) {
		ok = true
		rec = aggregates.CommandRecord{CommandID: st.ColumnText(0), ConflictID: st.ColumnText(1),
			Resolution: events.Resolution(st.ColumnText(2)), CanonicalRevision: uint64(st.ColumnInt64(3)), CandidateHash: st.ColumnText(4),
			CandidateEpoch: st.ColumnInt64(5), Outcome: aggregates.AckOutcome(st.ColumnText(6)), Reason: st.ColumnText(7),
			ReconcileEffect: st.ColumnText(8)}
	})
	return rec, ok, err
}

// lostWrites are the rows of tab whose write was lost (see lostRows);
// nil when there is none.
func (p *Projector) lostWrites(tab string) (map[string]bool, error) {
	rows, err := lostRows(p.conn, lostCandidate, `AND +o.tab = ?`, tab)
	return rows[tab], err
}
