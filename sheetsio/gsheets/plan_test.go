package gsheets

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// TestCellUpdatesOneRequestPerRunOfColumns: an update writes each run of
// adjacent columns in one updateCells covering exactly those cells, in
// column order, whatever order the columns came in.
func TestCellUpdatesOneRequestPerRunOfColumns(t *testing.T) {
	var cols []cell.Column
	next := make([]any, 9)
	for i := range next {
		cols = append(cols, cell.Column{Name: string(rune('a' + i)), Kind: cell.String})
		next[i] = string(rune('A' + i))
	}
	spec := layout.TabSpec{Columns: cols, Anchor: 8}
	reqs := cellUpdates(spec, 4, 11, []int{5, 2, 1, 7, 3}, next)
	want := [][2]int64{{1, 4}, {5, 6}, {7, 8}}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	for i, r := range reqs {
		g := r.UpdateCells.Range
		if g.SheetId != 4 || g.StartRowIndex != 11 || g.EndRowIndex != 12 || g.StartColumnIndex != want[i][0] || g.EndColumnIndex != want[i][1] {
			t.Fatalf("request %d covers %+v, want columns %v of row 11", i, g, want[i])
		}
		vals := r.UpdateCells.Rows[0].Values
		for k, c := range vals {
			if got := *c.UserEnteredValue.StringValue; got != next[int(want[i][0])+k] {
				t.Fatalf("request %d cell %d = %q", i, k, got)
			}
		}
	}
}
