package hikoutei

import (
	"golang.org/x/text/unicode/norm"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// shownRow is one non-blank row of an Input tab as one observation covers
// it: read with grid data (grid), or, under a partial grid read, certified
// by the pass's values read and left out (grid nil: anchor and hash are
// the values read's), or shifted: the grid read found another row where
// the values read showed this one.
type shownRow struct {
	anchor, hash string
	grid         *sheetsio.GridRow
	shifted      bool
}

// shownRows lists the non-blank rows an observation covers: every row of
// a whole grid read, or every row of the values read joined to the partial
// grid read (partialRows).
func (ob *observer) shownRows(o effects.TabObservation) []shownRow {
	if o.Grid.Partial {
		return partialRows(ob.spec, o.Values, o.Grid)
	}
	out := make([]shownRow, 0, len(o.Grid.Rows))
	for i := range o.Grid.Rows {
		if r := &o.Grid.Rows[i]; !blankObserved(r.Cells) {
			out = append(out, shownRow{anchor: r.Anchor, grid: r})
		}
	}
	return out
}

// partialRows joins the non-blank rows of the values read to the rows the
// later partial grid read returned for the same sheet rows. Rows are
// identified by anchor, never by row number (C06): a grid row is used only
// if it still shows the anchor the values read showed there; otherwise a
// person inserted, deleted or sorted rows between the two reads, and the
// row is shifted: decided on a later pass, never taken as data.
func partialRows(spec layout.TabSpec, values *sheetsio.TabSnapshot, g *sheetsio.GridSnapshot) []shownRow {
	read := make(map[int]*sheetsio.GridRow, len(g.Rows))
	for i := range g.Rows {
		read[g.Rows[i].SheetRow] = &g.Rows[i]
	}
	out := make([]shownRow, 0, len(values.Rows))
	for i := range values.Rows {
		v := &values.Rows[i]
		if blankValues(v.Cells) {
			continue
		}
		sr := shownRow{anchor: v.Anchor, hash: v.Hash}
		if gr, ok := read[v.SheetRow]; ok {
			sr.grid, sr.shifted = gr, !sameRow(spec, v.Anchor, gr)
		}
		out = append(out, sr)
	}
	return out
}

// sameRow reports whether grid row gr is not blank and its anchor cell
// displays anchor (NFC; a formula computing it counts, so that the row's
// decoding quarantines the formula).
func sameRow(spec layout.TabSpec, anchor string, gr *sheetsio.GridRow) bool {
	if spec.Anchor < 0 || spec.Anchor >= len(gr.Cells) || blankObserved(gr.Cells) {
		return false
	}
	s, _ := gr.Cells[spec.Anchor].Value.(string)
	return norm.NFC.String(s) == anchor
}

// blankValues reports whether a values-read row shows nothing (every cell
// nil or "").
func blankValues(cells []any) bool {
	for _, c := range cells {
		if s, ok := c.(string); c != nil && (!ok || s != "") {
			return false
		}
	}
	return true
}
