package projector

import (
	"time"

	"zombiezen.com/go/sqlite"
)

// TabExpectation is what a poll compares an Input tab's values against to
// certify it unchanged without a metadata read:
//   - Rows: anchor → full-row visible hash the outbox (or the last accepted
//     observation) left on the row;
//   - Evidence: row hashes already recorded as evidence (active quarantine
//     or an active candidate's candidate-time row), which need no new read;
//   - Missing: anchors whose deletion is already recorded as evidence;
//   - Flagged: the tab's suspected mass deletion is already recorded.
type TabExpectation struct {
	Rows     map[string]string
	Evidence map[string]bool
	Missing  map[string]bool
	Flagged  bool
}

// TabExpectation reads the expectation of one Input tab.
func (p *Projector) TabExpectation(tab string) (TabExpectation, error) {
	x := TabExpectation{Rows: map[string]string{}, Evidence: map[string]bool{}, Missing: map[string]bool{}}
	err := p.each("SELECT anchor, hash FROM hk_visible_state WHERE tab = ? AND hash != ''", []any{tab}, func(st *sqlite.Stmt) {
		x.Rows[st.ColumnText(0)] = st.ColumnText(1)
	})
	if err != nil {
		return x, err
	}
	err = p.each("SELECT anchor, row_hash, reason FROM hk_quarantine WHERE tab = ? AND active = 1", []any{tab}, func(st *sqlite.Stmt) {
		switch st.ColumnText(2) {
		case ReasonRowDeleted:
			x.Missing[st.ColumnText(0)] = true
		case ReasonMassDeletion:
			x.Flagged = true
		default:
			x.Evidence[st.ColumnText(1)] = true
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

// Evidence reasons the projector itself interprets.
const (
	ReasonRowDeleted   = "row_deleted"
	ReasonMassDeletion = "suspected_mass_deletion"
)

func (p *Projector) each(q string, args []any, fn func(*sqlite.Stmt)) error {
	st := p.conn.Prep(q)
	bindAll(st, args...)
	defer st.Reset()
	for {
		ok, err := st.Step()
		if err != nil || !ok {
			return err
		}
		fn(st)
	}
}

// SheetField is one Input-row field's sheet-side state
// (hk_sheet_field_state): what the sheet last showed, and the active
// candidate with its epoch and candidate-time row evidence.
type SheetField struct {
	ShownHash      string
	ShownKnown     bool
	CandidateHash  string // "" = none
	CandidateEpoch int64
	CandidateRow   string // candidate-time full-row visible hash
	CandidateRev   int64  // candidate-time full-row visible revision
	ConflictID     string
}

// SheetFields returns the field states of one Input-row binding.
func (p *Projector) SheetFields(binding string) (map[string]SheetField, error) {
	out := map[string]SheetField{}
	err := p.each(`SELECT field, coalesce(shown_hash, ''), shown_hash IS NOT NULL, candidate_hash, candidate_epoch, candidate_row_hash,
  candidate_visible_revision, conflict_id FROM hk_sheet_field_state WHERE binding = ?`, []any{binding}, func(st *sqlite.Stmt) {
		out[st.ColumnText(0)] = SheetField{ShownHash: st.ColumnText(1), ShownKnown: st.ColumnInt64(2) != 0, CandidateHash: st.ColumnText(3),
			CandidateEpoch: st.ColumnInt64(4), CandidateRow: st.ColumnText(5), CandidateRev: st.ColumnInt64(6), ConflictID: st.ColumnText(7)}
	})
	return out, err
}

// ConflictRow is one row of hk_conflicts.
type ConflictRow struct {
	ID, Entity, EntityID, Field, Tab, Anchor, Binding string
	State                                             string // open | resolved
	CanonicalRevision                                 uint64
	CandidateHash                                     string
	CandidateEpoch                                    int64
	VisibleRevision                                   int64
	VisibleHash                                       string // "" = legacy (I14)
	SystemValue, SheetValue                           string
	ReconcileEffect, ReconcileState                   string
	OpenedSeq, ResolvedSeq                            uint64
	OpenedAt                                          time.Time
	Resolution                                        string
}

const conflictCols = `conflict_id, entity, id, field, tab, anchor, binding, state, canonical_revision, coalesce(candidate_hash, ''),
  coalesce(candidate_epoch, 0), coalesce(visible_revision, 0), coalesce(visible_hash, ''), coalesce(system_value, ''),
  coalesce(sheet_value, ''), coalesce(reconcile_effect, ''), coalesce(reconcile_state, ''), opened_seq, coalesce(resolved_seq, 0),
  opened_at, coalesce(resolution, '')`

func scanConflict(st *sqlite.Stmt) ConflictRow {
	c := ConflictRow{ID: st.ColumnText(0), Entity: st.ColumnText(1), EntityID: st.ColumnText(2), Field: st.ColumnText(3),
		Tab: st.ColumnText(4), Anchor: st.ColumnText(5), Binding: st.ColumnText(6), State: st.ColumnText(7),
		CanonicalRevision: uint64(st.ColumnInt64(8)), CandidateHash: st.ColumnText(9), CandidateEpoch: st.ColumnInt64(10),
		VisibleRevision: st.ColumnInt64(11), VisibleHash: st.ColumnText(12), SystemValue: st.ColumnText(13), SheetValue: st.ColumnText(14),
		ReconcileEffect: st.ColumnText(15), ReconcileState: st.ColumnText(16), OpenedSeq: uint64(st.ColumnInt64(17)),
		ResolvedSeq: uint64(st.ColumnInt64(18)), Resolution: st.ColumnText(20)}
	c.OpenedAt, _ = time.Parse(TimeLayout, st.ColumnText(19))
	return c
}

// Conflicts returns conflicts matching where (a fixed SQL condition with ?
// placeholders for args), oldest first.
func (p *Projector) Conflicts(where string, args ...any) ([]ConflictRow, error) {
	var out []ConflictRow
	err := p.each("SELECT "+conflictCols+" FROM hk_conflicts WHERE "+where+" ORDER BY opened_seq", args, func(st *sqlite.Stmt) {
		out = append(out, scanConflict(st))
	})
	return out, err
}

// Conflict returns one conflict by id.
func (p *Projector) Conflict(id string) (ConflictRow, bool, error) {
	rows, err := p.Conflicts("conflict_id = ?", id)
	if err != nil || len(rows) == 0 {
		return ConflictRow{}, false, err
	}
	return rows[0], true, nil
}

// InFlight reports whether a binding has an effect that has not settled
// (pending, processing, delivery_uncertain or failed): the row is in
// transition and its observation waits for the next pass.
func (p *Projector) InFlight(binding string) (bool, error) {
	n := 0
	err := p.each(`SELECT 1 FROM hk_outbox WHERE binding = ? AND state IN ('pending', 'processing', 'delivery_uncertain', 'failed') LIMIT 1`,
		[]any{binding}, func(*sqlite.Stmt) { n++ })
	return n > 0, err
}

// QuarantineRow is one active piece of evidence of hk_quarantine.
type QuarantineRow struct {
	ID, Tab, Anchor, RowHash, Reason, Column string
	SheetRow                                 int64
}

// ActiveQuarantine returns the active evidence of a tab by id.
func (p *Projector) ActiveQuarantine(tab string) (map[string]QuarantineRow, error) {
	out := map[string]QuarantineRow{}
	err := p.each(`SELECT quarantine_id, tab, anchor, row_hash, reason, column_name, sheet_row FROM hk_quarantine WHERE tab = ? AND active = 1`,
		[]any{tab}, func(st *sqlite.Stmt) {
			q := QuarantineRow{ID: st.ColumnText(0), Tab: st.ColumnText(1), Anchor: st.ColumnText(2), RowHash: st.ColumnText(3),
				Reason: st.ColumnText(4), Column: st.ColumnText(5), SheetRow: st.ColumnInt64(6)}
			out[q.ID] = q
		})
	return out, err
}

// VisibleSeq calls fn with a binding's visible hash, revision and the log
// sequence that last set it (an applied effect or an accepted
// observation); fn is not called when the binding has no visible state.
func (p *Projector) VisibleSeq(binding string, fn func(hash string, revision int64, seq uint64)) error {
	return p.each("SELECT hash, revision, seq FROM hk_visible_state WHERE binding = ?", []any{binding}, func(st *sqlite.Stmt) {
		fn(st.ColumnText(0), st.ColumnInt64(1), uint64(st.ColumnInt64(2)))
	})
}
