package sheetsio

import "testing"

// A delete of a duplicated anchor removes only the one copy its full-row
// hash names, and reports what the anchor still shows; ambiguous cases
// fail closed.
func TestDistinctCopyDeletesOnlyTheCopyItsHashNames(t *testing.T) {
	a, b, c := Row{Hash: "ha", SheetRow: 2}, Row{Hash: "hb", SheetRow: 5}, Row{Hash: "hb", SheetRow: 7}
	if row, left, ok := DistinctCopy([]Row{a, b}, "hb"); !ok || row.SheetRow != 5 || left != "ha" {
		t.Fatalf("two differing copies: %+v %q %v", row, left, ok)
	}
	if row, left, ok := DistinctCopy([]Row{a, b, Row{Hash: "hc", SheetRow: 9}}, "ha"); !ok || row.SheetRow != 2 || left != "" {
		t.Fatalf("three copies: %+v %q %v", row, left, ok)
	}
	for name, rows := range map[string][]Row{"one row": {a}, "two match": {a, b, c}, "none match": {a, Row{Hash: "hz"}}} {
		if _, _, ok := DistinctCopy(rows, "hb"); ok {
			t.Fatalf("%s: ok", name)
		}
	}
}
