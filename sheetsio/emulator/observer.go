package emulator

import "slices"

// Access is what one API request or one person's act did to a
// spreadsheet's cells, as an Observer sees it: the cells it rendered into
// its response and the tabs whose displayed values it changed.
type Access struct {
	Spreadsheet string
	// Person is set for a Person's act (an edit or a look at a tab);
	// otherwise the access is an API request.
	Person bool
	// Reads are the ranges rendered into the response (values or grid
	// data), in order. A write's response is rendered after its changes.
	Reads []Region
	// Changed are the tabs whose displayed values changed, before and
	// after the access (trailing empties trimmed, as Person.Displayed).
	Changed []TabChange
}

// Region is a rectangle of a tab: 0-based rows and columns, ends
// exclusive.
type Region struct {
	Tab            string
	R0, R1, C0, C1 int
}

// TabChange is one tab's displayed values before and after an access.
type TabChange struct {
	Tab           string
	Before, After [][]string
}

// Observer sees every access to a spreadsheet's cells, one at a time, in
// the order the accesses take effect. It is called under the emulator's
// state lock: it must not call the Emulator. It costs a rendering of every
// tab before and after each access, so it is meant for small test books.
type Observer func(Access)

// tap collects the ranges one access renders.
type tap struct{ reads []Region }

// noteRead records that g of s was rendered into a response.
func (b *book) noteRead(s *sheet, g gridRange) {
	if b.tap != nil {
		b.tap.reads = append(b.tap.reads, Region{Tab: s.Title, R0: g.R0, R1: g.R1, C0: g.C0, C1: g.C1})
	}
}

// shownTabs renders every tab, by sheetId (nil when nobody observes).
func (e *Emulator) shownTabs(b *book) map[int64][][]string {
	if e.opts.Observe == nil {
		return nil
	}
	out := make(map[int64][][]string, len(b.Sheets))
	for _, s := range b.Sheets {
		out[s.ID] = b.displayedTab(s)
	}
	return out
}

// startTap starts collecting b's reads when somebody observes.
func (e *Emulator) startTap(b *book) {
	if e.opts.Observe != nil {
		b.tap = &tap{}
	}
}

// report tells the observer what an access did: the reads b collected,
// and the tabs of after that differ from before (a tab added or removed
// counts as changed from or to nothing).
func (e *Emulator) report(id string, person bool, before map[int64][][]string, after *book) {
	if e.opts.Observe == nil {
		return
	}
	var reads []Region
	if after.tap != nil {
		reads = after.tap.reads
	}
	after.tap = nil
	acc := Access{Spreadsheet: id, Person: person, Reads: reads}
	for _, s := range after.Sheets {
		now := after.displayedTab(s)
		if was := before[s.ID]; !sameShown(was, now) {
			acc.Changed = append(acc.Changed, TabChange{Tab: s.Title, Before: was, After: now})
		}
	}
	if len(acc.Reads) > 0 || len(acc.Changed) > 0 {
		e.opts.Observe(acc)
	}
}

func sameShown(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
