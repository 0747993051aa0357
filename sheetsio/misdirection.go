package sheetsio

// Misdirection is what a dispatch's own batchUpdate response showed of an
// update whose cells landed on another row (C06): between the preflight
// read and the write a person sorted, inserted or deleted rows, and Sheets
// has no conditional write. The response is rendered by Google after every
// request of the batchUpdate, in the same atomic step, so it shows exactly
// the row that received the cells.
//
// SheetRow is that row (1-based, after the batchUpdate); DisplacedAnchor
// its anchor ("" for a row without one); Columns the headers of the cells
// written there, whose earlier content was overwritten (it may have been a
// person's edit no poll had seen yet); RowHash the row's visible hash
// right after the write (the guard of its repair).
type Misdirection struct {
	SheetRow        int
	DisplacedAnchor string
	Columns         []string
	RowHash         string
}
