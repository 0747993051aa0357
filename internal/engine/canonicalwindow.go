package engine

import (
	"sort"

	"github.com/hikoutei/hikoutei-go/projector"
)

// The canonical window of anti-entropy. A row that shows exactly the
// store's last write to it (one copy, the hash the store expects, no
// effect in flight, not held) can differ from canonical state only on the
// store's side: canonical state moved on with no write queued (commits
// made while sync was off: DivergenceStale), or the entity was removed
// with no delete queued. Finding that needs the row's canonical values
// read and hashed, the one cost of a pass that grows with the rows
// already synced (a backfill's passes re-read every settled row). So a
// pass compares at most canonicalWindow such rows with canonical state,
// the next ones in anchor order after the last pass's, wrapping around:
// over ceil(rows ÷ window) passes every row is compared. Every other row
// — missing, drifted, surplus, duplicated: whatever damage to the
// spreadsheet shows — differs from the store's last write and is decided
// in every pass, whatever the window (I28).

// defaultCanonicalWindow is how many rows showing the store's last write
// one pass compares with canonical state (Engine.canonicalEvery).
const defaultCanonicalWindow = 16384

// canonicalCursor is where the canonical window of one tab stands, owned
// by the writer goroutine.
type canonicalCursor struct {
	next string // the window starts at the first anchor ≥ next
	// mark is the read and checkpoint of the passes since covered began:
	// passes that changed nothing over the same read at the same
	// checkpoint; covered counts the rows they compared.
	mark    unchangedMark
	covered int
	kept    *keptRead // what the last pass kept of its read (keptread.go)
}

// canonicalWindow is one pass's window over a tab's sorted anchors:
// clean[i] says anchors[i] shows the store's last write; the window is
// the span anchors from from on (wrapping) that hold its clean rows.
type canonicalWindow struct {
	anchors    []string
	clean      []bool
	from, span int
	compared   int // clean rows in the window
	total      int // clean rows in all
}

// in reports whether the clean row at i is compared in this pass (a row
// that is not clean always is).
func (w canonicalWindow) in(i int) bool {
	n := len(w.clean)
	return !w.clean[i] || (i-w.from+n)%n < w.span
}

// cleanRows marks the anchors whose row shows exactly the store's last
// write: one copy, the expected hash, not pending (no effect in flight,
// not written after the pass's base), not held.
func cleanRows(anchors []string, rows projector.TabRows, observed map[string]string, copies map[string][]string) ([]bool, int) {
	clean, n := make([]bool, len(anchors)), 0
	for i, a := range anchors {
		want, expected := rows.Expected[a]
		got, shown := observed[a]
		_, dup := copies[a]
		if expected && shown && !dup && got == want && !rows.Pending(a) && !rows.Held[a] {
			clean[i], n = true, n+1
		}
	}
	return clean, n
}

// canonicalWindowOf picks the window of this pass over anchors (sorted)
// from c and moves c past it.
func (e *Engine) canonicalWindowOf(c *canonicalCursor, anchors []string, clean []bool, total int) canonicalWindow {
	w := canonicalWindow{anchors: anchors, clean: clean, total: total, span: len(anchors)}
	size := e.canonicalEvery()
	if total <= size || len(anchors) == 0 {
		w.compared = total
		return w
	}
	n := len(anchors)
	w.from = sort.SearchStrings(anchors, c.next) % n
	for j := range n {
		if clean[(w.from+j)%n] {
			w.compared++
		}
		if w.compared == size {
			w.span = j + 1
			break
		}
	}
	c.next = anchors[(w.from+w.span)%n]
	return w
}

// canonicalEvery is the canonical window's size (a test may set it).
func (e *Engine) canonicalEvery() int {
	if e.canonicalRows > 0 {
		return e.canonicalRows
	}
	return defaultCanonicalWindow
}

// canonicalCursorOf is tab k's cursor.
func (e *Engine) canonicalCursorOf(k passKey) *canonicalCursor {
	if e.cursors == nil {
		e.cursors = map[passKey]*canonicalCursor{}
	}
	c, ok := e.cursors[k]
	if !ok {
		c = &canonicalCursor{}
		e.cursors[k] = c
	}
	return c
}

// swept records a pass at mark m that compared w's rows, queued nothing
// and left no row for a later pass (again false) and reports whether the
// passes at m have now compared every clean row: only then may a later
// pass at the same mark be skipped (unchanged.go), since a row no pass
// compared may be stale.
func (c *canonicalCursor) swept(m unchangedMark, w canonicalWindow, again bool) bool {
	if again || !m.valid {
		c.mark, c.covered = unchangedMark{}, 0
		return false
	}
	if !c.mark.sameAs(m) {
		c.mark, c.covered = m, 0
	}
	c.covered += w.compared
	return c.covered >= w.total
}
