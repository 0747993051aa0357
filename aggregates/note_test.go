package aggregates

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDesiredNotesCoverColumnQuarantineAndOpenConflictsConflictWins(t *testing.T) {
	qs := []Quarantine{
		{Tab: "Part_Input", Anchor: "2", Column: "qty", Reason: "cell_type_mismatch"},
		{Tab: "Part_Input", Anchor: "1", Column: "qty", Reason: "cell_formula"},
		{Tab: "Part_Input", Anchor: "", Column: "__hikoutei_row_id", Reason: "cell_edge_whitespace"}, // no row to note
		{Tab: "Part_Input", Anchor: "3", Reason: ReasonRowDeleted},                                   // no column
	}
	open := []Conflict{{Tab: "Part_Input", Anchor: "1", Field: "qty", SystemValue: "5282"}}
	got := DesiredNotes(qs, open)
	if len(got) != 2 {
		t.Fatalf("notes %+v", got)
	}
	if got[0].Anchor != "1" || got[0].Text != "hikoutei: conflict: kept 5282 — see Sync_Conflicts" {
		t.Fatalf("the conflict's note must win: %+v", got[0])
	}
	if got[1].Anchor != "2" || !strings.Contains(got[1].Text, "not a value of this column's type") {
		t.Fatalf("quarantine note %+v", got[1])
	}
}

func TestNotesAreOneLineAndAtMost200Characters(t *testing.T) {
	long := strings.Repeat("x\n", 500)
	for _, n := range DesiredNotes([]Quarantine{{Tab: "T", Anchor: "a", Column: "c", Reason: long}},
		[]Conflict{{Tab: "T", Anchor: "b", Field: "c", SystemValue: long}}) {
		if utf8.RuneCountInString(n.Text) > maxNoteChars || strings.ContainsAny(n.Text, "\n\r") {
			t.Fatalf("note %q", n.Text)
		}
	}
}

func TestNoteChangesWriteOnlyDifferencesAndClearWhatIsNoLongerWanted(t *testing.T) {
	a := CellNote{Tab: "T", Anchor: "a", Column: "c", Text: "one"}
	b := CellNote{Tab: "T", Anchor: "b", Column: "c", Text: "two"}
	shown := map[string]CellNote{a.Key(): a, b.Key(): b}
	b2 := b
	b2.Text = "changed"
	got := NoteChanges(shown, []CellNote{b2})
	if len(got) != 2 || got[0].Anchor != "a" || got[0].Text != "" || got[1] != b2 {
		t.Fatalf("changes %+v", got)
	}
	if got := NoteChanges(shown, []CellNote{a, b}); len(got) != 0 {
		t.Fatalf("unchanged notes rewritten: %+v", got)
	}
}
