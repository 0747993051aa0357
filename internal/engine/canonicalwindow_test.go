package engine_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// changedOffline syncs n airports (a00, a01, …), then a run without sync
// renames those of changed and removes those of removed; the store that
// comes back syncs to the same sheet, drained: those rows still show the
// store's last write, stale against canonical state.
func changedOffline(t *testing.T, n int, changed, removed []int) *synced {
	t.Helper()
	dir := t.TempDir()
	x := openSynced(t, dir)
	for i := range n {
		commit(t, x.Store, &Airport{ID: fmt.Sprintf("a%02d", i), Name: fmt.Sprintf("Airport %d", i), Altitude: int64(i)})
	}
	x.drain()
	sheet := x.sheet
	mustT(t, x.Close())
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1,
		LeaseTTL: testLeaseTTL, Logger: quiet}, airports...)
	mustT(t, err)
	u := s.Begin()
	for _, i := range changed {
		mustT(t, u.Persist(&Airport{ID: fmt.Sprintf("a%02d", i), Name: fmt.Sprintf("offline %d", i), Altitude: int64(i)}))
	}
	for _, i := range removed {
		mustT(t, u.Remove(&Airport{ID: fmt.Sprintf("a%02d", i)}))
	}
	_, err = u.Commit(ctx)
	mustT(t, err)
	mustT(t, s.Close())
	y := openSyncedOn(t, dir, sheet, nil, airports)
	y.drain()
	return y
}

// seen reads tab as an anti-entropy pass hands it to the store: each
// anchored row's anchor and full-row hash.
func (x *synced) seen(tab string) aggregates.SeenTab {
	x.t.Helper()
	snaps, err := x.prov.SnapshotKnown(ctx, x.wb, tab)
	mustT(x.t, err)
	out := aggregates.SeenTab{Tab: tab}
	for _, r := range snaps[tab].Rows {
		if r.Anchor != "" {
			out.Rows = append(out.Rows, aggregates.SeenRow{Anchor: r.Anchor, Hash: r.Hash})
		}
	}
	return out
}

// queueKeys are the corrections as comparable strings, sorted and
// without repeats.
func queueKeys(qs []aggregates.Queue) []string {
	var out []string
	for _, q := range qs {
		out = append(out, fmt.Sprintf("%+v", q))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestI28_TheCanonicalWindowsOfACycleDecideWhatOneWholePassDecides: for
// random stale rows (changed while sync was off), rows of records removed
// meanwhile, edited cells and deleted rows, and random window sizes, the
// passes of one cycle of the canonical window together queue exactly the
// corrections one pass comparing every row queues; every pass of the
// cycle finds every damaged row (drifted, missing) and compares at most a
// window of rows that show the store's last write.
func TestI28_TheCanonicalWindowsOfACycleDecideWhatOneWholePassDecides(t *testing.T) {
	const n = 40
	for seed := range uint64(3) {
		rnd := rand.New(rand.NewPCG(seed, 28))
		perm := rnd.Perm(n)
		changed, removed, edited, deleted := perm[:4+rnd.IntN(6)], perm[10:12], perm[12:14], 2+rnd.IntN(n-4)
		y := changedOffline(t, n, changed, removed)
		p := y.sheet.Person()
		for _, i := range edited {
			mustT(t, p.Type(airportSystem, y.cellRef(airportSystem, fmt.Sprintf("a%02d", i), "name"), "vandalised"))
		}
		mustT(t, p.DeleteRows(airportSystem, deleted, 2))
		for _, tab := range []string{airportSystem, "Airport_Input"} {
			seen := y.seen(tab)
			whole, wq, err := y.e.RepairDry(seen, 0)
			mustT(t, err)
			if tab == airportSystem && (whole.Stale < len(changed)-2 || whole.Drifted < 1 || whole.Missing != 2) {
				t.Fatalf("seed %d: the whole pass %+v: want stale, drifted and missing rows", seed, whole)
			}
			for _, w := range []int{1, 2, 5, 13, 39, 1000} {
				var all []aggregates.Queue
				for range (n+w-1)/w + 1 { // a cycle and one more window
					rep, q, err := y.e.RepairDry(seen, w)
					mustT(t, err)
					if rep.Drifted != whole.Drifted || rep.Missing != whole.Missing || rep.Duplicated != whole.Duplicated {
						t.Fatalf("seed %d %s window %d: pass %+v, whole %+v: a damaged row was left for later", seed, tab, w, rep, whole)
					}
					if rep.Stale > w {
						t.Fatalf("seed %d %s window %d: %d stale rows in one pass", seed, tab, w, rep.Stale)
					}
					all = append(all, q...)
				}
				if got, want := queueKeys(all), queueKeys(wq); !slices.Equal(got, want) {
					t.Fatalf("seed %d %s window %d: a cycle queued\n%q\none whole pass\n%q", seed, tab, w, got, want)
				}
			}
		}
	}
}

// TestI28_ADamagedCellOutsideTheCanonicalWindowIsFoundAtOnceAStaleRowByALaterPass:
// with a window of 4 rows, a cell edited on a row the first window does
// not reach is corrected by the first pass; a row left stale by a run
// without sync, near the end of the anchors, is corrected by a later
// pass of the cycle, though nothing changes between the passes that
// precede it (a pass over an unchanged read is skipped only once the
// passes over it compared every row).
func TestI28_ADamagedCellOutsideTheCanonicalWindowIsFoundAtOnceAStaleRowByALaterPass(t *testing.T) {
	const n = 30
	y := changedOffline(t, n, []int{27}, nil)
	mustT(t, y.e.SetCanonicalWindow(4))
	mustT(t, y.sheet.Person().Type(airportSystem, y.cellRef(airportSystem, "a29", "name"), "vandalised"))
	reps, err := y.disp.AntiEntropy(ctx)
	mustT(t, err)
	if r := reps[airportSystem]; r.Drifted != 1 || r.Stale != 0 || r.Queued != 1 {
		t.Fatalf("first pass %+v: want the edited cell corrected, the stale row not yet compared", r)
	}
	y.drain()
	if got := y.cellOf(airportSystem, "a29", "name"); got != "Airport 29" {
		t.Fatalf("a29 shows %q after the first pass", got)
	}
	passes := 1
	for y.cellOf(airportSystem, "a27", "name") != "offline 27" {
		if passes++; passes > (n+3)/4+1 {
			t.Fatalf("the stale row is not corrected after %d passes", passes-1)
		}
		reps, err := y.disp.AntiEntropy(ctx)
		mustT(t, err)
		if r := reps[airportSystem]; r.Drifted != 0 || r.Stale > 1 {
			t.Fatalf("pass %d: %+v", passes, r)
		}
		y.drain()
	}
	for range (n + 3) / 4 {
		reps, err := y.disp.AntiEntropy(ctx)
		mustT(t, err)
		if reps[airportSystem].Diverged() != 0 || reps["Airport_Input"].Diverged() != 0 {
			t.Fatalf("after the correction: %+v", reps)
		}
	}
}
