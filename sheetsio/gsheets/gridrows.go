package gsheets

import (
	"context"
	"errors"
	"slices"
	"sort"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"google.golang.org/api/sheets/v4"
)

// ReadGridRows reads tabs with grid data (formulas, merges, error values
// visible, as ReadGrid), each as its GridRequest says. When the Workbook
// knows every tab's sheetId and at least one request is not Whole, it is
// ONE spreadsheets.getByDataFilter addressed by sheetId for any number of
// tabs: one GridRange per run of consecutive requested rows, the header
// row included. A partial tab's snapshot (GridSnapshot.Partial) validates
// the header from that read and holds one GridRow per requested row in
// ascending order, blank cells for a row past the data; a merge
// overlapping a requested row marks its cells, whatever range the server
// reports the merge with. Row numbers are where the rows were when the
// caller chose them: a person may have inserted, deleted or sorted rows
// since, so the caller must check each row's anchor. When a sheetId is
// unknown, every request is Whole, or the read is rejected (a deleted
// tab, or a row now past the grid), it reads the tabs whole with ReadGrid
// instead (enumeration + spreadsheets.get); a request ByID counts as
// partial here (one request). Errors: as ReadGrid.
func (p *Provider) ReadGridRows(ctx context.Context, w *sheetsio.Workbook, reqs map[string]sheetsio.GridRequest) (map[string]*sheetsio.GridSnapshot, error) {
	tabs := make([]string, 0, len(reqs))
	whole := true
	for t, r := range reqs {
		if _, ok := w.Schema().Tab(t); !ok {
			return nil, newErr(sheetsio.CodeInvalidBatch, nil, "unknown tab %s", t)
		}
		tabs, whole = append(tabs, t), whole && r.Whole && !r.ByID
	}
	sort.Strings(tabs)
	if !whole {
		out, ok, err := p.readGridKnown(ctx, w, tabs, reqs)
		if ok || err != nil {
			distrustBlocked(w, out)
			return out, err
		}
	}
	return p.ReadGrid(ctx, w, tabs...)
}

// readGridKnown is ReadGridRows' single request by sheetId; ok is false,
// with nothing read, when a sheetId is unknown or the read was rejected.
func (p *Provider) readGridKnown(ctx context.Context, w *sheetsio.Workbook, tabs []string, reqs map[string]sheetsio.GridRequest) (map[string]*sheetsio.GridSnapshot, bool, error) {
	out, rows, req, ok := gridByID(w, tabs, reqs)
	if !ok {
		return nil, false, nil
	}
	var ss []*gridSheet
	err := p.read(ctx, "grid_get_by_sheet_id", func(ctx context.Context) error {
		var err error
		ss, err = p.getGridByFilterStream(ctx, w.SpreadsheetID(), req, wantedRows(w, out, rows))
		return err
	})
	if errors.Is(err, sheetsio.ErrReadRejected) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	fillKnownGrids(w.Schema(), out, rows, ss)
	return out, true, nil
}

// gridByID builds the snapshots to fill, the 0-based row indexes of each
// partial tab and the getByDataFilter request; ok is false when a tab's
// sheetId is unknown.
func gridByID(w *sheetsio.Workbook, tabs []string, reqs map[string]sheetsio.GridRequest) (map[string]*sheetsio.GridSnapshot, map[string][]int, *sheets.GetSpreadsheetByDataFilterRequest, bool) {
	out, rows := make(map[string]*sheetsio.GridSnapshot, len(tabs)), make(map[string][]int, len(tabs))
	req := &sheets.GetSpreadsheetByDataFilterRequest{IncludeGridData: true}
	for _, t := range tabs {
		id, ok := w.SheetID(t)
		if !ok {
			return nil, nil, nil, false
		}
		out[t] = &sheetsio.GridSnapshot{Tab: t, SheetID: id, Partial: !reqs[t].Whole}
		if !reqs[t].Whole {
			rows[t] = rowIndexes(reqs[t].Rows)
		}
		req.DataFilters = append(req.DataFilters, rowFilters(id, reqs[t].Whole, rows[t])...)
	}
	return out, rows, req, true
}

// rowIndexes turns 1-based sheet rows into sorted, distinct 0-based row
// indexes with the header (0) first; rows outside the grid's possible
// range are dropped.
func rowIndexes(sheetRows []int) []int {
	out := []int{0}
	for _, r := range sheetRows {
		if r > 1 && r <= a1.MaxRows {
			out = append(out, r-1)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rowFilters selects a whole sheet by id, or one GridRange (all columns)
// per run of consecutive row indexes.
func rowFilters(id int64, whole bool, rows []int) []*sheets.DataFilter {
	if whole {
		return []*sheets.DataFilter{{GridRange: &sheets.GridRange{SheetId: id, ForceSendFields: []string{"SheetId"}}}}
	}
	var out []*sheets.DataFilter
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j] == rows[j-1]+1 {
			j++
		}
		out = append(out, &sheets.DataFilter{GridRange: &sheets.GridRange{SheetId: id, StartRowIndex: int64(rows[i]),
			EndRowIndex: int64(rows[j-1] + 1), ForceSendFields: []string{"SheetId", "StartRowIndex"}}})
		i = j
	}
	return out
}

// wantedRows keeps, of a partial tab's sheet, only the requested row
// indexes (a response may carry more); every row of a whole tab.
func wantedRows(w *sheetsio.Workbook, out map[string]*sheetsio.GridSnapshot, rows map[string][]int) func(int64, int) bool {
	byID := make(map[int64][]int, len(out))
	for t, g := range out {
		if g.Partial {
			byID[g.SheetID] = rows[t]
		}
	}
	return func(id int64, at int) bool {
		r, partial := byID[id]
		if !partial {
			return true
		}
		_, ok := slices.BinarySearch(r, at)
		return ok
	}
}

// fillKnownGrids fills each snapshot from the response's sheet with its
// id: whole (rows[tab] nil) like ReadGrid, or the requested rows. A sheet
// the response lacks leaves its tab blocked (CodeTabMissing), never empty.
func fillKnownGrids(schema *layout.Schema, out map[string]*sheetsio.GridSnapshot, rows map[string][]int, ss []*gridSheet) {
	for t, g := range out {
		spec, _ := schema.Tab(t)
		i := slices.IndexFunc(ss, func(sh *gridSheet) bool { return sh.id == g.SheetID })
		switch {
		case i < 0:
			g.Err = newErr(sheetsio.CodeTabMissing, nil, "tab %s is not in the grid read", t)
		case g.Partial:
			fillGridRows(g, spec, ss[i], rows[t])
		default:
			fillGrid(g, spec, ss[i].observed())
		}
	}
}

// fillRows validates the header (index 0 of rows) and adds one GridRow per
// other requested row index.
func fillGridRows(g *sheetsio.GridSnapshot, spec layout.TabSpec, sh *gridSheet, rows []int) {
	got := sparseRows(sh, rows)
	rep, err := sheetsio.CheckHeader(spec, headerValues(got[0]))
	if err != nil {
		g.Err = err
		return
	}
	g.Header, g.Rows = rep, make([]sheetsio.GridRow, 0, len(rows)-1)
	for _, at := range rows[1:] {
		g.Rows = append(g.Rows, newGridRow(spec, got[at], at+1))
	}
}

// sparseRows is the requested row indexes (sorted) of a decoded sheet:
// the cells of each requested row the grid data carries, merges marked.
// Rows the request did not ask for were dropped as they streamed.
func sparseRows(sh *gridSheet, rows []int) map[int][]cell.Observed {
	out := make(map[int][]cell.Observed, len(rows))
	for _, at := range rows {
		if at < len(sh.rows) && sh.rows[at] != nil {
			out[at] = sh.rows[at]
		}
	}
	for _, m := range sh.merges {
		if m != nil {
			markMergedRows(out, rows, m)
		}
	}
	return out
}

// markMergedRows marks merge m on every requested row it overlaps.
func markMergedRows(out map[int][]cell.Observed, rows []int, m *sheets.GridRange) {
	k, _ := slices.BinarySearch(rows, int(max(m.StartRowIndex, 0)))
	for ; k < len(rows) && int64(rows[k]) < m.EndRowIndex; k++ {
		out[rows[k]] = mergedCells(out[rows[k]], m)
	}
}
