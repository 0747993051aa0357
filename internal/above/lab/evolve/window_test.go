package evolve

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// TestWindowClassifiesOnlyProvedOverwrites: an edit the journal proves a
// store write overwrote after the store's last read of its cell is
// counted overwritten_in_write_window; an edit the store read before its
// write overwrote it, one overwritten in another cell's row, one whose
// row a write left alone, and one with an outcome already stay as they
// were (the first three lost, a failure).
func TestWindowClassifiesOnlyProvedOverwrites(t *testing.T) {
	const tab = "Item_Input"
	header := []string{"notes", layout.AnchorHeader}
	grid := func(a, b string) [][]string { return [][]string{header, {a, "r1"}, {b, "r2"}} }
	full := emulator.Region{Tab: tab, R0: 0, R1: 1000, C0: 0, C1: 26}
	row2 := emulator.Region{Tab: tab, R0: 2, R1: 3, C0: 0, C1: 26}
	write := func(before, after [][]string, reads ...emulator.Region) emulator.Access {
		return emulator.Access{Changed: []emulator.TabChange{{Tab: tab, Before: before, After: after}}, Reads: reads}
	}
	typeIn := func(before, after [][]string) emulator.Access {
		return emulator.Access{Person: true, Changed: []emulator.TabChange{{Tab: tab, Before: before, After: after}}}
	}
	read := func(rs ...emulator.Region) emulator.Access { return emulator.Access{Reads: rs} }
	cases := []struct {
		name     string
		accesses []emulator.Access
		value    string
		outcome  string // "" before, want
		want     string
	}{
		{"typed after the preflight, overwritten by the write", []emulator.Access{
			write(nil, grid("a", "b"), full), read(full), typeIn(grid("a", "b"), grid("p", "b")),
			write(grid("p", "b"), grid("c", "b"), full)}, "p", "", outWindow},
		{"the store read the cell after it was typed", []emulator.Access{
			write(nil, grid("a", "b")), typeIn(grid("a", "b"), grid("p", "b")), read(full),
			write(grid("p", "b"), grid("c", "b"))}, "p", "", ""},
		{"a read of another row does not hide the edit's", []emulator.Access{
			write(nil, grid("a", "b")), read(full), typeIn(grid("a", "b"), grid("p", "b")), read(row2),
			write(grid("p", "b"), grid("c", "b"))}, "p", "", outWindow},
		{"a write of another row leaves it", []emulator.Access{
			write(nil, grid("a", "b")), read(full), typeIn(grid("a", "b"), grid("p", "b")),
			write(grid("p", "b"), grid("p", "c"))}, "p", "", ""},
		{"the person typed it over again", []emulator.Access{
			write(nil, grid("a", "b")), read(full), typeIn(grid("a", "b"), grid("p", "b")),
			typeIn(grid("p", "b"), grid("q", "b"))}, "p", "", ""},
		{"an outcome seen in the log stays", []emulator.Access{
			write(nil, grid("a", "b")), read(full), typeIn(grid("a", "b"), grid("p", "b")),
			write(grid("p", "b"), grid("c", "b"))}, "p", outAccepted, outAccepted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWindow()
			for _, a := range tc.accesses {
				w.observe(a)
			}
			e := &edit{tab: tab, anchor: "r1", field: "notes", value: tc.value, outcome: tc.outcome}
			classifyWindow([]*edit{e}, w)
			if e.outcome != tc.want {
				t.Errorf("outcome %q, want %q", e.outcome, tc.want)
			}
		})
	}
}
