package effects

import (
	"context"
	"errors"
	"fmt"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// NoteSource tells which cell notes the Input cells of one spreadsheet
// should carry now (aggregates.DesiredNotes over the store's active
// quarantine and open conflicts).
type NoteSource interface {
	Notes(spreadsheet string) ([]aggregates.CellNote, error)
}

// noteChanges returns the notes a pass writes: what the store wants the
// cells to carry against what this run last wrote (nothing without a
// NoteSource).
func (d *Dispatcher) noteChanges() ([]aggregates.CellNote, error) {
	if d.cfg.Notes == nil {
		return nil, nil
	}
	want, err := d.cfg.Notes.Notes(d.cfg.Spreadsheet)
	if err != nil {
		return nil, fmt.Errorf("read cell notes: %w", err)
	}
	return aggregates.NoteChanges(d.notes, want), nil
}

// sendNotes dispatches notes when the pass claimed no effect: one fenced
// dispatch, the same requests as any pass (one read, one batchUpdate).
func (d *Dispatcher) sendNotes(ctx context.Context, notes []aggregates.CellNote) error {
	if len(notes) == 0 {
		return nil
	}
	fence := d.cfg.Outbox.Fence()
	d.C.Dispatches.Add(1)
	res, err := d.cfg.Provider.Dispatch(ctx, d.cfg.Workbook, sheetsio.Batch{Fence: &fence, Notes: toNotes(notes)})
	if errors.Is(err, sheetsio.ErrAuthorityStale) || errors.Is(err, sheetsio.ErrAuthorityForeign) {
		return d.diverged(err.Error())
	}
	if err != nil {
		return err
	}
	d.noted(notes, res.Notes)
	return nil
}

// noted remembers the notes the sheet now carries: applied ones, and those
// with no cell to carry them (not retried until they change).
func (d *Dispatcher) noted(notes []aggregates.CellNote, st []sheetsio.NoteStatus) {
	if d.notes == nil {
		d.notes = map[string]aggregates.CellNote{}
	}
	for i, n := range notes {
		if i >= len(st) || st[i] == sheetsio.NoteNotSent {
			continue
		}
		d.C.Notes.Add(1)
		if n.Text == "" {
			delete(d.notes, n.Key())
			continue
		}
		d.notes[n.Key()] = n
	}
}

func toNotes(notes []aggregates.CellNote) []sheetsio.Note {
	out := make([]sheetsio.Note, len(notes))
	for i, n := range notes {
		out[i] = sheetsio.Note{Tab: n.Tab, Anchor: n.Anchor, Column: n.Column, Text: n.Text}
	}
	return out
}
