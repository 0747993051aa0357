package sheetsio

import "testing"

func TestI21_SurplusCopyOnlyAmongIdenticalDuplicates(t *testing.T) {
	a := Row{Anchor: "7", Hash: "h", SheetRow: 2}
	b := Row{Anchor: "7", Hash: "h", SheetRow: 9}
	c := Row{Anchor: "7", Hash: "other", SheetRow: 5}
	if r, ok := SurplusCopy([]Row{a, b}, "h"); !ok || r.SheetRow != 9 {
		t.Fatalf("identical copies: %+v %v", r, ok)
	}
	for name, rows := range map[string][]Row{"single row": {a}, "copies differ": {a, b, c}, "none": nil} {
		if _, ok := SurplusCopy(rows, "h"); ok {
			t.Errorf("%s: a surplus copy was picked", name)
		}
	}
	if _, ok := SurplusCopy([]Row{a, b}, "x"); ok {
		t.Error("copies that do not show the expected hash were picked")
	}
}
