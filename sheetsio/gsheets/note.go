package gsheets

import (
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"golang.org/x/text/unicode/norm"
	"google.golang.org/api/sheets/v4"
)

// noteFields is the field mask of a note write: the note only, never the
// value or its format.
const noteFields = "note"

// planNotes plans one unit per note that has a cell, after the row ops
// (notes use preflight row positions, like updates).
func (pl *planner) planNotes(notes []sheetsio.Note) []sheetsio.NoteStatus {
	out := make([]sheetsio.NoteStatus, len(notes))
	for i, n := range notes {
		out[i] = pl.planNote(i, n)
	}
	return out
}

func (pl *planner) planNote(i int, n sheetsio.Note) sheetsio.NoteStatus {
	spec, ok := pl.schema.Tab(n.Tab)
	snap := pl.snaps[n.Tab]
	switch {
	case !ok || spec.Anchor < 0:
		return sheetsio.NoteNoCell
	case snap == nil || snap.Err != nil:
		return sheetsio.NoteNotSent
	}
	c := spec.ColumnIndex(n.Column)
	rows := snap.Find(norm.NFC.String(n.Anchor))
	if c < 0 || c == spec.Anchor || len(rows) != 1 {
		return sheetsio.NoteNoCell
	}
	rd := &sheets.RowData{Values: []*sheets.CellData{{Note: n.Text, ForceSendFields: []string{"Note"}}}}
	req := updateCellsRequest(snap.SheetID, rows[0].SheetRow-1, c, rd)
	req.UpdateCells.Fields = noteFields
	u := &unit{op: -1, note: i + 1, order: orderUpdate, sheetID: snap.SheetID, reqs: []*sheets.Request{req}}
	u.measure()
	pl.units = append(pl.units, u)
	return sheetsio.NoteNotSent // until settled
}

// planSweeps plans one unit per swept tab: a repeatCell with the "note"
// field mask and an empty cell over every row below the header (the range
// has no end row, so rows a person adds are covered) of each span of
// layout columns beside the anchor. Values, formats and cells outside the
// layout's columns are untouched.
func (pl *planner) planSweeps(tabs []string) []sheetsio.NoteStatus {
	out := make([]sheetsio.NoteStatus, len(tabs))
	for i, t := range tabs {
		out[i] = pl.planSweep(i, t)
	}
	return out
}

func (pl *planner) planSweep(i int, tab string) sheetsio.NoteStatus {
	spec, ok := pl.schema.Tab(tab)
	snap := pl.snaps[tab]
	switch {
	case !ok || spec.Anchor < 0:
		return sheetsio.NoteNoCell
	case snap == nil || snap.Err != nil:
		return sheetsio.NoteNotSent
	}
	var reqs []*sheets.Request
	for _, span := range [][2]int{{0, spec.Anchor}, {spec.Anchor + 1, len(spec.Columns)}} {
		if span[0] < span[1] {
			reqs = append(reqs, sweepRequest(snap.SheetID, span[0], span[1]))
		}
	}
	if len(reqs) == 0 {
		return sheetsio.NoteNoCell
	}
	u := &unit{op: -1, sweep: i + 1, order: orderSweep, sheetID: snap.SheetID, reqs: reqs}
	u.measure()
	pl.units = append(pl.units, u)
	return sheetsio.NoteNotSent // until settled
}

// sweepRequest removes the notes of columns [c0, c1) below the header.
func sweepRequest(sheetID int64, c0, c1 int) *sheets.Request {
	g := &sheets.GridRange{SheetId: sheetID, StartRowIndex: 1, StartColumnIndex: int64(c0), EndColumnIndex: int64(c1),
		ForceSendFields: []string{"SheetId", "StartColumnIndex"}}
	return &sheets.Request{RepeatCell: &sheets.RepeatCellRequest{Range: g, Cell: &sheets.CellData{}, Fields: noteFields}}
}

// settleNotes records the outcome of each sent note and sweep unit.
func settleNotes(r *sheetsio.DispatchResult, units []*unit) {
	for _, u := range units {
		if !u.sent || u.err != nil {
			continue
		}
		if u.note > 0 {
			r.Notes[u.note-1] = sheetsio.NoteApplied
		}
		if u.sweep > 0 {
			r.Swept[u.sweep-1] = sheetsio.NoteApplied
		}
	}
}
