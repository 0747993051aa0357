package evolve

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Outcomes of a person's edit. Every edit ends in one of the first six;
// an edit with none is lost.
const (
	outAccepted    = "accepted"    // observation.accepted carries its value
	outConflict    = "conflict"    // a candidate (conflict) carries its value
	outQuarantined = "quarantined" // its row was quarantined after it was typed
	outRetired     = "retired"     // its value stays in a retired column
	outReview      = "review"      // its row stays for review (its record was removed)
	// outWindow: a store write overwrote it, and the emulator's journal
	// proves the store's last read of its cell came before it was typed —
	// the documented preflight-to-write window (no compare-and-set in
	// Sheets), counted apart, not a failure.
	outWindow = "overwritten_in_write_window"
	outLost   = "lost"
)

var outcomes = []string{outAccepted, outConflict, outQuarantined, outRetired, outReview, outWindow, outLost}

// edit is one value a person typed into a user cell of an Input tab.
type edit struct {
	entity, tab, anchor, field, value string
	seq                               uint64 // the log head when it was typed
	closed                            bool   // typed while the store was closed
	act                               int    // the number of acts done before it (for a report)
	outcome                           string // "" until one is seen
}

func (e *edit) String() string {
	when := ""
	if e.closed {
		when = " (store closed)"
	}
	return fmt.Sprintf("%s %s.%s=%q after seq %d%s", e.tab, e.anchor, e.field, e.value, e.seq, when)
}

// edits are a run's person's edits.
type edits struct {
	all     []*edit
	byValue map[string]*edit
	// pending is the edit of a cell (entity/anchor/field) with no outcome
	// yet: the person does not type into a column of that name on that
	// row again before it has one (an edit typed over before any poll saw
	// it is the person's own, not the store's to keep) — even after its
	// field left the tab and came back, as the tab may still show the old
	// column.
	pending map[string]*edit
}

func newEdits() *edits { return &edits{byValue: map[string]*edit{}, pending: map[string]*edit{}} }

func cellKey(entity, anchor, field string) string { return entity + "/" + anchor + "/" + field }

func (es *edits) add(e *edit) {
	es.all = append(es.all, e)
	es.byValue[e.value] = e
	es.pending[cellKey(e.entity, e.anchor, e.field)] = e
}

// settle gives the edit of value its outcome (the first one seen).
func (es *edits) settle(value any, outcome string) {
	text, ok := events.CanonicalText(value)
	e := es.byValue[text]
	if !ok || e == nil || e.outcome != "" {
		return
	}
	e.outcome = outcome
	delete(es.pending, cellKey(e.entity, e.anchor, e.field))
}

// quarantined settles the edits of a row quarantined at seq.
func (es *edits) quarantined(tab, anchor string, seq uint64) {
	for _, e := range es.all {
		if e.outcome == "" && e.tab == tab && e.anchor == anchor && e.seq < seq {
			e.outcome = outQuarantined
			delete(es.pending, cellKey(e.entity, e.anchor, e.field))
		}
	}
}

// settleKept gives the pending edits of tab whose value a retired column
// of the tab shows (rows as a person sees them) that outcome: their
// cells may be typed into again.
func (es *edits) settleKept(tab string, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	retired := map[string]bool{}
	for _, row := range rows[1:] {
		for c, v := range row {
			if c < len(rows[0]) && layout.IsRetired(rows[0][c]) && v != "" {
				retired[v] = true
			}
		}
	}
	for k, e := range es.pending {
		if e.tab == tab && retired[e.value] {
			e.outcome = outRetired
			delete(es.pending, k)
		}
	}
}

// person is the person at a run's spreadsheet.
type person struct {
	p   screen
	rng *rand.Rand
	run int
	n   int
}

// screen is the spreadsheet as the person sees it (an emulator.Person).
type screen interface {
	Displayed(tab string) ([][]string, error)
	LookAndType(tab string, decide func(shown [][]string) (cell, text string)) error
}

// text is a value nobody typed before: a text, or for a number column a
// number (one time in four a text there, which quarantines the row).
func (p *person) text(f field) string {
	p.n++
	if f.kind != kindString && p.rng.IntN(4) != 0 {
		return fmt.Sprintf("%d", 900000+p.run*1000+p.n)
	}
	return fmt.Sprintf("person-%d-%d", p.run, p.n)
}

// typeInto types a new value into field f of a row of tab whose anchor
// ok accepts, as the tab shows at the moment of typing: the column is
// the one whose header names f then, so a layout migration that moves
// the columns around the edit never puts the value under another field
// than the one the edit is counted for. It returns the anchor and the
// value ("" when it typed nothing: no such column or row).
func (p *person) typeInto(tab string, f field, ok func(anchor string, rows [][]string) bool) (anchor, value string) {
	err := p.p.LookAndType(tab, func(rows [][]string) (string, string) {
		ref, a, v := p.choose(rows, f, ok)
		anchor, value = a, v
		return ref, v
	})
	if err != nil {
		return "", ""
	}
	return anchor, value
}

// choose picks, on the tab as shown, the cell of field f in a row ok
// accepts and a new value for it: the cell reference, the row's anchor
// and the value (all "" when there is no such column or row).
func (p *person) choose(rows [][]string, f field, ok func(anchor string, rows [][]string) bool) (ref, anchor, value string) {
	if len(rows) < 2 {
		return "", "", ""
	}
	c, a := indexOf(rows[0], f.name), indexOf(rows[0], layout.AnchorHeader)
	if c < 0 || c >= 26 || a < 0 {
		return "", "", ""
	}
	var cands []int
	for i, row := range rows[1:] {
		if a < len(row) && row[a] != "" && ok(row[a], rows) {
			cands = append(cands, i+1)
		}
	}
	if len(cands) == 0 {
		return "", "", ""
	}
	r := cands[p.rng.IntN(len(cands))]
	return fmt.Sprintf("%c%d", 'A'+c, r+1), rows[r][a], p.text(f)
}

func indexOf(header []string, col string) int {
	for i, h := range header {
		if strings.EqualFold(h, col) {
			return i
		}
	}
	return -1
}

// kept reads what the Input tabs keep at the end: the values in retired
// columns, and the values on rows of records no longer live, by anchor.
func (p *person) kept(tab string, live func(anchor string) bool) (retired, review map[string]string) {
	retired, review = map[string]string{}, map[string]string{}
	rows, err := p.p.Displayed(tab)
	if err != nil || len(rows) == 0 {
		return
	}
	a := indexOf(rows[0], layout.AnchorHeader)
	for _, row := range rows[1:] {
		if a < 0 || a >= len(row) {
			continue
		}
		for c, v := range row {
			switch {
			case v == "" || c == a:
			case c < len(rows[0]) && layout.IsRetired(rows[0][c]):
				retired[v] = row[a]
			case !live(row[a]):
				review[v] = row[a]
			}
		}
	}
	return retired, review
}

// cell is what the cell of column col on the row of anchor shows on tab
// ("" when there is none).
func (p *person) cell(tab, anchor, col string) string {
	rows, err := p.p.Displayed(tab)
	if err != nil || len(rows) == 0 {
		return ""
	}
	a, c := indexOf(rows[0], layout.AnchorHeader), indexOf(rows[0], col)
	for _, row := range rows[1:] {
		if a >= 0 && c >= 0 && a < len(row) && c < len(row) && row[a] == anchor {
			return row[c]
		}
	}
	return ""
}
