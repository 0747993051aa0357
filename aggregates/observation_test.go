package aggregates

import (
	"testing"
)

func TestClassifyFieldC04BlankOnlyOverNonEmpty(t *testing.T) {
	const blank, a, b, s = "h(nil)", "h(A)", "h(B)", "h(S)"
	for _, tc := range []struct {
		name                       string
		observed, shown, canonical string
		known                      bool
		want                       verdict
	}{
		{"converged", b, s, b, true, verdictUnchanged},
		{"edit over shown canonical", a, b, b, true, verdictEdit},
		{"blank over non-empty shown", blank, b, b, true, verdictEdit},
		{"blank over blank", blank, blank, blank, true, verdictUnchanged},
		{"stale: sheet still shows the old write", s, s, b, true, verdictStale},
		{"both changed (I11)", a, s, b, true, verdictConflict},
		{"no confirmed baseline (I14)", a, "", b, false, verdictConflict},
	} {
		if got := classifyField(tc.observed, tc.shown, tc.canonical, tc.known); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestConflictAndQuarantineIDsAreDeterministic(t *testing.T) {
	if c1, c2 := ConflictID("b", "f", 0), ConflictID("b", "f", 0); c1 != c2 || c1 == ConflictID("b", "f", 1) {
		t.Fatal("conflict ids must be stable per epoch and differ across epochs (no ABA)")
	}
	if q1, q2 := quarantineID("t", "a", "h", "r"), quarantineID("t", "a", "h", "r"); q1 != q2 || q1 == quarantineID("t", "a", "h2", "r") {
		t.Fatal("quarantine ids")
	}
}

// I35: a tab's layout migration clears the evidence of every row a read
// under the old layout recorded (in id order), and keeps deletion
// evidence, which names no row to read again.
func TestI35_ReexaminedClearsRowEvidenceKeepsDeletions(t *testing.T) {
	active := map[string]Quarantine{
		"q2": {ID: "q2", Tab: "T_Input", Anchor: "b", RowHash: "hb", Reason: "cell_type_mismatch", Column: "rank"},
		"q1": {ID: "q1", Tab: "T_Input", Anchor: "a", RowHash: "ha", Reason: ReasonDuplicateAnchor},
		"q3": {ID: "q3", Tab: "T_Input", Anchor: "c", Reason: ReasonRowDeleted},
	}
	got := Reexamined(active)
	if len(got) != 2 || got[0].QuarantineID != "q1" || got[1].QuarantineID != "q2" || got[1].Anchor != "b" || got[1].Tab != "T_Input" {
		t.Fatalf("Reexamined = %+v", got)
	}
}
