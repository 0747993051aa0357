package engine

import (
	"strings"

	"github.com/hikoutei/hikoutei-go/projector"
)

// Reconciliation searches for the entities a spreadsheet was never told
// about (QueueUnsynced). A search that found them all (fewer than its
// max) and queued a row for each leaves every entity existing at its
// checkpoint told: the next search of the same spreadsheet, over the same
// row tabs of the same read model, reads only the entities written since
// (projector.UnsyncedAfter), so a pass costs what changed, not the store.
// A new read model, other row tabs, a switch of target or a tab's move,
// or a projector that forgot what it wrote, make the next search a full
// one. The marks live in memory: a reopened store searches in full once.

// toldMark is where a spreadsheet was last told about every entity: at
// checkpoint at of proj, over the row tabs tabs names (tabsKey).
type toldMark struct {
	proj *projector.Projector
	at   uint64
	tabs string
}

// unsyncedSearch is one search's outcome: the rows found, the checkpoint
// it read and its row tabs, and whether it read every entity.
type unsyncedSearch struct {
	refs []projector.EntityRef
	at   uint64
	tabs string
	full bool
}

// searchUnsynced finds up to max rows spreadsheet was never told about:
// the entities written since its mark when it has one, else every entity.
func (e *Engine) searchUnsynced(spreadsheet string, max int) (unsyncedSearch, error) {
	rowTabs := e.tabsOf(spreadsheet)
	s := unsyncedSearch{at: e.proj.Checkpoint(), tabs: e.tabsKey(rowTabs)}
	if t, ok := e.told[spreadsheet]; ok && t.proj == e.proj && t.tabs == s.tabs {
		refs, ok, err := e.proj.UnsyncedAfter(spreadsheet, t.at, max, rowTabs)
		if err != nil || ok {
			s.refs = refs
			return s, err
		}
	}
	s.full = true
	refs, err := e.proj.Unsynced(spreadsheet, max, rowTabs)
	s.refs = refs
	return s, err
}

// toldAt records, once s's rows are committed, that spreadsheet was told
// about every entity at s's checkpoint when complete (s found fewer than
// its max, each queued). A full search that did not complete forgets the
// mark; a search since the mark that did not keeps it (the entities
// written since are read again).
func (e *Engine) toldAt(spreadsheet string, s unsyncedSearch, complete bool) {
	if e.told == nil {
		e.told = map[string]toldMark{}
	}
	switch {
	case complete:
		e.told[spreadsheet] = toldMark{proj: e.proj, at: s.at, tabs: s.tabs}
	case s.full:
		delete(e.told, spreadsheet)
	}
}

// tabsKey names the row tabs rowTabs gives each declared entity.
func (e *Engine) tabsKey(rowTabs func(entity string) []string) string {
	var b strings.Builder
	for _, t := range e.reg.Shapes() {
		b.WriteString(t.Name)
		for _, tab := range rowTabs(t.Name) {
			b.WriteByte(0)
			b.WriteString(tab)
		}
		b.WriteByte(1)
	}
	return b.String()
}
