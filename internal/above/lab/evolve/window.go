package evolve

import (
	"strings"
	"sync"

	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// window is a run's journal of its spreadsheet, from the emulator's
// Observer: every store request and every person's act, in the order
// they took effect. It proves the documented limit of the
// preflight-to-write window (Sheets has no compare-and-set): a person's
// value, typed after the store's last read of its cell, that a store write
// overwrote — the store never saw it. An edit lost otherwise stays lost.
type window struct {
	mu    sync.Mutex
	seq   int                   // the accesses seen
	shown map[string][][]string // tab → displayed values as the last change left them
	typed map[string]typed      // a person's value → its cell and when it was typed
	read  map[string]int        // cell → the store's last read of it
	whole map[string]int        // tab → the store's last read of a tab it could not map
	// proved holds the values overwritten in a write's window: the
	// access that overwrote each.
	proved map[string]int
}

type typed struct {
	cell string // tab/anchor/column
	seq  int
}

func newWindow() *window {
	return &window{shown: map[string][][]string{}, typed: map[string]typed{}, read: map[string]int{},
		whole: map[string]int{}, proved: map[string]int{}}
}

// windowCell names a cell by tab, anchor and column header.
func windowCell(tab, anchor, header string) string {
	return tab + "/" + anchor + "/" + strings.ToLower(header)
}

// observe takes one access: its changes first (a write's response is
// rendered after them), then the store's reads.
func (w *window) observe(a emulator.Access) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	for _, ch := range a.Changed {
		if a.Person {
			w.typedIn(ch)
		} else {
			w.overwrites(ch)
		}
		w.shown[ch.Tab] = ch.After
	}
	if a.Person {
		return
	}
	for _, r := range a.Reads {
		w.readRegion(r)
	}
}

// overwritten reports whether value was proved overwritten in a write's
// window, and by which access.
func (w *window) overwritten(value string) (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seq, ok := w.proved[value]
	return seq, ok
}

// typedIn records the values a person's act put into anchored cells.
func (w *window) typedIn(ch emulator.TabChange) {
	before := cellsOf(ch.Tab, ch.Before)
	for cell, v := range cellsOf(ch.Tab, ch.After) {
		if v != "" && before[cell] != v {
			w.typed[v] = typed{cell: cell, seq: w.seq}
		}
	}
}

// overwrites proves, for every person's value a store write replaced in
// its own cell, that the store's last read of that cell came before the
// value was typed.
func (w *window) overwrites(ch emulator.TabChange) {
	after := cellsOf(ch.Tab, ch.After)
	for cell, v := range cellsOf(ch.Tab, ch.Before) {
		t, ok := w.typed[v]
		now, still := after[cell]
		if !ok || t.cell != cell || !still || now == v {
			continue
		}
		if w.lastRead(ch.Tab, cell) < t.seq {
			w.proved[v] = w.seq
		}
	}
}

func (w *window) lastRead(tab, cell string) int { return max(w.read[cell], w.whole[tab]) }

// readRegion records the store's read of the cells of r, mapped to
// anchors and headers through the tab as shown; a tab never shown counts
// as read whole.
func (w *window) readRegion(r emulator.Region) {
	rows := w.shown[r.Tab]
	a := -1
	if len(rows) > 0 {
		a = indexOf(rows[0], layout.AnchorHeader)
	}
	if a < 0 {
		w.whole[r.Tab] = w.seq
		return
	}
	for i := max(r.R0, 1); i < min(r.R1, len(rows)); i++ {
		if a >= len(rows[i]) || rows[i][a] == "" {
			continue
		}
		for c := max(r.C0, 0); c < min(r.C1, len(rows[0])); c++ {
			w.read[windowCell(r.Tab, rows[i][a], rows[0][c])] = w.seq
		}
	}
}

// cellsOf maps the anchored cells of a tab as displayed (header first)
// to their values.
func cellsOf(tab string, rows [][]string) map[string]string {
	out := map[string]string{}
	if len(rows) == 0 {
		return out
	}
	a := indexOf(rows[0], layout.AnchorHeader)
	if a < 0 {
		return out
	}
	for _, row := range rows[1:] {
		if a >= len(row) || row[a] == "" {
			continue
		}
		for c, h := range rows[0] {
			if c == a || h == "" {
				continue
			}
			v := ""
			if c < len(row) {
				v = row[c]
			}
			out[windowCell(tab, row[a], h)] = v
		}
	}
	return out
}
