package emulator

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of one tab page, so viewing a huge tab neither builds megabytes of
// HTML nor holds the state lock for long: rows and columns shown, the
// characters a cell shows (the cell is cut with "…"; its tooltip has more)
// and the characters of a tooltip.
const (
	maxViewRows    = 1000
	maxViewCols    = 100
	maxCellRunes   = 200
	maxTitleRunes  = 1000
	maxViewedNotes = 500
)

// noteKind classifies a cell note for highlighting.
type noteKind string

const (
	noteNone       noteKind = ""
	notePlain      noteKind = "note"
	noteConflict   noteKind = "conflict"
	noteQuarantine noteKind = "quarantine"
)

// Prefixes of the notes Hikoutei writes on Input cells (aggregates/note.go):
// "hikoutei: conflict: …" on an open conflict's cell, "hikoutei: <why>: not
// imported, …" on a quarantined cell.
const (
	hikouteiNotePrefix = "hikoutei: "
	conflictNotePrefix = "hikoutei: conflict:"
)

func noteKindOf(note string) noteKind {
	switch {
	case note == "":
		return noteNone
	case strings.HasPrefix(note, conflictNotePrefix):
		return noteConflict
	case strings.HasPrefix(note, hikouteiNotePrefix):
		return noteQuarantine
	}
	return notePlain
}

// viewCell is one displayed cell: Text as a FORMATTED_VALUE read returns it
// (cut to maxCellRunes), Title the tooltip (the note, else the text when
// cut), Class the alignment and note highlight classes.
type viewCell struct {
	Text, Title, Class string
	Note               noteKind
}

// viewRow is one displayed row with its 1-based row number, as in the UI.
type viewRow struct {
	Num   int
	Cells []viewCell
}

// viewNote is one note as listed under the grid; Href opens the rows
// around it when its cell lies outside the rows or columns shown.
type viewNote struct {
	Ref, Text, Href string
	Kind            noteKind
}

// viewTab is one tab's grid as the view shows it.
type viewTab struct {
	Title              string
	Hidden             bool
	Rows, Cols         int
	Header             []string
	Grid               []viewRow
	Notes              []viewNote
	Beyond             []viewNote // notes of cells outside the rows and columns shown
	First, Last        int        // the 1-based rows of the window shown (Last < First when none)
	MoreRows, MoreCols bool
	MoreNotes          bool
}

// viewTabOf renders s from the 1-based row first on: at most maxViewRows
// × maxViewCols cells, trailing empty cells and rows (without notes)
// dropped, every row padded to the widest one. The notes of cells outside
// those rows and columns are listed apart, each with a link (href makes it
// from a row number) that opens the rows around it.
func (b *book) viewTabOf(s *sheet, first int, href func(row int) string) *viewTab {
	start := max(first, 1) - 1
	end := min(len(s.Rows), start+maxViewRows)
	t := &viewTab{Title: s.Title, Hidden: s.Hidden, Rows: s.RowCount, Cols: s.ColCount, First: start + 1,
		MoreRows: start > 0 || s.RowCount > start+maxViewRows, MoreCols: s.ColCount > maxViewCols}
	width, last := 0, start-1
	for r := start; r < end; r++ {
		cells := b.viewRowCells(s, r, t)
		t.Grid = append(t.Grid, viewRow{Num: r + 1, Cells: cells})
		if len(cells) > 0 {
			width, last = max(width, len(cells)), r
		}
	}
	t.Grid = t.Grid[:last-start+1]
	t.Last = min(s.RowCount, start+maxViewRows)
	for i := range t.Grid {
		for len(t.Grid[i].Cells) < width {
			t.Grid[i].Cells = append(t.Grid[i].Cells, viewCell{})
		}
	}
	for c := 0; c < width; c++ {
		t.Header = append(t.Header, a1Col(c))
	}
	t.Beyond = notesOutside(s, start, end, href)
	if len(t.Beyond) > maxViewedNotes {
		t.Beyond, t.MoreNotes = t.Beyond[:maxViewedNotes], true
	}
	return t
}

// notesOutside lists the notes of s outside rows [start, end) and the
// first maxViewCols columns, in row order, at most maxViewedNotes+1.
func notesOutside(s *sheet, start, end int, href func(row int) string) []viewNote {
	var out []viewNote
	for r := range s.Rows {
		for c := range s.Rows[r] {
			if r >= start && r < end && c < maxViewCols {
				continue
			}
			note := s.Rows[r][c].Note
			if note == "" {
				continue
			}
			out = append(out, viewNote{Ref: a1Col(c) + strconv.Itoa(r+1), Text: clipRunes(note, maxTitleRunes),
				Kind: noteKindOf(note), Href: href(max(r+1-viewRowsBefore, 1))})
			if len(out) > maxViewedNotes {
				return out
			}
		}
	}
	return out
}

// viewRowsBefore is how many rows above a note's row its link shows.
const viewRowsBefore = 5

// viewRowCells renders row r up to its last cell with a value or a note,
// collecting the row's notes into t.
func (b *book) viewRowCells(s *sheet, r int, t *viewTab) []viewCell {
	n := min(len(s.Rows[r]), maxViewCols)
	cells := make([]viewCell, 0, n)
	last := -1
	for c := 0; c < n; c++ {
		vc, note := b.viewCellAt(s, r, c)
		cells = append(cells, vc)
		if vc.Text != "" || note != "" {
			last = c
		}
		if note != "" {
			t.addNote(viewNote{Ref: a1Col(c) + strconv.Itoa(r+1), Text: clipRunes(note, maxTitleRunes), Kind: vc.Note})
		}
	}
	return cells[:last+1]
}

func (t *viewTab) addNote(n viewNote) {
	if len(t.Notes) >= maxViewedNotes {
		t.MoreNotes = true
		return
	}
	t.Notes = append(t.Notes, n)
}

// formattedRead are the options of a FORMATTED_VALUE read, which the view
// shares so a cell shows exactly what such a read returns.
var formattedRead = renderOpts{Value: renderFormatted, DateTime: dtSerial, Major: "ROWS"}

// viewCellAt renders the cell at (r, c) and returns its note.
func (b *book) viewCellAt(s *sheet, r, c int) (viewCell, string) {
	cd := s.cell(r, c)
	vc := viewCell{Note: noteKindOf(cd.Note)}
	full := ""
	if cd.hasValue() {
		v := b.effectiveOf(s, r, c)
		full, _ = renderValue(cd, v, formattedRead).(string)
		vc.Class = alignClass(v.Kind)
	}
	vc.Text = clipRunes(full, maxCellRunes)
	vc.Title = clipRunes(cd.Note, maxTitleRunes)
	if vc.Title == "" && vc.Text != full {
		vc.Title = clipRunes(full, maxTitleRunes)
	}
	if vc.Note != noteNone {
		vc.Class = strings.TrimSpace(vc.Class + " note-" + string(vc.Note))
	}
	return vc, cd.Note
}

// alignClass aligns as the UI does: numbers right, booleans centred, text
// and errors left.
func alignClass(kind string) string {
	switch kind {
	case kindNumber:
		return "num"
	case kindBool:
		return "bool"
	}
	return ""
}

// clipRunes cuts s to at most n characters, the last one "…" when cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}
