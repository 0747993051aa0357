package engine_test

import (
	"reflect"
	"testing"
)

// TestRowStatesInBulkAreTheRowByRowReads: the bulk read of a window of
// Input rows (a full scan's, the surplus-row cleanup's) gives, row by row,
// what the single-row read gives: a row with an open conflict and its
// candidate, a plain synced row, a removed entity's row, a row with an
// effect in flight, and an anchor the store never knew.
func TestRowStatesInBulkAreTheRowByRowReads(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	bothChanged(t, x) // parts 1 and 2; an open conflict on 1
	seedParts(t, x, 0)
	u := x.Begin()
	mustT(t, u.Persist(&Part{ID: "3", Name: "part 3", SKU: "00003", Qty: 3}))
	mustT(t, u.Persist(&Part{ID: "4", Name: "part 4", SKU: "00004", Qty: 4}))
	_, err := u.Commit(ctx)
	mustT(t, err)
	x.drain()
	u = x.Begin()
	mustT(t, u.Remove(&Part{ID: "3"}))
	_, err = u.Commit(ctx)
	mustT(t, err)
	x.drain()
	p := x.part("4")
	p.Qty = 40
	commit(t, x.Store, p) // in flight: not drained
	anchors := []string{"1", "2", "3", "4", "nobody", "2"}
	bulk, single, err := x.e.RowStatesBoth(partInput, "Part", anchors)
	mustT(t, err)
	if single["1"].OpenConflicts != 1 || single["1"].Sheet["qty"].ConflictID == "" || !single["4"].InFlight || single["3"].Exists || single["nobody"].Bound {
		t.Fatalf("the scenario is not the one described: %+v", single)
	}
	if len(bulk) != len(single) {
		t.Fatalf("bulk read %d rows, single %d", len(bulk), len(single))
	}
	for a, want := range single {
		if got := bulk[a]; !reflect.DeepEqual(got, want) {
			t.Errorf("row %s: bulk %+v, single %+v", a, got, want)
		}
	}
}
