package engine

import (
	"golang.org/x/text/unicode/norm"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// shownRows lists the non-blank rows an observation covers: every row of
// a whole grid read, or every row of the values read joined to the partial
// grid read (partialRows).
func shownRows(spec layout.TabSpec, o effects.TabObservation) []aggregates.ShownRow {
	if o.Grid.Partial {
		return partialRows(spec, o.Values, o.Grid)
	}
	out := make([]aggregates.ShownRow, 0, len(o.Grid.Rows))
	for i := range o.Grid.Rows {
		if r := &o.Grid.Rows[i]; !blankObserved(r.Cells) {
			out = append(out, aggregates.ShownRow{Anchor: r.Anchor, Grid: decodeGridRow(spec, r)})
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
func partialRows(spec layout.TabSpec, values *sheetsio.TabSnapshot, g *sheetsio.GridSnapshot) []aggregates.ShownRow {
	read := make(map[int]*sheetsio.GridRow, len(g.Rows))
	for i := range g.Rows {
		read[g.Rows[i].SheetRow] = &g.Rows[i]
	}
	out := make([]aggregates.ShownRow, 0, len(values.Rows))
	for i := range values.Rows {
		v := &values.Rows[i]
		if blankValues(v.Cells) {
			continue
		}
		sr := aggregates.ShownRow{Anchor: v.Anchor, Hash: v.Hash}
		if gr, ok := read[v.SheetRow]; ok {
			if sameRow(spec, v.Anchor, gr) {
				sr.Grid = decodeGridRow(spec, gr)
			} else {
				sr.Shifted = true
			}
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

func blankObserved(cells []cell.Observed) bool {
	for _, c := range cells {
		if c.Formula != "" || c.ErrorType != "" {
			return false
		}
		if s, ok := c.Value.(string); c.Value != nil && (!ok || s != "") {
			return false
		}
	}
	return true
}
