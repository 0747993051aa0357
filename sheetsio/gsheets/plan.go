package gsheets

import (
	"errors"
	"sort"

	"golang.org/x/text/unicode/norm"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Unit ordering inside a dispatch: the authority mirror first, the
// chain head after it (both placed by the dispatch, not sorted), then cell
// updates (they use preflight row positions), then deletes bottom-up (so a
// delete never shifts a row another request addresses), then appends.
const (
	orderAuthority = iota
	orderHead      // the authority row's chain_head cell (chainhead.go)
	orderSweep     // note sweeps come before the notes written after them
	orderUpdate
	orderDelete
	orderAppend
)

// unit is the indivisible part of a dispatch: one op's requests plus its
// receipt row, which must land in the same batchUpdate.
type unit struct {
	op int // index in Batch.Ops; -1 for the authority mirror and head
	// refresh: an authority mirror written only to refresh a fence the
	// authority showed exactly (Batch.Refresh).
	refresh bool
	order   int
	sheetID int64
	row     int // 0-based grid row of a delete
	reqs    []*sheets.Request
	appends []appendRow
	receipt *sheetsio.ReceiptEntry // entry for the receipt row (nil = none)
	bytes   int
	sent    bool
	err     *sheetsio.WriteError
	// check is an update's written row, verified in the batchUpdate's own
	// response (C06); nil for other units.
	check *rowCheck
	// misdirected: the response showed the update's cells on another row.
	misdirected *sheetsio.Misdirection
	// drifted is the hash of the row an update planned on kept rows
	// showed in the response when it is not the row the write made
	// ("" = as planned, or not checked).
	drifted string
	// note is 1 + the index in Batch.Notes of the note the unit writes (0 = none).
	note int
	// sweep is 1 + the index in Batch.SweepNotes of the tab the unit
	// sweeps (0 = none).
	sweep int
	// head is the chain head the unit publishes (nil = none).
	head *sheetsio.ChainHead
	// header asks the batchUpdate's response for the header row of the
	// unit's tab after the write (nil = not asked).
	header *headerWatch
}

// appendRow is one row to append: its sheet and its JSON (encodeRow).
type appendRow struct {
	sheetID int64
	js      []byte
}

// measure sets the unit's share of a batchUpdate body in bytes: the JSON
// of its requests and appended rows with their separators, its receipt
// entry and its share of the receipt row, and the response range that
// verifies an update (see size.go).
func (u *unit) measure() {
	u.bytes += receiptSize(u.receipt)
	for _, r := range u.reqs {
		u.bytes += requestSize(r)
	}
	for _, a := range u.appends {
		u.bytes += len(a.js) + 1
	}
	if u.check != nil {
		u.bytes += checkRangeSize(u.check.title, u.row, len(u.check.spec.Columns))
	}
}

// planner turns a Batch into units against the preflight snapshots.
type planner struct {
	schema   *layout.Schema
	snaps    map[string]*sheetsio.TabSnapshot
	results  []sheetsio.OpResult
	units    []*unit
	targets  map[string]bool // row bindings already targeted
	ids      map[string]bool // op ids seen
	receipts map[string]bool // receipt effect ids seen
}

func newPlanner(schema *layout.Schema, snaps map[string]*sheetsio.TabSnapshot, b sheetsio.Batch) *planner {
	return &planner{schema: schema, snaps: snaps,
		results: make([]sheetsio.OpResult, len(b.Ops)), targets: map[string]bool{}, ids: map[string]bool{}, receipts: map[string]bool{}}
}

// plan plans every op and returns the units sorted for sending.
func (pl *planner) plan(ops []sheetsio.Op) []*unit {
	for i, op := range ops {
		pl.results[i] = sheetsio.OpResult{ID: op.ID}
		pl.planOp(i, op)
	}
	sortUnits(pl.units)
	return pl.units
}

// sortUnits orders units for sending (stable: plan order within a group).
func sortUnits(units []*unit) {
	sort.SliceStable(units, func(a, b int) bool { return unitLess(units[a], units[b]) })
}

func unitLess(a, b *unit) bool {
	if a.order != b.order {
		return a.order < b.order
	}
	if a.order != orderDelete {
		return false // keep plan order
	}
	if a.sheetID != b.sheetID {
		return a.sheetID < b.sheetID
	}
	return a.row > b.row
}

func (pl *planner) planOp(i int, op sheetsio.Op) {
	r := &pl.results[i]
	spec, ok := pl.validate(r, op)
	if !ok {
		return
	}
	op.Anchor = norm.NFC.String(op.Anchor)
	r.Binding = layout.RowBindingID(op.Tab, op.Anchor)
	if pl.targets[r.Binding] {
		pl.reject(r, sheetsio.StatusInvalid, sheetsio.ReasonDuplicateTarget, nil)
		return
	}
	pl.targets[r.Binding] = true
	if !pl.usable(r, op) {
		return
	}
	snap := pl.snaps[op.Tab]
	switch op.Kind {
	case sheetsio.OpAppend:
		pl.planAppend(i, op, spec, snap)
	case sheetsio.OpUpdate:
		pl.planUpdate(i, op, spec, snap)
	case sheetsio.OpDelete:
		pl.planDelete(i, op, snap)
	}
}

// validate checks the op's own shape; it never looks at the sheet.
func (pl *planner) validate(r *sheetsio.OpResult, op sheetsio.Op) (layout.TabSpec, bool) {
	spec, ok := pl.schema.Tab(op.Tab)
	switch {
	case op.ID == "" || pl.ids[op.ID] || op.Kind < sheetsio.OpAppend || op.Kind > sheetsio.OpDelete || !validAnchor(op.Anchor):
		pl.reject(r, sheetsio.StatusInvalid, sheetsio.ReasonInvalidOp, nil)
	case op.Kind != sheetsio.OpAppend && op.ExpectedHash == "":
		pl.reject(r, sheetsio.StatusInvalid, sheetsio.ReasonInvalidOp, nil)
	case op.Kind == sheetsio.OpUpdate && len(op.Values) == 0:
		pl.reject(r, sheetsio.StatusInvalid, sheetsio.ReasonInvalidOp, nil)
	case op.Receipt != nil && (!validReceipt(op.Receipt) || pl.receipts[op.Receipt.EffectID]):
		pl.reject(r, sheetsio.StatusInvalid, sheetsio.ReasonInvalidOp, nil)
	case !ok || spec.Anchor < 0 || spec.Role == layout.RoleReceipts:
		pl.reject(r, sheetsio.StatusInvalid, sheetsio.ReasonUnknownTab, nil)
	default:
		pl.ids[op.ID] = true
		if op.Receipt != nil {
			pl.receipts[op.Receipt.EffectID] = true
		}
		return spec, true
	}
	return layout.TabSpec{}, false
}

// usable reports whether the op's tab (and receipts tab, if it writes a
// receipt) passed header validation.
func (pl *planner) usable(r *sheetsio.OpResult, op sheetsio.Op) bool {
	tabs := []string{op.Tab}
	if op.Receipt != nil {
		tabs = append(tabs, layout.ReceiptsTab)
	}
	for _, t := range tabs {
		if s := pl.snaps[t]; s == nil || s.Err != nil {
			err := error(newErr(sheetsio.CodeTabMissing, nil, "tab %s was not read", t))
			if s != nil {
				err = s.Err
			}
			pl.reject(r, sheetsio.StatusBlocked, errorCode(err), err)
			return false
		}
	}
	return true
}

func (pl *planner) reject(r *sheetsio.OpResult, s sheetsio.OpStatus, reason string, err error) {
	r.Status, r.Reason, r.Err = s, reason, err
}

// encodeInto encodes op values into row (sheetsio.EncodeValues) and notes
// the cells written as markers in r.Marked; an unknown column rejects the op.
func (pl *planner) encodeInto(r *sheetsio.OpResult, spec layout.TabSpec, values map[string]any, row []any) ([]int, bool) {
	idx, marked, err := sheetsio.EncodeValues(spec, values, row)
	r.Marked = append(r.Marked, marked...)
	if err != nil {
		pl.reject(r, sheetsio.StatusInvalid, sheetsio.ReasonUnknownColumn, err)
		return nil, false
	}
	sort.Slice(r.Marked, func(a, b int) bool { return r.Marked[a].Column < r.Marked[b].Column })
	return idx, true
}

func errorCode(err error) string {
	var e *sheetsio.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return sheetsio.CodeTabMissing
}
