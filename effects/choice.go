package effects

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Choices lists the Sync_Conflicts rows of snap whose resolution cell a
// person set, with the values the row showed beside it and its guard hash
// (none when the tab could not be read: its header drifted or it is
// missing, which the dispatcher reports).
func Choices(snap *sheetsio.TabSnapshot, schema *layout.Schema) []aggregates.SheetChoice {
	spec, ok := schema.Tab(layout.ConflictsTab)
	if snap == nil || snap.Err != nil || !ok {
		return nil
	}
	at := func(r sheetsio.Row, name string) string {
		if i := spec.ColumnIndex(name); i >= 0 && i < len(r.Cells) {
			return aggregates.Render(r.Cells[i])
		}
		return ""
	}
	var out []aggregates.SheetChoice
	for _, r := range snap.Rows {
		choice := at(r, layout.ConflictResolution)
		if choice == "" || r.Anchor == "" {
			continue
		}
		out = append(out, aggregates.SheetChoice{ConflictID: r.Anchor, Choice: choice, SystemShown: at(r, layout.ConflictSystemValue),
			SheetShown: at(r, layout.ConflictSheetValue), Result: at(r, layout.ConflictResult), RowHash: r.Hash})
	}
	return out
}
