package effects

import (
	"context"
	"slices"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// conflictRows lists the Sync_Conflicts rows of snap by anchor: every copy
// of each anchor in sheet order, with its choice cell, the values it
// showed beside it and its guard hash. ok is false when the tab could not
// be read (its header drifted or it is missing, which the dispatcher
// reports): then nothing is decided from it.
func conflictRows(snap *sheetsio.TabSnapshot, schema *layout.Schema) (rows map[string][]aggregates.SheetChoice, ok bool) {
	spec, known := schema.Tab(layout.ConflictsTab)
	if snap == nil || snap.Err != nil || !known {
		return nil, false
	}
	at := func(r sheetsio.Row, name string) string {
		if i := spec.ColumnIndex(name); i >= 0 && i < len(r.Cells) {
			return aggregates.Render(r.Cells[i])
		}
		return ""
	}
	rows = map[string][]aggregates.SheetChoice{}
	for _, r := range snap.Rows {
		if r.Anchor == "" {
			continue
		}
		rows[r.Anchor] = append(rows[r.Anchor], aggregates.SheetChoice{ConflictID: r.Anchor, Choice: at(r, layout.ConflictResolution),
			SystemShown: at(r, layout.ConflictSystemValue), SheetShown: at(r, layout.ConflictSheetValue),
			Status: at(r, layout.ConflictStatus), Result: at(r, layout.ConflictResult), RowHash: r.Hash, SheetRow: r.SheetRow})
	}
	return rows, true
}

// checkChoices reads, with grid data, the rows whose choice may still be
// decided (SheetChoice.Pending: one request, only when there is one) and
// marks a choice cell holding a formula, an error value or a merge, as
// Input cells are read. A row that no longer shows its anchor there (a
// person moved rows in between) is left for the next poll.
func (p *Poller) checkChoices(ctx context.Context, rows map[string][]aggregates.SheetChoice) error {
	var want []int
	for _, copies := range rows {
		if len(copies) == 1 && copies[0].Pending() {
			want = append(want, copies[0].SheetRow)
		}
	}
	if len(want) == 0 {
		return nil
	}
	slices.Sort(want)
	grids, err := p.cfg.Provider.ReadGridRows(ctx, p.cfg.Workbook, map[string]sheetsio.GridRequest{layout.ConflictsTab: {Rows: want}})
	if err != nil {
		return err
	}
	markFormulas(rows, grids[layout.ConflictsTab], p.cfg.Workbook.Schema())
	return nil
}

// markFormulas applies a grid read of choice rows to rows.
func markFormulas(rows map[string][]aggregates.SheetChoice, g *sheetsio.GridSnapshot, schema *layout.Schema) {
	spec, _ := schema.Tab(layout.ConflictsTab)
	col := spec.ColumnIndex(layout.ConflictResolution)
	read := map[int]sheetsio.GridRow{}
	if g != nil && g.Err == nil {
		for _, r := range g.Rows {
			read[r.SheetRow] = r
		}
	}
	for id, copies := range rows {
		if len(copies) != 1 || !copies[0].Pending() {
			continue
		}
		r, ok := read[copies[0].SheetRow]
		switch {
		case !ok || r.Anchor != id || col >= len(r.Cells):
			copies[0].Choice = "" // moved or unreadable: decided on a later poll
		default:
			o := r.Cells[col]
			copies[0].Formula = o.Formula != "" || o.ErrorType != "" || o.Merged
		}
	}
}
