package engine_test

import (
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/effects"
)

// TestI28_APassOverAnUnchangedReadComparesTheNextWindowUndecodedAndAnEditIsDecidedAtOnce:
// with a window of 4 rows, once a pass queued nothing the store knows its
// read (KnownRepair) and the next passes, reading the same bytes, compare
// only the next window of rows undecoded — and still correct, within one
// cycle, a row left stale by a run without sync near the end of the
// anchors. A person's edit changes the read: the pass that follows reads
// again, decodes, and corrects the edit at once, though the store did not
// move. A read the store did not keep is ErrReadUndecoded.
func TestI28_APassOverAnUnchangedReadComparesTheNextWindowUndecodedAndAnEditIsDecidedAtOnce(t *testing.T) {
	const n = 30
	tabs := []string{airportSystem, "Airport_Input"}
	y := changedOffline(t, n, []int{27}, nil)
	mustT(t, y.e.SetCanonicalWindow(4))
	if b, err := y.e.KnownRepairOf(tabs...); err != nil || !b.IsZero() {
		t.Fatalf("before any pass the store knows a read: %v %v", b, err)
	}
	undecoded, passes := 0, 0
	for y.cellOf(airportSystem, "a27", "name") != "offline 27" {
		if passes++; passes > (n+3)/4+1 {
			t.Fatalf("the stale row is not corrected after %d passes", passes-1)
		}
		b, err := y.e.KnownRepairOf(tabs...)
		mustT(t, err)
		if !b.IsZero() {
			undecoded++
		}
		reps, err := y.disp.AntiEntropy(ctx)
		mustT(t, err)
		if r := reps[airportSystem]; r.Drifted != 0 || r.Missing != 0 || r.Stale > 1 {
			t.Fatalf("pass %d: %+v", passes, r)
		}
		y.drain()
	}
	if kept := y.e.Stats().Kept; undecoded < passes-2 || kept < uint64(2*undecoded-1) { // the Input tab of the pass that queued is read again
		t.Fatalf("%d of %d passes knew their read, %d tabs were compared undecoded", undecoded, passes, kept)
	}
	reps, err := y.disp.AntiEntropy(ctx) // decoded: the correction moved the store
	mustT(t, err)
	if reps[airportSystem].Diverged() != 0 {
		t.Fatalf("after the correction: %+v", reps)
	}
	b, err := y.e.KnownRepairOf(tabs...)
	mustT(t, err)
	if b.IsZero() {
		t.Fatal("a pass that queued nothing kept no read")
	}
	y.overtypedAndRewritten(airportSystem, "a05", "name", "vandalised", "Airport 5")
	if _, err := y.e.RepairUndecoded(airportSystem, y.e.Checkpoint(), [32]byte{1}); !errors.Is(err, effects.ErrReadUndecoded) {
		t.Fatalf("a read the store did not keep: %v", err)
	}
}
