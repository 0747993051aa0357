package engine

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
)

// Notes returns the cell notes the Input cells should carry now
// (effects.NoteSource): one per column-level quarantine of an anchored row
// and one per open conflict (aggregates.DesiredNotes). The engine serves
// one spreadsheet at a time, so every note is for it.
func (e *Engine) Notes(string) ([]aggregates.CellNote, error) {
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
	return aggregates.DesiredNotes(qs, open), nil
}
