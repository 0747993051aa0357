package engine

import (
	"golang.org/x/text/unicode/norm"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// shownSource is the non-blank rows an observation covers, decoded a
// window at a time: every row of a whole grid read, or every row of the
// values read joined to the partial grid read (partialRows, decoded at
// once: the grid rows a partial read holds are few).
type shownSource struct {
	spec   layout.TabSpec
	grid   []sheetsio.GridRow    // whole grid read: its rows
	idx    []int                 // whole grid read: the non-blank rows' indexes in grid
	shown  []aggregates.ShownRow // partial read: every shown row
	copies map[string]int        // non-blank rows of each anchor ("" left out)
}

// newShownSource lists the rows of o; none when blocked (the tab's rows
// were not read).
func newShownSource(spec layout.TabSpec, o effects.TabObservation, blocked bool) *shownSource {
	s := &shownSource{spec: spec, copies: map[string]int{}}
	switch {
	case blocked:
	case o.Grid.Partial:
		s.shown = partialRows(spec, o.Values, o.Grid)
		for _, sr := range s.shown {
			s.count(sr.Anchor)
		}
	default:
		s.grid = o.Grid.Rows
		for i := range s.grid {
			if r := &s.grid[i]; !blankObserved(r.Cells) {
				s.idx = append(s.idx, i)
				s.count(r.Anchor)
			}
		}
	}
	return s
}

func (s *shownSource) count(anchor string) {
	if anchor != "" {
		s.copies[anchor]++
	}
}

func (s *shownSource) len() int { return len(s.idx) + len(s.shown) }

// rows are the shown rows [from, to), decoded.
func (s *shownSource) rows(from, to int) []aggregates.ShownRow {
	if s.shown != nil {
		return s.shown[from:to]
	}
	out := make([]aggregates.ShownRow, 0, to-from)
	for _, i := range s.idx[from:to] {
		r := &s.grid[i]
		out = append(out, aggregates.ShownRow{Anchor: r.Anchor, Grid: decodeGridRow(s.spec, r)})
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
