package main

import (
	"slices"
	"testing"
)

// -rows selects steps; a table row belongs to the step that measures it.
func TestRowStepAndSelection(t *testing.T) {
	for name, want := range map[string]string{"1a x": "1", "2 x": "1", "4c x": "4", "10a x": "10a", "11 x": "11", "11b x": "11b", "9b x": "9", "5d x": "5c", "5b x": "5", "12c x": "12", "14a x": "14", "14e x": "14"} {
		if got := rowStep(name); got != want {
			t.Errorf("rowStep(%q) = %q, want %q", name, got, want)
		}
	}
	defer func(v string) { *only = v }(*only)
	*only = "1, 4"
	for id, want := range map[string]bool{"1": true, "4": true, "build": true, "3": false, "10a": false, "14": false} {
		if selected(id) != want {
			t.Errorf("selected(%q) = %v with -rows %q", id, !want, *only)
		}
	}
	if got := neededPkgs(); !slices.Equal(got, []string{".", "bench"}) {
		t.Errorf("-rows %q builds %v, want the root package's and bench/'s", *only, got)
	}
	*only = "1,10a"
	if got := neededPkgs(); !slices.Equal(got, []string{".", "./events/"}) {
		t.Errorf("-rows %q builds %v, want the root package's and events/'s", *only, got)
	}
	*only = ""
	if got := neededPkgs(); !slices.Equal(got, pkgOrder) {
		t.Errorf("every step builds %v, want %v", got, pkgOrder)
	}
}

// Every row's step names the package whose test binary it runs.
func TestEveryStepHasItsPackage(t *testing.T) {
	for _, s := range append(specs(runs{}), historySpecs()...) {
		if _, ok := stepPkgs[rowStep(s.name)]; !ok {
			t.Errorf("row %q: step %q has no package in stepPkgs", s.name, rowStep(s.name))
		}
	}
}

// Row 10a runs twice -benchtime (both sides in one process); a count of
// rounds stays as it is.
func TestChainTime(t *testing.T) {
	for bt, want := range map[string]string{"1s": "2s", "500ms": "1s", "40x": "40x"} {
		if got := chainTime(bt); got != want {
			t.Errorf("chainTime(%q) = %q, want %q", bt, got, want)
		}
	}
}
