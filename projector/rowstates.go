package projector

import (
	"encoding/json"
	"fmt"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// Bulk reads of row state: what EntityValues, EntityState, Visible,
// InFlight, SheetFields and OpenConflictsOn read of one row, read for a
// window of rows with one statement each (the ids bound as one JSON
// array), so a pass over a large tab (a safety full scan, anti-entropy,
// the surplus-row cleanup during a backfill) costs a few statements a
// window, not six a row. Each gives, row by row, what the single-row
// read gives.

// RowRef names one Input row: its anchor (the entity id) and its binding.
type RowRef struct{ Anchor, Binding string }

// RowStates returns the read-model part of aggregates.RowState of each
// row of entity, by anchor: visible state, canonical values and state,
// effects in flight, sheet-side field state and open conflicts.
func (p *Projector) RowStates(entity string, rows []RowRef) (map[string]aggregates.RowState, error) {
	anchors, bindings := make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		anchors[i], bindings[i] = r.Anchor, r.Binding
	}
	vals, err := p.EntityValuesOf(entity, anchors)
	if err != nil {
		return nil, err
	}
	states, err := p.entityStatesOf(entity, anchors)
	if err != nil {
		return nil, err
	}
	part, err := p.bindingStatesOf(bindings)
	if err != nil {
		return nil, err
	}
	out := make(map[string]aggregates.RowState, len(rows))
	for _, r := range rows {
		rs := part[r.Binding]
		rs.Binding = r.Binding
		rs.Canonical = vals[r.Anchor]
		rs.Exists = rs.Canonical != nil
		rs.Entity = states[r.Anchor]
		if rs.Entity.Fields == nil {
			rs.Entity = entityRow{Fields: map[string]FieldRow{}}.state() // never seen
		}
		if rs.Sheet == nil {
			rs.Sheet = map[string]aggregates.SheetField{}
		}
		out[r.Anchor] = rs
	}
	return out, nil
}

// idList is ids as the JSON array a statement reads with json_each.
func idList(ids []string) string {
	b, _ := json.Marshal(ids) // strings always marshal
	return string(b)
}

// EntityValuesOf is EntityValues of many ids of entity: the values of
// each id that exists, by id (an id absent from the map does not exist).
func (p *Projector) EntityValuesOf(entity string, ids []string) (map[string]map[string]any, error) {
	t, known := p.tables[entity]
	if !known {
		return nil, fmt.Errorf("%w: entity %s is not in the schema", ErrInvalidSchema, entity)
	}
	out := make(map[string]map[string]any, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var b strings.Builder
	selectColumns(&b, t)
	fmt.Fprintf(&b, " WHERE %q IN (SELECT value FROM json_each(?))", t.PK)
	rr := newRowReader(t)
	err := p.query(b.String(), func(st *sqlite.Stmt) error {
		vals, err := rr.read(st)
		if err != nil {
			return err
		}
		row := make(map[string]any, len(t.Fields)+1)
		row[t.PK] = vals[0]
		for i, c := range t.Fields {
			row[c.Name] = vals[i+1]
		}
		id, _ := vals[0].(string) // the key is text
		out[id] = row
		return nil
	}, idList(ids))
	return out, corruption(err)
}

// ExistingOf is which of ids of entity exist: the ids EntityValuesOf
// returns, without reading or decoding a row's values (the surplus-row
// cleanup of a tab being backfilled asks it of every single row).
func (p *Projector) ExistingOf(entity string, ids []string) (map[string]bool, error) {
	t, known := p.tables[entity]
	if !known {
		return nil, fmt.Errorf("%w: entity %s is not in the schema", ErrInvalidSchema, entity)
	}
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	q := fmt.Sprintf("SELECT %[1]q FROM %[2]q WHERE %[1]q IN (SELECT value FROM json_each(?))", t.PK, t.Name)
	err := p.each(q, []any{idList(ids)}, func(st *sqlite.Stmt) { out[st.ColumnText(0)] = true })
	return out, corruption(err)
}

// entityStatesOf is EntityState of many ids of entity, by id (a
// never-seen id is absent). Each row's field state is decoded by
// fieldStates.
func (p *Projector) entityStatesOf(entity string, ids []string) (map[string]aggregates.EntityState, error) {
	out := make(map[string]aggregates.EntityState, len(ids))
	err := p.query(`SELECT s.id, s.version, s.removed, s.fields FROM json_each(?) AS j
  CROSS JOIN hk_entity_state AS s ON s.entity = ? AND s.id = j.value`,
		func(st *sqlite.Stmt) error {
			fields, err := fieldStates(st.ColumnText(3))
			if err != nil {
				return fmt.Errorf("%w: field state of %s %q: %w", ErrReadModelInvalid, entity, st.ColumnText(0), err)
			}
			out[st.ColumnText(0)] = aggregates.EntityState{Exists: st.ColumnInt64(2) == 0, Version: uint64(st.ColumnInt64(1)), Fields: fields}
			return nil
		}, idList(ids), entity)
	return out, err
}

// The bulk reads below walk the window's ids (json_each) and look each up
// by its key ("CROSS JOIN" keeps json_each the outer loop): an
// "IN (SELECT value FROM json_each(?))" made SQLite first sort the ids
// into a temporary index, for every statement of every window.

// bindingStatesOf reads the binding-keyed part of each row's state:
// visible state, effects in flight, open conflicts (one statement), and
// sheet-side field state.
func (p *Projector) bindingStatesOf(bindings []string) (map[string]aggregates.RowState, error) {
	out := make(map[string]aggregates.RowState, len(bindings))
	list := idList(bindings)
	// "+state": look each binding up by its index, never scan every
	// unsettled effect (a backfill's whole queue).
	err := p.each(`SELECT j.value, coalesce(v.hash, ''), coalesce(v.revision, 0), coalesce(v.seq, 0), v.binding IS NOT NULL,
  EXISTS (SELECT 1 FROM hk_outbox AS o WHERE o.binding = j.value AND +o.state IN `+unsettled+`),
  (SELECT count(*) FROM hk_conflicts AS c WHERE c.binding = j.value AND c.state = 'open')
FROM json_each(?) AS j LEFT JOIN hk_visible_state AS v ON v.binding = j.value`,
		[]any{list}, func(st *sqlite.Stmt) {
			out[st.ColumnText(0)] = aggregates.RowState{VisibleHash: st.ColumnText(1), VisibleRevision: st.ColumnInt64(2),
				VisibleSeq: uint64(st.ColumnInt64(3)), Bound: st.ColumnInt64(4) != 0, InFlight: st.ColumnInt64(5) != 0,
				OpenConflicts: st.ColumnInt(6)}
		})
	if err != nil {
		return nil, err
	}
	return out, p.sheetFieldsOf(list, out)
}

// sheetFieldsOf reads SheetFields of the bindings of list into out.
func (p *Projector) sheetFieldsOf(list string, out map[string]aggregates.RowState) error {
	return p.each(`SELECT s.binding, s.field, coalesce(s.shown_hash, ''), s.shown_hash IS NOT NULL, s.candidate_hash, s.candidate_epoch,
  s.candidate_row_hash, s.candidate_visible_revision, s.conflict_id
FROM json_each(?) AS j CROSS JOIN hk_sheet_field_state AS s ON s.binding = j.value`, []any{list},
		func(st *sqlite.Stmt) {
			rs := out[st.ColumnText(0)]
			if rs.Sheet == nil {
				rs.Sheet = map[string]aggregates.SheetField{}
			}
			rs.Sheet[st.ColumnText(1)] = aggregates.SheetField{ShownHash: st.ColumnText(2), ShownKnown: st.ColumnInt64(3) != 0,
				CandidateHash: st.ColumnText(4), CandidateEpoch: st.ColumnInt64(5), CandidateRow: st.ColumnText(6),
				CandidateRev: st.ColumnInt64(7), ConflictID: st.ColumnText(8)}
			out[st.ColumnText(0)] = rs
		})
}
