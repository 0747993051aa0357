package engine

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// sheet derives the spreadsheet layout from the registry and answers the
// decisions' questions about it (aggregates.Sheet).
type sheet struct {
	target string // the sync target's name
	schema *layout.Schema
	rows   map[string][]aggregates.RowTab // entity → its tabs
	inputs []string                       // the Input tabs, in declaration order
}

// newSheet lays out every entity: key first, then fields in order;
// user-owned fields are the editable ones on the Input tab.
func newSheet(target string, reg *Registry) (*sheet, error) {
	var ents []layout.Entity
	for _, s := range reg.Shapes() {
		e := layout.Entity{Name: s.Name, Fields: []layout.Field{{Name: s.PK, Kind: events.KindString, Key: true}}}
		for _, f := range s.Fields {
			e.Fields = append(e.Fields, layout.Field{Name: f.Name, Kind: f.Kind, Editable: f.Owner == events.OwnerUser})
		}
		ents = append(ents, e)
	}
	schema, err := layout.NewSchema(ents...)
	if err != nil {
		return nil, err
	}
	sh := &sheet{target: target, schema: schema, rows: map[string][]aggregates.RowTab{}}
	for _, s := range reg.Shapes() {
		sh.rows[s.Name] = sh.rowTabs(s)
		if s.HasUserFields() {
			sh.inputs = append(sh.inputs, layout.InputTabName(s.Name))
		}
	}
	return sh, nil
}

// inputTabs lists the Input tabs of the entities in reg (no sync needed).
func inputTabs(reg *Registry) []string {
	var out []string
	for _, s := range reg.Shapes() {
		if s.HasUserFields() {
			out = append(out, layout.InputTabName(s.Name))
		}
	}
	return out
}

func (sh *sheet) rowTabs(s events.EntityShape) []aggregates.RowTab {
	tabs := []string{layout.SystemTabName(s.Name)}
	if s.HasUserFields() {
		tabs = append(tabs, layout.InputTabName(s.Name))
	}
	var out []aggregates.RowTab
	for _, name := range tabs {
		spec, _ := sh.schema.Tab(name)
		rt := aggregates.RowTab{Tab: name, Input: spec.Role == layout.RoleInput}
		for _, c := range spec.Columns {
			if c.Name != layout.AnchorHeader {
				rt.Columns = append(rt.Columns, c.Name)
			}
		}
		out = append(out, rt)
	}
	return out
}

// Target implements aggregates.Sheet.
func (sh *sheet) Target(tab, anchor string) aggregates.Target {
	return aggregates.Target{Spreadsheet: sh.target, Tab: tab, Anchor: anchor, Binding: layout.RowBindingID(tab, anchor)}
}

// RowTabs implements aggregates.Sheet.
func (sh *sheet) RowTabs(entity string) []aggregates.RowTab { return sh.rows[entity] }

// AnchorColumn implements aggregates.Sheet.
func (sh *sheet) AnchorColumn() string { return layout.AnchorHeader }

// ConflictsTab implements aggregates.Sheet.
func (sh *sheet) ConflictsTab() string { return layout.ConflictsTab }

// AuditOpened implements aggregates.Sheet: the OPEN row of Sync_Conflicts.
func (sh *sheet) AuditOpened(c events.ConflictOpened, at time.Time) map[string]any {
	return map[string]any{layout.ConflictID: c.ConflictID, layout.ConflictEntity: c.Entity, layout.ConflictRecordKey: c.ID,
		layout.ConflictField: c.Field, layout.ConflictSystemValue: c.SystemValue, layout.ConflictSheetValue: c.SheetValue,
		layout.ConflictStatus: "OPEN", layout.ConflictOpenedAt: at.UTC()}
}

// AuditResolved implements aggregates.Sheet: the RESOLVED update.
func (sh *sheet) AuditResolved(at time.Time) map[string]any {
	return map[string]any{layout.ConflictStatus: "RESOLVED", layout.ConflictResolvedAt: at.UTC()}
}

// columns lists a tab's data columns (the anchor left out).
func (sh *sheet) columns(tab string) []string {
	spec, _ := sh.schema.Tab(tab)
	var out []string
	for _, c := range spec.Columns {
		if c.Name != layout.AnchorHeader {
			out = append(out, c.Name)
		}
	}
	return out
}
