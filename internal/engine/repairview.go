package engine

import (
	"cmp"
	"slices"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/projector"
)

// The repair view of anti-entropy. A pass over a large tab compares every
// anchor the tab shows or the store expects there; the anchors, the hash
// the store expects of each and where each shows are held once, side by
// side, in anchor order: the rows read (seen, sorted by anchor through a
// permutation, not copied) merged with the expected rows as the read
// model hands them over in anchor order (projector.TabRowsSorted). A
// pass used to hold the expected rows and the rows read each in a map of
// its own beside the sorted anchors, about twice the memory for 171,075
// rows, live at once while the dispatcher's batches were (bench/README.md,
// row 5b).

// repairView is one pass's anchors with what the store expects of each
// and what the tab showed.
type repairView struct {
	anchors  []string // every anchor shown or expected, ascending
	expected []string // anchors[i]'s expected hash ("": none)
	at       []int32  // where anchors[i]'s rows start in order (-1: not shown)
	order    []int32  // indices of seen rows, by anchor, then sheet order
	seen     []aggregates.SeenRow
	next     int               // the first row of order not yet merged
	rows     projector.TabRows // InFlight, Held, Deleted, MassDeleted
}

// repairViewOf reads the read model's rows of tab for spreadsheet and
// merges them with seen.
func (e *Engine) repairViewOf(spreadsheet string, seen aggregates.SeenTab) (*repairView, error) {
	v := newRepairView(seen.Rows)
	rows, err := e.proj.TabRowsSorted(spreadsheet, seen.Tab, v.expect)
	if err != nil {
		return nil, err
	}
	v.done()
	v.rows = rows
	return v, nil
}

// newRepairView is the view of the rows read, before the expected rows
// are merged (expect, then done).
func newRepairView(seen []aggregates.SeenRow) *repairView {
	return &repairView{seen: seen, order: seenOrder(seen), anchors: make([]string, 0, len(seen)),
		expected: make([]string, 0, len(seen)), at: make([]int32, 0, len(seen))}
}

// expect merges one expected row; the rows come in ascending anchor
// order.
func (v *repairView) expect(anchor, hash string) {
	v.next = v.shownBefore(v.next, anchor)
	v.addExpected(v.next, anchor, hash)
	if v.next < len(v.order) && v.anchorAt(v.next) == anchor {
		v.next = v.skipRun(v.next)
	}
}

// done adds the shown anchors after the last expected one.
func (v *repairView) done() {
	for v.next < len(v.order) {
		v.next = v.addShown(v.next)
	}
}

// seenOrder sorts the indices of rows by anchor, a duplicated anchor's
// rows in sheet order.
func seenOrder(rows []aggregates.SeenRow) []int32 {
	order := make([]int32, len(rows))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(rows[a].Anchor, rows[b].Anchor), cmp.Compare(a, b))
	})
	return order
}

// anchorAt is the anchor of the seen row at order[j].
func (v *repairView) anchorAt(j int) string { return v.seen[v.order[j]].Anchor }

// skipRun returns the first index of order after the run of rows that
// share order[j]'s anchor.
func (v *repairView) skipRun(j int) int {
	a := v.anchorAt(j)
	for j++; j < len(v.order) && v.anchorAt(j) == a; j++ {
	}
	return j
}

// shownBefore adds, from order[j] on, the shown anchors below limit
// (which the store does not expect) and returns where it stopped.
func (v *repairView) shownBefore(j int, limit string) int {
	for j < len(v.order) && v.anchorAt(j) < limit {
		j = v.addShown(j)
	}
	return j
}

// addShown adds order[j]'s anchor, not expected, and returns the index
// after its rows.
func (v *repairView) addShown(j int) int {
	v.anchors = append(v.anchors, v.anchorAt(j))
	v.expected = append(v.expected, "")
	v.at = append(v.at, int32(j))
	return v.skipRun(j)
}

// addExpected adds anchor, expected to show hash, shown from order[j]
// when that row carries it. An anchor the read model hands over twice
// (two targets' rows of one tab) keeps the last hash, as a map would.
func (v *repairView) addExpected(j int, anchor, hash string) {
	if n := len(v.anchors); n > 0 && v.anchors[n-1] == anchor {
		v.expected[n-1] = hash
		return
	}
	at := int32(-1)
	if j < len(v.order) && v.anchorAt(j) == anchor {
		anchor, at = v.anchorAt(j), int32(j) // the read's string: the read model's is garbage at once
	}
	v.anchors = append(v.anchors, anchor)
	v.expected = append(v.expected, hash)
	v.at = append(v.at, at)
}

// observed is the hash the tab showed for anchors[i] (its last row's, as
// aggregates.SeenTab.Index says) and whether it showed it.
func (v *repairView) observed(i int) (string, bool) {
	j := v.at[i]
	if j < 0 {
		return "", false
	}
	end := v.skipRun(int(j))
	return v.seen[v.order[end-1]].Hash, true
}

// copies is how many rows carry anchors[i] and their hashes in sheet
// order, as aggregates.SeenCopies says.
func (v *repairView) copies(i int) (int, []string) {
	j := v.at[i]
	if j < 0 {
		return 0, nil
	}
	end := v.skipRun(int(j))
	out := make([]string, 0, end-int(j))
	for k := int(j); k < end; k++ {
		out = append(out, v.seen[v.order[k]].Hash)
	}
	return len(out), out
}

// clean marks the anchors whose row shows exactly the store's last write:
// one copy, the expected hash, no effect in flight, not held.
func (v *repairView) clean() ([]bool, int) {
	clean, n := make([]bool, len(v.anchors)), 0
	for i, a := range v.anchors {
		j := v.at[i]
		if v.expected[i] == "" || j < 0 || v.skipRun(int(j)) != int(j)+1 {
			continue
		}
		if v.seen[v.order[j]].Hash == v.expected[i] && !v.rows.InFlight[a] && !v.rows.Held[a] {
			clean[i], n = true, n+1
		}
	}
	return clean, n
}
