package sheetsio

import (
	"google.golang.org/api/sheets/v4"

	"golang.org/x/text/unicode/norm"
)

// Note sets the note (Sheets' CellData.note) of one cell of a row tab: the
// cell in column Column of the row whose anchor is Anchor. Text "" removes
// the note. A note never changes the cell's value, so it never changes the
// row's visible hash (cell.VisibleHash covers values only) and needs no
// guard: it rides in the dispatch's batchUpdate, behind the same fence.
type Note struct {
	Tab, Anchor, Column, Text string
}

// NoteStatus is the fate of one Note.
type NoteStatus uint8

// Note statuses.
const (
	// NoteApplied: sent in a batchUpdate that succeeded.
	NoteApplied NoteStatus = iota + 1
	// NoteNoCell: the tab has no such column, or no single row shows the
	// anchor; nothing was sent (there is no cell to carry the note).
	NoteNoCell
	// NoteNotSent: the tab was not usable, or the batchUpdate that carried
	// the note was not applied; a later dispatch may send it again.
	NoteNotSent
)

// noteFields is the field mask of a note write: the note only, never the
// value or its format.
const noteFields = "note"

// planNotes plans one unit per note that has a cell, after the row ops
// (notes use preflight row positions, like updates).
func (pl *planner) planNotes(notes []Note) []NoteStatus {
	out := make([]NoteStatus, len(notes))
	for i, n := range notes {
		out[i] = pl.planNote(i, n)
	}
	return out
}

func (pl *planner) planNote(i int, n Note) NoteStatus {
	spec, ok := pl.schema.Tab(n.Tab)
	snap := pl.snaps[n.Tab]
	switch {
	case !ok || spec.Anchor < 0:
		return NoteNoCell
	case snap == nil || snap.Err != nil:
		return NoteNotSent
	}
	c := spec.ColumnIndex(n.Column)
	rows := snap.Find(norm.NFC.String(n.Anchor))
	if c < 0 || c == spec.Anchor || len(rows) != 1 {
		return NoteNoCell
	}
	rd := &sheets.RowData{Values: []*sheets.CellData{{Note: n.Text, ForceSendFields: []string{"Note"}}}}
	req := updateCellsRequest(snap.SheetID, rows[0].SheetRow-1, c, rd)
	req.UpdateCells.Fields = noteFields
	u := &unit{op: -1, note: i + 1, order: orderUpdate, sheetID: snap.SheetID, reqs: []*sheets.Request{req}}
	u.measure()
	pl.units = append(pl.units, u)
	return NoteNotSent // until settled
}

// settleNotes records the outcome of each sent note unit.
func (r *DispatchResult) settleNotes(units []*unit) {
	for _, u := range units {
		if u.note > 0 && u.sent && u.err == nil {
			r.Notes[u.note-1] = NoteApplied
		}
	}
}
