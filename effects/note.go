package effects

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// NoteSource tells which cell notes the Input cells of one spreadsheet
// should carry now (aggregates.DesiredNotes over the store's active
// quarantine and open conflicts).
type NoteSource interface {
	Notes(spreadsheet string) ([]aggregates.CellNote, error)
}

// noteWork is what a pass does about notes: the Input tabs whose notes
// it sweeps first (those this run has not swept yet) and the notes it
// writes after.
type noteWork struct {
	sweep []string
	notes []aggregates.CellNote
}

func (w noteWork) empty() bool { return len(w.sweep) == 0 && len(w.notes) == 0 }

// noteChanges returns the notes a pass writes: what the store wants the
// cells to carry against what this run last wrote (nothing without a
// NoteSource). A run does not know which notes an earlier run left on the
// sheet (a note written before a stop may be stale by now), so until a
// dispatch has swept an Input tab, that tab counts as carrying no notes:
// its sweep and every note it should carry ride in the same batchUpdate.
func (d *Dispatcher) noteChanges() (noteWork, error) {
	if d.cfg.Notes == nil {
		return noteWork{}, nil
	}
	want, err := d.cfg.Notes.Notes(d.cfg.Spreadsheet)
	if err != nil {
		return noteWork{}, fmt.Errorf("read cell notes: %w", err)
	}
	sweep := d.unswept()
	shown := make(map[string]aggregates.CellNote, len(d.notes))
	for k, n := range d.notes {
		if !slices.Contains(sweep, n.Tab) {
			shown[k] = n
		}
	}
	return noteWork{sweep: sweep, notes: aggregates.NoteChanges(shown, want)}, nil
}

// unswept lists the Input tabs this run has not swept yet, but for
// those its provisioning created (sheetsio.Workbook.Created): a new tab
// carries no note an earlier run left, so its sweep would cost a read
// and a write for nothing.
func (d *Dispatcher) unswept() []string {
	var out []string
	for _, t := range d.cfg.Workbook.Schema().Tabs() {
		if t.Role == layout.RoleInput && !d.swept[t.Name] && !d.cfg.Workbook.Created(t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// sendNotes dispatches notes when the pass claimed no effect: one fenced
// dispatch, the same requests as any pass (one read, one batchUpdate).
func (d *Dispatcher) sendNotes(ctx context.Context, w noteWork) error {
	if w.empty() {
		return nil
	}
	fence := d.cfg.Outbox.Fence()
	d.C.Dispatches.Add(1)
	batch := w.batch(&fence, nil)
	batch.Head = d.chainHead()
	res, err := d.cfg.Provider.Dispatch(ctx, d.cfg.Workbook, batch)
	d.readLast = err != nil || res == nil || res.Reads > 0
	if errors.Is(err, sheetsio.ErrAuthorityStale) || errors.Is(err, sheetsio.ErrAuthorityForeign) {
		return d.diverged(err.Error())
	}
	if err != nil {
		return err
	}
	d.headShown(batch, res)
	d.noted(w, res)
	return nil
}

// batch is the dispatch carrying ops and the notes' work.
func (w noteWork) batch(fence *sheetsio.Fence, ops []sheetsio.Op) sheetsio.Batch {
	return sheetsio.Batch{Fence: fence, Ops: ops, SweepNotes: w.sweep, Notes: toNotes(w.notes)}
}

// noted remembers the notes the sheet now carries: a swept tab carries
// only the notes written after its sweep; then applied notes, and those
// with no cell to carry them (not retried until they change).
func (d *Dispatcher) noted(w noteWork, res *sheetsio.DispatchResult) {
	if d.notes == nil {
		d.notes = map[string]aggregates.CellNote{}
		d.swept = map[string]bool{}
	}
	for i, tab := range w.sweep {
		if i >= len(res.Swept) || res.Swept[i] == sheetsio.NoteNotSent {
			continue
		}
		d.swept[tab] = true
		maps.DeleteFunc(d.notes, func(_ string, n aggregates.CellNote) bool { return n.Tab == tab })
	}
	for i, n := range w.notes {
		if i >= len(res.Notes) || res.Notes[i] == sheetsio.NoteNotSent {
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
