package effects

import (
	"slices"
	"strconv"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// at numbers rows from sheet row 2, as a values read does.
func at(rows ...sheetsio.Row) *sheetsio.TabSnapshot {
	for i := range rows {
		rows[i].SheetRow = i + 2
	}
	return snap(rows...)
}

func TestGridPlanEscalatesOnlyUncertifiedRowsAndEveryCopyOfADuplicatedAnchor(t *testing.T) {
	x := aggregates.TabExpectation{Rows: map[string]string{"1": "h1", "2": "h2", "3": "h3", "4": "h4"}, Evidence: map[string]bool{"hq": true}}
	blank := sheetsio.Row{Cells: []any{nil, ""}}
	for name, tc := range map[string]struct {
		s    *sheetsio.TabSnapshot
		want sheetsio.GridRequest
	}{
		"edited rows":             {at(row("1", "h1"), row("2", "hX"), row("3", "h3"), row("4", "hY")), sheetsio.GridRequest{Rows: []int{3, 5}}},
		"recorded evidence":       {at(row("1", "hq"), row("2", "h2")), sheetsio.GridRequest{}},
		"blank rows":              {at(row("1", "h1"), blank, row("2", "hX")), sheetsio.GridRequest{Rows: []int{4}}},
		"row without anchor":      {at(row("1", "h1"), sheetsio.Row{Hash: "hN", Cells: []any{"typed"}}), sheetsio.GridRequest{Rows: []int{3}}},
		"duplicate anchor (I16)":  {at(row("2", "h2"), row("3", "h3"), row("2", "hZ")), sheetsio.GridRequest{Rows: []int{2, 4}}},
		"only a deletion":         {at(row("1", "h1")), sheetsio.GridRequest{}},
		"no data row (C04)":       {at(blank), sheetsio.GridRequest{Whole: true}},
		"blocked (C05)":           {&sheetsio.TabSnapshot{Err: sheetsio.ErrHeaderDrift}, sheetsio.GridRequest{Whole: true}},
		"missing from the values": {nil, sheetsio.GridRequest{Whole: true}},
	} {
		got := gridPlan(tc.s, x)
		if got.Whole != tc.want.Whole || !slices.Equal(got.Rows, tc.want.Rows) {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

func TestGridPlanReadsTheWholeTabBeyondMaxGridRuns(t *testing.T) {
	x := aggregates.TabExpectation{Rows: map[string]string{}}
	var rows []sheetsio.Row
	for i := range 2*maxGridRuns + 2 { // every other row edited: maxGridRuns+1 runs
		h := "h"
		if i%2 == 0 {
			h = "edited"
		}
		a := strconv.Itoa(i)
		x.Rows[a] = "h"
		rows = append(rows, row(a, h))
	}
	if got := gridPlan(at(rows...), x); !got.Whole {
		t.Fatalf("%d runs read row by row", runs(got.Rows))
	}
	if got := gridPlan(at(rows[:2*maxGridRuns]...), x); got.Whole || len(got.Rows) != maxGridRuns {
		t.Fatalf("%d runs: %+v", maxGridRuns, got)
	}
}
