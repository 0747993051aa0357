package effects

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Sheet answers the decisions' questions about a spreadsheet's layout
// (aggregates.Sheet) from a layout.Schema: an entity's rows show on its
// System tab and, when people may edit some of its fields, on its Input
// tab. The engine and MemOutbox both use it.
type Sheet struct {
	// Spreadsheet is the sync target's name effects are queued under.
	Spreadsheet string
	Schema      *layout.Schema
	// Routes names the sync target of the tabs shown in another
	// spreadsheet than Spreadsheet (the System and Input tabs of the
	// entities a route sends elsewhere); nil: every tab is Spreadsheet's.
	Routes map[string]string
}

var _ aggregates.Sheet = Sheet{}

// Target implements aggregates.Sheet.
func (s Sheet) Target(tab, anchor string) aggregates.Target {
	return aggregates.Target{Spreadsheet: s.TargetOf(tab), Tab: tab, Anchor: anchor, Binding: layout.RowBindingID(tab, anchor)}
}

// TargetOf is the sync target that shows tab: its route's, else
// Spreadsheet.
func (s Sheet) TargetOf(tab string) string {
	if t, ok := s.Routes[tab]; ok {
		return t
	}
	return s.Spreadsheet
}

// RowTabs implements aggregates.Sheet.
func (s Sheet) RowTabs(entity string) []aggregates.RowTab {
	sys, ok := s.Schema.Tab(layout.SystemTabName(entity))
	if !ok {
		return nil
	}
	out := []aggregates.RowTab{{Tab: sys.Name, Columns: s.Columns(sys.Name)}}
	if in, ok := s.Schema.Tab(layout.InputTabName(entity)); ok && Editable(in) {
		out = append(out, aggregates.RowTab{Tab: in.Name, Input: true, Columns: s.Columns(in.Name)})
	}
	return out
}

// Editable reports whether people edit some cells of tab t (it has a
// column that is neither the key nor the anchor).
func Editable(t layout.TabSpec) bool {
	for _, c := range t.Columns {
		if !c.Key && c.Name != layout.AnchorHeader {
			return true
		}
	}
	return false
}

// AnchorColumn implements aggregates.Sheet.
func (Sheet) AnchorColumn() string { return layout.AnchorHeader }

// ConflictsTab implements aggregates.Sheet.
func (Sheet) ConflictsTab() string { return layout.ConflictsTab }

// AuditOpened implements aggregates.Sheet: the OPEN row of Sync_Conflicts.
func (Sheet) AuditOpened(c events.ConflictOpened, at time.Time) map[string]any {
	return map[string]any{layout.ConflictID: c.ConflictID, layout.ConflictEntity: c.Entity, layout.ConflictRecordKey: c.ID,
		layout.ConflictField: c.Field, layout.ConflictSystemValue: c.SystemValue, layout.ConflictSheetValue: c.SheetValue,
		layout.ConflictStatus: "OPEN", layout.ConflictOpenedAt: at.UTC()}
}

// AuditResolved implements aggregates.Sheet: the RESOLVED update, whose
// result says how and by whom (resolutionText).
func (Sheet) AuditResolved(how events.Resolution, actor events.Actor, at time.Time) map[string]any {
	return map[string]any{layout.ConflictStatus: "RESOLVED", layout.ConflictResolvedAt: at.UTC(),
		layout.ConflictResult: resolutionText(how, actor)}
}

// ChoiceRejected implements aggregates.Sheet.
func (Sheet) ChoiceRejected(reason string, clear bool) map[string]any {
	m := map[string]any{layout.ConflictResult: reason}
	if clear {
		m[layout.ConflictResolution] = ""
	}
	return m
}

// AuditRefreshed implements aggregates.Sheet.
func (Sheet) AuditRefreshed(sheetValue string) map[string]any {
	return map[string]any{layout.ConflictSheetValue: sheetValue, layout.ConflictResolution: "",
		layout.ConflictResult: "the cell changed again: sheet_value is its new value; choose again"}
}

// AuditValues implements aggregates.Sheet.
func (Sheet) AuditValues(systemValue, sheetValue string) map[string]any {
	return map[string]any{layout.ConflictSystemValue: systemValue, layout.ConflictSheetValue: sheetValue}
}

// resolutionText is the resolution_result cell of a resolved conflict,
// e.g. "use sheet (chosen in the sheet)".
func resolutionText(how events.Resolution, actor events.Actor) string {
	text := map[events.Resolution]string{events.ResolutionSystemWins: "system wins: the record changed again since",
		events.ResolutionAcknowledged: layout.ChoiceKeepSystem, events.ResolutionUseSheet: layout.ChoiceUseSheet,
		events.ResolutionShapeChanged: "ended: the field was dropped or is no longer edited in the sheet"}[how]
	if text == "" {
		text = string(how)
	}
	by := map[events.Actor]string{events.ActorSheet: " (chosen in the sheet)", events.ActorCLI: " (hikoutei command)",
		events.ActorApplication: " (application)"}[actor]
	if how == events.ResolutionSystemWins || how == events.ResolutionShapeChanged {
		by = ""
	}
	return text + by
}

// ShowsMarkerOf implements aggregates.Sheet with the cell codec's marker
// rule (cell.ShowsMarkerOf) for the column's kind.
func (s Sheet) ShowsMarkerOf(tab, field string, observed, canonical any) bool {
	spec, _ := s.Schema.Tab(tab)
	c := spec.ColumnIndex(field)
	return c >= 0 && cell.ShowsMarkerOf(spec.Columns[c].Kind, observed, canonical)
}

// Columns lists a tab's data columns (the anchor left out; none for a tab
// the layout does not know).
func (s Sheet) Columns(tab string) []string {
	spec, _ := s.Schema.Tab(tab)
	var out []string
	for _, c := range spec.Columns {
		if c.Name != layout.AnchorHeader {
			out = append(out, c.Name)
		}
	}
	return out
}

// InputTabs lists the tabs people edit, in layout order.
func (s Sheet) InputTabs() []string {
	var out []string
	for _, t := range s.Schema.Tabs() {
		if t.Role == layout.RoleInput && Editable(t) {
			out = append(out, t.Name)
		}
	}
	return out
}

// key is an entity's key column: the first key column of its System tab
// ("" when the layout does not know the entity).
func (s Sheet) key(entity string) string {
	spec, _ := s.Schema.Tab(layout.SystemTabName(entity))
	for _, c := range spec.Columns {
		if c.Key && c.Name != layout.AnchorHeader {
			return c.Name
		}
	}
	return ""
}
