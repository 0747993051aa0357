package gsheets

import (
	"slices"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func (pl *planner) planAppend(i int, op sheetsio.Op, spec layout.TabSpec, snap *sheetsio.TabSnapshot) {
	r := &pl.results[i]
	row := make([]any, len(spec.Columns))
	if _, ok := pl.encodeInto(r, spec, op.Values, row); !ok {
		return
	}
	row[spec.Anchor] = op.Anchor
	r.WrittenHash = spec.RowHash(row)
	if !pl.anchorFree(r, snap.Find(op.Anchor)) {
		return
	}
	js, err := encodeRow(spec, row)
	if err != nil {
		pl.reject(r, sheetsio.StatusInvalid, sheetsio.ReasonInvalidOp, err)
		return
	}
	u := &unit{op: i, order: orderAppend, sheetID: snap.SheetID, appends: []appendRow{{sheetID: snap.SheetID, js: js}}}
	pl.addUnit(u, op, r)
}

// anchorFree: an append's anchor must be absent; a row already showing the
// exact new row is a recognised replay (StatusUnchanged).
func (pl *planner) anchorFree(r *sheetsio.OpResult, rows []sheetsio.Row) bool {
	switch {
	case len(rows) > 1:
		pl.reject(r, sheetsio.StatusGuardFailed, sheetsio.ReasonAnchorDuplicated, nil)
	case len(rows) == 1 && rows[0].Hash == r.WrittenHash:
		r.ObservedHash = rows[0].Hash
		pl.reject(r, sheetsio.StatusUnchanged, "", nil)
	case len(rows) == 1:
		r.ObservedHash = rows[0].Hash
		pl.reject(r, sheetsio.StatusGuardFailed, sheetsio.ReasonAnchorExists, nil)
	default:
		return true
	}
	return false
}

// target finds the single row an update/delete addresses and records its
// observed hash; ok=false when absent or duplicated.
func (pl *planner) target(r *sheetsio.OpResult, rows []sheetsio.Row, absentStatus sheetsio.OpStatus) (sheetsio.Row, bool) {
	switch len(rows) {
	case 0:
		pl.reject(r, absentStatus, sheetsio.ReasonAnchorNotFound, nil)
		return sheetsio.Row{}, false
	case 1:
		r.ObservedHash = rows[0].Hash
		return rows[0], true
	}
	pl.reject(r, sheetsio.StatusGuardFailed, sheetsio.ReasonAnchorDuplicated, nil)
	return sheetsio.Row{}, false
}

func (pl *planner) planUpdate(i int, op sheetsio.Op, spec layout.TabSpec, snap *sheetsio.TabSnapshot) {
	r := &pl.results[i]
	row, ok := pl.target(r, snap.Find(op.Anchor), sheetsio.StatusGuardFailed)
	if !ok {
		return
	}
	next := append([]any(nil), row.Cells...)
	cols, ok := pl.encodeInto(r, spec, op.Values, next)
	if !ok {
		return
	}
	r.WrittenHash = spec.RowHash(next)
	// On an Input tab the guard comes first: a row that already shows the
	// op's cells but not the row the caller expected may hold a person's
	// edit in another cell; called unchanged, its hash would become the
	// store's own write and the edit taken for it (never polled, then
	// overwritten).
	switch {
	case row.Hash != op.ExpectedHash && (spec.Role == layout.RoleInput || row.Hash != r.WrittenHash):
		pl.reject(r, sheetsio.StatusGuardFailed, sheetsio.ReasonRowHashMismatch, nil)
		return
	case row.Hash == r.WrittenHash:
		pl.reject(r, sheetsio.StatusUnchanged, "", nil)
		return
	}
	u := &unit{op: i, order: orderUpdate, sheetID: snap.SheetID, row: row.SheetRow - 1,
		check: &rowCheck{spec: spec, anchor: op.Anchor, title: snap.Title, cols: cols, next: next, hash: r.WrittenHash}}
	u.reqs = cellUpdates(spec, snap.SheetID, row.SheetRow-1, cols, next)
	pl.addUnit(u, op, r)
}

// cellUpdates writes the cells cols of row (0-based grid row) from next:
// one updateCells per run of adjacent columns, so a full-row correction
// is one request, not one a cell; the cells between runs are untouched.
func cellUpdates(spec layout.TabSpec, sheetID int64, row int, cols []int, next []any) []*sheets.Request {
	sorted := slices.Sorted(slices.Values(cols))
	var reqs []*sheets.Request
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[j-1]+1 {
			j++
		}
		rd := &sheets.RowData{Values: make([]*sheets.CellData, 0, j-i)}
		for _, c := range sorted[i:j] {
			rd.Values = append(rd.Values, cellData(spec.Columns[c], next[c]))
		}
		reqs = append(reqs, updateCellsRequest(sheetID, row, sorted[i], rd))
		i = j
	}
	return reqs
}

func (pl *planner) planDelete(i int, op sheetsio.Op, snap *sheetsio.TabSnapshot) {
	r := &pl.results[i]
	if row, ok := sheetsio.SurplusCopy(snap.Find(op.Anchor), op.ExpectedHash); ok { // I21 cleanup (snapshot_cached.go)
		pl.deleteRow(i, op, snap, row, row.Hash) // the identical copy left still shows it
		return
	}
	if row, left, ok := sheetsio.DistinctCopy(snap.Find(op.Anchor), op.ExpectedHash); ok { // one differing copy, by CAS
		pl.deleteRow(i, op, snap, row, left)
		return
	}
	row, ok := pl.target(r, snap.Find(op.Anchor), sheetsio.StatusUnchanged)
	if !ok {
		return
	}
	if row.Hash != op.ExpectedHash {
		pl.reject(r, sheetsio.StatusGuardFailed, sheetsio.ReasonRowHashMismatch, nil)
		return
	}
	pl.deleteRow(i, op, snap, row, "")
}

// deleteRow plans the delete of one row; left is the full-row hash the
// anchor still shows afterwards ("" = none). A row that keeps a value in
// a retired column is never deleted (I35: the value is a person's, never
// imported): the guard fails and the row stays for review.
func (pl *planner) deleteRow(i int, op sheetsio.Op, snap *sheetsio.TabSnapshot, row sheetsio.Row, left string) {
	r := &pl.results[i]
	if row.KeepsRetired {
		r.ObservedHash = row.Hash
		pl.reject(r, sheetsio.StatusGuardFailed, sheetsio.ReasonRowKeepsRetired, nil)
		return
	}
	r.ObservedHash, r.WrittenHash = row.Hash, left
	pl.addUnit(&unit{op: i, order: orderDelete, sheetID: snap.SheetID, row: row.SheetRow - 1,
		reqs: []*sheets.Request{deleteRowRequest(snap.SheetID, row.SheetRow-1)}}, op, r)
}

// addUnit attaches the op's receipt entry and queues the unit. The entry
// joins the receipt row of whichever batchUpdate carries the unit, so the
// two land atomically.
func (pl *planner) addUnit(u *unit, op sheetsio.Op, r *sheetsio.OpResult) {
	if op.Receipt != nil {
		u.receipt = receiptEntry(op, r)
	}
	u.measure()
	pl.units = append(pl.units, u)
}
