package engine

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// sheet is the spreadsheet layout of the registry: the tabs the
// provisioning creates and the decisions' view of them (effects.Sheet,
// an aggregates.Sheet).
type sheet struct {
	effects.Sheet
	inputs []string // the Input tabs, in declaration order
	// rowTabs holds RowTabs of every entity laid out, built once: every
	// committed entity's effects are decided from it.
	rowTabs map[string][]aggregates.RowTab
}

// newSheet lays out every entity: key first, then fields in order;
// user-owned fields are the editable ones on the Input tab. target is the
// sync target's name the effects are queued under.
func newSheet(target string, reg *Registry) (*sheet, error) {
	schema, err := layoutOf(reg, nil)
	if err != nil {
		return nil, err
	}
	sh := effects.Sheet{Spreadsheet: target, Schema: schema}
	out := &sheet{Sheet: sh, inputs: sh.InputTabs(), rowTabs: map[string][]aggregates.RowTab{}}
	for _, s := range reg.Shapes() {
		out.rowTabs[s.Name] = sh.RowTabs(s.Name)
	}
	return out, nil
}

// RowTabs implements aggregates.Sheet (effects.Sheet.RowTabs, built once
// per entity; callers only read it).
func (s *sheet) RowTabs(entity string) []aggregates.RowTab {
	if tabs, ok := s.rowTabs[entity]; ok {
		return tabs
	}
	return s.Sheet.RowTabs(entity)
}

// layoutOf is the layout schema of the registry's entities (those keep
// accepts, when not nil).
func layoutOf(reg *Registry, keep func(string) bool) (*layout.Schema, error) {
	var ents []layout.Entity
	for _, s := range reg.Shapes() {
		if keep != nil && !keep(s.Name) {
			continue
		}
		e := layout.Entity{Name: s.Name, Fields: []layout.Field{{Name: s.PK, Kind: events.KindString, Key: true}}}
		for _, f := range s.Fields {
			if f.NoSheet {
				continue // never sent to the sheet: no column
			}
			e.Fields = append(e.Fields, layout.Field{Name: f.Name, Kind: f.Kind, Editable: f.Owner == events.OwnerUser})
		}
		ents = append(ents, e)
	}
	return layout.NewSchema(ents...)
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
