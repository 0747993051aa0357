package sheetsio

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
