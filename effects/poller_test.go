package effects

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

func snap(rows ...sheetsio.Row) *sheetsio.TabSnapshot { return sheetsio.NewTabSnapshot("", rows) }

func row(anchor, hash string) sheetsio.Row {
	return sheetsio.Row{Anchor: anchor, Hash: hash, Cells: []any{anchor}}
}

func TestCertifyC06SortIsUnchangedDeletionAndDuplicatesAreNot(t *testing.T) {
	x := aggregates.TabExpectation{Rows: map[string]string{"1": "h1", "2": "h2"}}
	for name, tc := range map[string]struct {
		s    *sheetsio.TabSnapshot
		x    aggregates.TabExpectation
		want bool
	}{
		"same":                   {snap(row("1", "h1"), row("2", "h2")), x, true},
		"sorted":                 {snap(row("2", "h2"), row("1", "h1")), x, true},
		"blank rows ignored":     {snap(row("2", "h2"), sheetsio.Row{Cells: []any{nil, ""}}, row("1", "h1")), x, true},
		"edited":                 {snap(row("1", "hX"), row("2", "h2")), x, false},
		"deleted":                {snap(row("1", "h1")), x, false},
		"deletion recorded":      {snap(row("1", "h1")), aggregates.TabExpectation{Rows: x.Rows, Missing: map[string]bool{"2": true}}, true},
		"duplicate anchor (I16)": {snap(row("1", "h1"), row("1", "h1"), row("2", "h2")), x, false},
		"duplicate recorded": {snap(row("1", "h1"), row("1", "h1"), row("2", "h2")),
			aggregates.TabExpectation{Rows: x.Rows, Evidence: map[string]bool{"h1": true}}, true},
		"new row":       {snap(row("1", "h1"), row("2", "h2"), sheetsio.Row{Hash: "h3", Cells: []any{"typed"}}), x, false},
		"empty (C04)":   {snap(), x, false},
		"empty flagged": {snap(), aggregates.TabExpectation{Rows: x.Rows, Flagged: true}, true},
		"blocked":       {&sheetsio.TabSnapshot{Err: sheetsio.ErrHeaderDrift}, x, false},
	} {
		if got := Certify(tc.s, tc.x); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
