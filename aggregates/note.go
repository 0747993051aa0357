package aggregates

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// maxNoteChars bounds the text of a cell note (one line).
const maxNoteChars = 200

// CellNote is the note one Input cell should carry: why the store did not
// take the person's value. Text "" means the cell should carry no note.
type CellNote struct {
	Tab, Anchor, Column, Text string
}

// Key identifies the cell a note is on.
func (n CellNote) Key() string { return n.Tab + "\x00" + n.Anchor + "\x00" + n.Column }

// quarantinePhrases say, in a person's words, why a cell was not imported
// (aggregates and sheetsio/cell reason codes; an unknown code is shown as is).
var quarantinePhrases = map[string]string{
	"cell_type_mismatch":        "not a value of this column's type",
	"cell_not_exact_integer":    "not a whole number",
	"cell_noncanonical_integer": "not a plain whole number",
	"cell_edge_whitespace":      "spaces at the start or end",
	"cell_non_finite":           "not a finite number",
	"cell_out_of_range":         "out of range",
	"cell_too_long":             "too long",
	"cell_formula":              "a formula (formulas are not imported)",
	"cell_error_value":          "an error value",
	"cell_merged":               "a merged cell",
	"cell_unsupported_value":    "a value the store cannot hold",
	ReasonKeyEdited:             "the key column is not editable",
	ReasonDuplicateAnchor:       "this row's anchor appears more than once",
}

// DesiredNotes decides the notes the Input cells of quarantined edits and
// open conflicts should carry, sorted by cell: quarantine evidence naming
// a column of an anchored row, and each open conflict's field. A conflict
// wins over a quarantine of the same cell. Pure: the caller reads the
// active quarantine and the open conflicts beforehand.
func DesiredNotes(quarantine []Quarantine, open []Conflict) []CellNote {
	byKey := map[string]CellNote{}
	for _, q := range quarantine {
		if q.Anchor == "" || q.Column == "" {
			continue
		}
		n := CellNote{Tab: q.Tab, Anchor: q.Anchor, Column: q.Column, Text: quarantineNote(q.Reason)}
		byKey[n.Key()] = n
	}
	for _, c := range open {
		n := CellNote{Tab: c.Tab, Anchor: c.Anchor, Column: c.Field, Text: conflictNote(c.SystemValue)}
		byKey[n.Key()] = n
	}
	out := make([]CellNote, 0, len(byKey))
	for _, k := range sortedKeys(byKey) {
		out = append(out, byKey[k])
	}
	return out
}

func quarantineNote(reason string) string {
	why, ok := quarantinePhrases[reason]
	if !ok {
		why = reason
	}
	return oneLine("hikoutei: " + why + ": not imported, the system keeps its value; fix or clear the cell")
}

func conflictNote(system string) string {
	return oneLine("hikoutei: conflict: kept " + clip(system, 80) + " — see Sync_Conflicts")
}

// oneLine keeps a note on one line and within maxNoteChars.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, maxNoteChars)
}

// clip shortens s to at most n characters, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// NoteChanges returns the notes to write so the sheet goes from shown (what
// was last written, by cell key) to desired: changed or new notes, and a
// clearing note (Text "") for each shown note no longer desired; sorted by
// cell.
func NoteChanges(shown map[string]CellNote, desired []CellNote) []CellNote {
	want := make(map[string]CellNote, len(desired))
	var out []CellNote
	for _, n := range desired {
		want[n.Key()] = n
		if cur, ok := shown[n.Key()]; !ok || cur.Text != n.Text {
			out = append(out, n)
		}
	}
	for _, k := range sortedKeys(shown) {
		if _, ok := want[k]; !ok {
			n := shown[k]
			n.Text = ""
			out = append(out, n)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Key() < out[b].Key() })
	return out
}
