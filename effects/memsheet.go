package effects

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// memSheet answers the decisions' questions about a spreadsheet layout
// (aggregates.Sheet) for MemOutbox, from a layout.Schema: an entity's rows
// show on its System tab and, when that has a column that is not a key
// (a field people edit), on its Input tab, as the engine lays them out.
type memSheet struct {
	target string
	schema *layout.Schema
}

var _ aggregates.Sheet = memSheet{}

// Target implements aggregates.Sheet.
func (s memSheet) Target(tab, anchor string) aggregates.Target {
	return aggregates.Target{Spreadsheet: s.target, Tab: tab, Anchor: anchor, Binding: layout.RowBindingID(tab, anchor)}
}

// RowTabs implements aggregates.Sheet.
func (s memSheet) RowTabs(entity string) []aggregates.RowTab {
	sys, ok := s.schema.Tab(layout.SystemTabName(entity))
	if !ok {
		return nil
	}
	out := []aggregates.RowTab{{Tab: sys.Name, Columns: s.columns(sys.Name)}}
	if in, ok := s.schema.Tab(layout.InputTabName(entity)); ok && editable(in) {
		out = append(out, aggregates.RowTab{Tab: in.Name, Input: true, Columns: s.columns(in.Name)})
	}
	return out
}

func editable(t layout.TabSpec) bool {
	for _, c := range t.Columns {
		if !c.Key {
			return true
		}
	}
	return false
}

// AnchorColumn implements aggregates.Sheet.
func (memSheet) AnchorColumn() string { return layout.AnchorHeader }

// ConflictsTab implements aggregates.Sheet.
func (memSheet) ConflictsTab() string { return layout.ConflictsTab }

// AuditOpened implements aggregates.Sheet: the OPEN row of Sync_Conflicts.
func (memSheet) AuditOpened(c events.ConflictOpened, at time.Time) map[string]any {
	return map[string]any{layout.ConflictID: c.ConflictID, layout.ConflictEntity: c.Entity, layout.ConflictRecordKey: c.ID,
		layout.ConflictField: c.Field, layout.ConflictSystemValue: c.SystemValue, layout.ConflictSheetValue: c.SheetValue,
		layout.ConflictStatus: "OPEN", layout.ConflictOpenedAt: at.UTC()}
}

// AuditResolved implements aggregates.Sheet: the RESOLVED update.
func (memSheet) AuditResolved(at time.Time) map[string]any {
	return map[string]any{layout.ConflictStatus: "RESOLVED", layout.ConflictResolvedAt: at.UTC()}
}

// columns lists a tab's data columns (the anchor left out; none for a tab
// the layout does not know).
func (s memSheet) columns(tab string) []string {
	spec, _ := s.schema.Tab(tab)
	var out []string
	for _, c := range spec.Columns {
		if c.Name != layout.AnchorHeader {
			out = append(out, c.Name)
		}
	}
	return out
}

// key is an entity's key column: the first key column of its System tab
// ("" when the layout does not know the entity).
func (s memSheet) key(entity string) string {
	spec, _ := s.schema.Tab(layout.SystemTabName(entity))
	for _, c := range spec.Columns {
		if c.Key && c.Name != layout.AnchorHeader {
			return c.Name
		}
	}
	return ""
}
