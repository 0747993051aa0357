package sheetsio

import (
	"sort"

	"golang.org/x/text/unicode/norm"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func (pl *planner) planAppend(i int, op Op, spec layout.TabSpec, snap *TabSnapshot) {
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
	u := &unit{op: i, order: orderAppend, sheetID: snap.SheetID,
		appends: []appendRow{{sheetID: snap.SheetID, row: rowData(spec, row)}}}
	pl.addUnit(u, op, r)
}

// anchorFree: an append's anchor must be absent; a row already showing the
// exact new row is a recognised replay (StatusUnchanged).
func (pl *planner) anchorFree(r *OpResult, rows []Row) bool {
	switch {
	case len(rows) > 1:
		pl.reject(r, StatusGuardFailed, ReasonAnchorDuplicated, nil)
	case len(rows) == 1 && rows[0].Hash == r.WrittenHash:
		r.ObservedHash = rows[0].Hash
		pl.reject(r, StatusUnchanged, "", nil)
	case len(rows) == 1:
		r.ObservedHash = rows[0].Hash
		pl.reject(r, StatusGuardFailed, ReasonAnchorExists, nil)
	default:
		return true
	}
	return false
}

// target finds the single row an update/delete addresses and records its
// observed hash; ok=false when absent or duplicated.
func (pl *planner) target(r *OpResult, rows []Row, absentStatus OpStatus) (Row, bool) {
	switch len(rows) {
	case 0:
		pl.reject(r, absentStatus, ReasonAnchorNotFound, nil)
		return Row{}, false
	case 1:
		r.ObservedHash = rows[0].Hash
		return rows[0], true
	}
	pl.reject(r, StatusGuardFailed, ReasonAnchorDuplicated, nil)
	return Row{}, false
}

func (pl *planner) planUpdate(i int, op Op, spec layout.TabSpec, snap *TabSnapshot) {
	r := &pl.results[i]
	row, ok := pl.target(r, snap.Find(op.Anchor), StatusGuardFailed)
	if !ok {
		return
	}
	next := append([]any(nil), row.Cells...)
	cols, ok := pl.encodeInto(r, spec, op.Values, next)
	if !ok {
		return
	}
	r.WrittenHash = spec.RowHash(next)
	switch {
	case row.Hash == r.WrittenHash:
		pl.reject(r, StatusUnchanged, "", nil)
		return
	case row.Hash != op.ExpectedHash:
		pl.reject(r, StatusGuardFailed, ReasonRowHashMismatch, nil)
		return
	}
	u := &unit{op: i, order: orderUpdate, sheetID: snap.SheetID, row: row.SheetRow - 1,
		check: &rowCheck{spec: spec, anchor: op.Anchor, title: snap.title, cols: cols}}
	for _, c := range cols {
		rd := &sheets.RowData{Values: []*sheets.CellData{cellData(spec.Columns[c], next[c])}}
		u.reqs = append(u.reqs, updateCellsRequest(snap.SheetID, row.SheetRow-1, c, rd))
	}
	pl.addUnit(u, op, r)
}

func (pl *planner) planDelete(i int, op Op, snap *TabSnapshot) {
	r := &pl.results[i]
	if row, ok := SurplusCopy(snap.Find(op.Anchor), op.ExpectedHash); ok { // I21 cleanup (snapshot_cached.go)
		pl.deleteRow(i, op, snap, row, row.Hash) // the identical copy left still shows it
		return
	}
	if row, left, ok := DistinctCopy(snap.Find(op.Anchor), op.ExpectedHash); ok { // one differing copy, by CAS
		pl.deleteRow(i, op, snap, row, left)
		return
	}
	row, ok := pl.target(r, snap.Find(op.Anchor), StatusUnchanged)
	if !ok {
		return
	}
	if row.Hash != op.ExpectedHash {
		pl.reject(r, StatusGuardFailed, ReasonRowHashMismatch, nil)
		return
	}
	pl.deleteRow(i, op, snap, row, "")
}

// deleteRow plans the delete of one row; left is the full-row hash the
// anchor still shows afterwards ("" = none).
func (pl *planner) deleteRow(i int, op Op, snap *TabSnapshot, row Row, left string) {
	r := &pl.results[i]
	r.ObservedHash, r.WrittenHash = row.Hash, left
	pl.addUnit(&unit{op: i, order: orderDelete, sheetID: snap.SheetID, row: row.SheetRow - 1,
		reqs: []*sheets.Request{deleteRowRequest(snap.SheetID, row.SheetRow-1)}}, op, r)
}

// addUnit attaches the op's receipt entry and queues the unit. The entry
// joins the receipt row of whichever batchUpdate carries the unit, so the
// two land atomically.
func (pl *planner) addUnit(u *unit, op Op, r *OpResult) {
	if op.Receipt != nil {
		u.receipt = receiptLine(op, r)
	}
	u.measure()
	pl.units = append(pl.units, u)
}

// ExpectedRowHash returns the full-row visible hash of the row the provider
// writes for an append of values with anchor on tab spec — the ExpectedHash
// a later OpUpdate/OpDelete of that row passes when nothing changed it.
// Values are typed Go values as in Op.Values; a value Sheets cannot hold
// counts as its marker, as the provider writes it. Errors: *Error
// CodeInvalidBatch for a column the tab does not have.
func ExpectedRowHash(spec layout.TabSpec, anchor string, values map[string]any) (string, error) {
	if spec.Anchor < 0 {
		return "", newErr(CodeInvalidBatch, nil, "tab %s has no anchor", spec.Name)
	}
	pl := &planner{}
	r := &OpResult{}
	row := make([]any, len(spec.Columns))
	if _, ok := pl.encodeInto(r, spec, values, row); !ok {
		return "", r.Err
	}
	row[spec.Anchor] = norm.NFC.String(anchor)
	return spec.RowHash(row), nil
}

// MarkedCells lists, by column, the values of an op on tab spec that the
// provider writes as markers (see OpResult.Marked): what a probe that
// proves an op applied reports without a dispatch result. Columns the tab
// does not have are left out.
func MarkedCells(spec layout.TabSpec, values map[string]any) []MarkedCell {
	var out []MarkedCell
	for _, name := range sortedNames(values) {
		c := spec.ColumnIndex(name)
		if c < 0 {
			continue
		}
		if m := cell.MarkOf(spec.Columns[c].Kind, values[name]); m != nil {
			out = append(out, MarkedCell{Column: name, Mark: *m})
		}
	}
	return out
}

func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
