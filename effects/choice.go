package effects

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// ConflictRows lists the Sync_Conflicts rows of snap by anchor: every copy
// of each anchor in sheet order, with its choice cell, the values it
// showed beside it and its guard hash. ok is false when the tab could not
// be read (its header drifted or it is missing, which the dispatcher
// reports): then nothing is decided from it.
func ConflictRows(snap *sheetsio.TabSnapshot, schema *layout.Schema) (rows map[string][]aggregates.SheetChoice, ok bool) {
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
			Result: at(r, layout.ConflictResult), RowHash: r.Hash})
	}
	return rows, true
}
