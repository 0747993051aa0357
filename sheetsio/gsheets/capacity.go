package gsheets

import (
	"context"
	"slices"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// GridRefresh is how old the newest read of a spreadsheet's grid sizes
// may be before RefreshGrid reads them again.
const GridRefresh = 5 * time.Minute

// RefreshGrid reads the spreadsheet's tabs' grid sizes (one
// spreadsheets.get) into w (Workbook.GridSamples, what capacity health
// projects) when the newest read is older than GridRefresh; otherwise it
// reads nothing. The reconciliation calls it each pass. Errors: read
// errors.
func (p *Provider) RefreshGrid(ctx context.Context, w *sheetsio.Workbook) error {
	if _, _, at, ok := w.GridNow(); ok && p.cfg.Now().Sub(at) < GridRefresh {
		return nil
	}
	_, err := p.enumerate(ctx, w)
	return err
}

// provisionedGrid is the grid of the tabs infos lists once a
// provisioning batchUpdate of reqs landed: the tabs it adds, the
// dimensions it appends, the tab it deletes.
func provisionedGrid(infos []sheetInfo, reqs []*sheets.Request) map[int64]sheetsio.TabGrid {
	tabs := make(map[int64]sheetsio.TabGrid, len(infos)+len(reqs))
	for _, s := range infos {
		tabs[s.ID] = sheetsio.TabGrid{Rows: s.Rows, Cols: s.Cols}
	}
	for _, r := range reqs {
		switch {
		case r.AddSheet != nil && r.AddSheet.Properties != nil && r.AddSheet.Properties.GridProperties != nil:
			g := r.AddSheet.Properties.GridProperties
			tabs[r.AddSheet.Properties.SheetId] = sheetsio.TabGrid{Rows: g.RowCount, Cols: g.ColumnCount}
		case r.AppendDimension != nil:
			g := tabs[r.AppendDimension.SheetId]
			if r.AppendDimension.Dimension == "COLUMNS" {
				g.Cols += r.AppendDimension.Length
			} else {
				g.Rows += r.AppendDimension.Length
			}
			tabs[r.AppendDimension.SheetId] = g
		case r.DeleteSheet != nil:
			delete(tabs, r.DeleteSheet.SheetId)
		}
	}
	return tabs
}

// noteGrid records the grid sizes an enumeration read (began at at).
func noteGrid(w *sheetsio.Workbook, infos []sheetInfo, at time.Time) {
	tabs := make(map[int64]sheetsio.TabGrid, len(infos))
	for _, s := range infos {
		tabs[s.ID] = sheetsio.TabGrid{Rows: s.Rows, Cols: s.Cols}
	}
	w.NoteGrid(tabs, at)
}

// tabGrowth is what one tab's units add to the grid: rows appended to
// the tab, receipt rows, and the cells they take at most.
type tabGrowth struct {
	tab      string
	sheetID  int64
	rows     int64
	receipts int64
	cells    int64
}

// growth bounds the cells each tab's units add, tabs in unit order: the
// rows appended past the tab's grid (an append fills the rows under the
// last one the preflight saw holding anything first; all of them when
// that is unknown) as wide as the grid, and a receipt row per unit that
// writes one, as wide as the receipts tab. Units of no op (the authority
// mirror, the head) add none.
func growth(w *sheetsio.Workbook, b sheetsio.Batch, units []*unit, grid map[int64]sheetsio.TabGrid, snaps map[string]*sheetsio.TabSnapshot, receiptsID int64) []tabGrowth {
	var out []tabGrowth
	for _, u := range units {
		if u.op < 0 {
			continue
		}
		tab := b.Ops[u.op].Tab
		i := slices.IndexFunc(out, func(g tabGrowth) bool { return g.tab == tab })
		if i < 0 {
			out, i = append(out, tabGrowth{tab: tab, sheetID: u.sheetID}), len(out)
		}
		out[i].rows += int64(len(u.appends))
		if u.receipt != nil {
			out[i].receipts++
		}
	}
	for i := range out {
		g := &out[i]
		past := max(g.rows-freeRows(grid, snaps, g.tab, g.sheetID), 0)
		g.cells = past*width(w, grid, g.sheetID, g.tab) + g.receipts*width(w, grid, receiptsID, layout.ReceiptsTab)
	}
	return out
}

// freeRows is how many rows of the tab's grid lie under the last row the
// dispatch's read saw holding anything (0 when unknown).
func freeRows(grid map[int64]sheetsio.TabGrid, snaps map[string]*sheetsio.TabSnapshot, tab string, id int64) int64 {
	g, ok := grid[id]
	s := snaps[tab]
	if !ok || s == nil || s.SheetID != id || s.Extent() == 0 {
		return 0
	}
	return max(g.Rows-int64(s.Extent()), 0)
}

// width is how many cells a row added to the tab takes: its grid's
// columns as last read, else what provisioning gives it.
func width(w *sheetsio.Workbook, tabs map[int64]sheetsio.TabGrid, id int64, tab string) int64 {
	if g, ok := tabs[id]; ok && g.Cols > 0 {
		return g.Cols
	}
	spec, _ := w.Schema().Tab(tab)
	return int64(max(len(spec.Columns), minTabCols))
}

// nearCapacity reports whether a batch's appends might pass the limit as
// far as the Workbook knows (each append a new row of the grid): such a
// batch is read first, never sent blind, so the rows free under each
// tab's data are known.
func nearCapacity(w *sheetsio.Workbook, b sheetsio.Batch) bool {
	cells, grid, _, known := w.GridNow()
	if !known {
		return false // the dispatch reads the grid (fitCapacity)
	}
	rid, _ := w.SheetID(layout.ReceiptsTab)
	for _, op := range b.Ops {
		id, _ := w.SheetID(op.Tab)
		if op.Kind == sheetsio.OpAppend {
			cells += width(w, grid, id, op.Tab)
		}
		if op.Receipt != nil {
			cells += width(w, grid, rid, layout.ReceiptsTab)
		}
	}
	return cells > sheetsio.MaxSpreadsheetCells
}

func total(gs []tabGrowth) int64 {
	var n int64
	for _, g := range gs {
		n += g.cells
	}
	return n
}

// fitCapacity keeps the spreadsheet within MaxSpreadsheetCells: the units
// of a tab whose rows would pass the limit are not sent (StatusBlocked,
// Reason CodeSpreadsheetCapacity; their effects wait), the other tabs'
// go on, in order. What the Workbook knows of the grid (the newest read
// of the tabs' sizes, plus what this client's writes added since, an upper
// bound) decides; the grid is read again (one spreadsheets.get) only when
// nothing is known yet or when the batch would pass the limit as far as it
// knows (space may have been freed since). Growth a person causes between
// reads is caught by Sheets itself: its refusal settles the ops blocked
// the same way (ClassifyWrite). Errors: the enumeration's read errors
// (nothing sent).
func (p *Provider) fitCapacity(ctx context.Context, w *sheetsio.Workbook, b sheetsio.Batch, units []*unit, snaps map[string]*sheetsio.TabSnapshot, res *sheetsio.DispatchResult, receiptsID int64) ([]*unit, error) {
	cells, tabs, _, known := w.GridNow()
	gs := growth(w, b, units, tabs, snaps, receiptsID)
	need := total(gs)
	if need == 0 {
		return units, nil
	}
	if !known || cells+need > sheetsio.MaxSpreadsheetCells {
		if _, err := p.enumerate(ctx, w); err != nil {
			return nil, err
		}
		cells, tabs, _, _ = w.GridNow()
		gs = growth(w, b, units, tabs, snaps, receiptsID)
	}
	free := sheetsio.MaxSpreadsheetCells - cells
	held := map[string]bool{}
	for _, g := range gs {
		if g.cells > free {
			held[g.tab] = true
			continue
		}
		free -= g.cells
		w.GridGrew(g.cells)
	}
	if len(held) == 0 {
		return units, nil
	}
	return holdBack(b, units, res, held), nil
}

// holdBack removes the units of the held tabs and marks their ops
// blocked for capacity.
func holdBack(b sheetsio.Batch, units []*unit, res *sheetsio.DispatchResult, held map[string]bool) []*unit {
	out := units[:0:0]
	for _, u := range units {
		if u.op < 0 || !held[b.Ops[u.op].Tab] {
			out = append(out, u)
			continue
		}
		r := &res.Ops[u.op]
		r.Status, r.Reason = sheetsio.StatusBlocked, sheetsio.CodeSpreadsheetCapacity
		r.Err = newErr(sheetsio.CodeSpreadsheetCapacity, nil, "tab %s: the rows it adds would pass the spreadsheet's %d cells", b.Ops[u.op].Tab, sheetsio.MaxSpreadsheetCells)
	}
	return out
}

// FansOut reports whether b may go out in parallel lanes: only while the
// grid sizes are known and the whole batch, every append a new row, stays
// within the spreadsheet's cells (sheetsio.LaneGate).
func (p *Provider) FansOut(w *sheetsio.Workbook, b sheetsio.Batch) bool {
	if _, _, _, known := w.GridNow(); !known {
		return false
	}
	return !nearCapacity(w, b)
}
