package gsheets

import (
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// appendCursor is, per sheetId, the 0-based grid row where the next new
// rows of a dispatch are inserted (pasteBlock): the row after the last
// row with data the preflight read, less the rows the dispatch deletes
// first, or what the trust kept from the last dispatch. A sheet absent
// from it appends with appendCells.
type appendCursor map[int64]int

// newCursor plans where a dispatch's new rows go: nothing when the
// spreadsheet's locale is not one whose paste parsing pastable knows;
// after a preflight (blind false), every tab an op targets; for a blind
// append, the tabs whose end the trust kept.
func newCursor(w *sheetsio.Workbook, snaps map[string]*sheetsio.TabSnapshot, units []*unit, blind bool) appendCursor {
	tr := trustOf(w)
	if !pasteLocales[tr.spreadsheetLocale()] {
		return nil
	}
	cur := appendCursor{}
	for _, t := range opTabs(w, snaps, units) {
		s := snaps[t]
		if spec, _ := w.Schema().Tab(t); offersChoices(spec) {
			continue // appendCells fills rows the dropdown already covers
		}
		if blind {
			if at, ok := tr.end(t); ok {
				cur[s.SheetID] = at
			}
			continue
		}
		cur[s.SheetID] = lastDataRow(s) - deletesOn(units, s.SheetID)
	}
	return cur
}

// offersChoices reports whether a column of spec is a dropdown
// (provisioned over the rows the grid has, see choiceRequests): inserted
// rows might not carry it, so such a tab keeps appendCells.
func offersChoices(spec layout.TabSpec) bool {
	for _, c := range spec.Columns {
		if len(c.Choices) > 0 {
			return true
		}
	}
	return false
}

// opTabs lists the row tabs the units write (never receipts or authority).
func opTabs(w *sheetsio.Workbook, snaps map[string]*sheetsio.TabSnapshot, units []*unit) []string {
	ids := map[int64]bool{}
	for _, u := range units {
		if u.op >= 0 && u.sweep == 0 && u.note == 0 {
			ids[u.sheetID] = true
		}
	}
	var out []string
	for t, s := range snaps {
		spec, ok := w.Schema().Tab(t)
		if ok && ids[s.SheetID] && spec.Anchor >= 0 && spec.Role != layout.RoleReceipts && t != layout.AuthorityTab {
			out = append(out, t)
		}
	}
	return out
}

// lastDataRow is the 1-based grid row of the last row the snapshot shows
// (the header's, 1, when none): the 0-based row after it.
func lastDataRow(s *sheetsio.TabSnapshot) int {
	last := 1
	for _, r := range s.Rows {
		last = max(last, r.SheetRow)
	}
	return last
}

func deletesOn(units []*unit, sheetID int64) int {
	n := 0
	for _, u := range units {
		if u.order == orderDelete && u.sheetID == sheetID {
			n++
		}
	}
	return n
}

// compact is the set of sheets whose appends go as paste blocks.
func (c appendCursor) compact() map[int64]bool {
	out := make(map[int64]bool, len(c))
	for id := range c {
		out[id] = true
	}
	return out
}

// advance moves the cursor past the rows a batchUpdate of units inserted.
func (c appendCursor) advance(units []*unit) {
	for _, u := range units {
		for _, a := range u.appends {
			if _, ok := c[a.sheetID]; ok {
				c[a.sheetID]++
			}
		}
	}
}

// settleEnds keeps, for the next blind append, where each tab the
// dispatch wrote ends: the cursor when no batchUpdate on the tab has an
// uncertain outcome; otherwise the end is forgotten (the next dispatch
// reads).
func settleEnds(w *sheetsio.Workbook, snaps map[string]*sheetsio.TabSnapshot, units []*unit, c appendCursor) {
	tr := trustOf(w)
	for _, t := range opTabs(w, snaps, units) {
		id := snaps[t].SheetID
		at, ok := c[id]
		for _, u := range units {
			if u.sheetID == id && u.err != nil && u.err.Outcome == sheetsio.Uncertain {
				ok = false
			}
		}
		if ok {
			tr.setEnd(t, at)
		} else {
			tr.forgetEnd(t)
		}
	}
}

// blindEndsKnown reports whether a blind append of b knows where every
// tab it appends to compactly ends; a tab whose end is unknown is read
// first, once. A spreadsheet in a locale pastable does not know and a
// tab with a dropdown append with appendCells: they need no end.
func blindEndsKnown(w *sheetsio.Workbook, b sheetsio.Batch) bool {
	tr := trustOf(w)
	if !pasteLocales[tr.spreadsheetLocale()] {
		return true
	}
	for _, op := range b.Ops {
		spec, _ := w.Schema().Tab(op.Tab)
		if _, ok := tr.end(op.Tab); !ok && !offersChoices(spec) {
			return false
		}
	}
	return true
}
