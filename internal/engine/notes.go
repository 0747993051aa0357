package engine

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
)

// Notes returns the cell notes the Input cells should carry now
// (effects.NoteSource): one per column-level quarantine of an anchored row
// and one per open conflict (aggregates.DesiredNotes). The engine serves
// the notes of the tabs spreadsheet shows (routes send some tabs to
// other spreadsheets).
func (e *Engine) Notes(spreadsheet string) ([]aggregates.CellNote, error) {
	var qs []aggregates.Quarantine
	var open []aggregates.Conflict
	err := e.onWriter(func() error {
		for _, tab := range e.sheet.inputs {
			active, err := e.proj.ActiveQuarantine(tab)
			if err != nil {
				return err
			}
			for _, q := range active {
				qs = append(qs, q)
			}
		}
		var err error
		open, err = e.proj.ConflictsIn(aggregates.ConflictOpen)
		return err
	})
	if err != nil {
		return nil, err
	}
	return e.onTarget(spreadsheet, aggregates.DesiredNotes(qs, open)), nil
}
