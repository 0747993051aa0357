package sheetcheck

import (
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func TestDuplicateAnchorsNamesEachRepeatAndIgnoresBlankAnchors(t *testing.T) {
	rows := [][]string{{"id", layout.AnchorHeader}, {"a", "a"}, {"b", "b"}, {"a", "a"}, {"", ""}, {"x", ""}, {"a", "a"}}
	if got := DuplicateAnchors(rows); !slices.Equal(got, []string{"a", "a"}) {
		t.Fatalf("duplicates %q, want a twice (its second and third rows)", got)
	}
	if got := DuplicateAnchors([][]string{{"id", "name"}, {"a"}, {"a"}}); got != nil {
		t.Fatalf("a tab without the anchor column: %q", got)
	}
}

func TestACleanReportHasNoDifferencesAndExcusedRowsAreNotDifferences(t *testing.T) {
	r := Report{Excused: []string{"a"}}
	if !r.Clean() || r.Differences() != 0 {
		t.Fatalf("%+v: excused rows are not differences", r)
	}
	r.Missing = []string{"b"}
	if r.Clean() || r.Differences() != 1 {
		t.Fatalf("%+v: a missing row is a difference", r)
	}
}
