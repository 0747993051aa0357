//go:build !race

package engine_test

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// Sizes of BenchmarkCoalescedDrain: a burst of coalescedCommits commits on
// coalescedKeys keys against coalescedKeys single-row commits.
const (
	coalescedKeys    = 5_000
	coalescedCommits = 100_000
	coalescedWriters = 8
)

// BenchmarkCoalescedDrain measures I32's purpose: the drain after a burst
// costs O(rows changed), not O(commits). Each iteration, interleaved,
// commits coalescedKeys airports once each (the baseline) on one store and
// coalescedCommits commits on the same number of keys on another (every
// key created, then changed 19 times), then drains each outbox through the
// real dispatcher to the emulator over HTTP. It reports both drain times
// (medians over the iterations), their ratio (goal: about 1) and the
// effects each burst queued.
func BenchmarkCoalescedDrain(b *testing.B) {
	var base, burst []float64
	var baseFx, burstFx int64
	for range b.N { // b.Loop would time the stores' setup: the drains are timed below
		var d time.Duration
		d, baseFx = drainAfter(b, coalescedKeys)
		base = append(base, d.Seconds())
		d, burstFx = drainAfter(b, coalescedCommits)
		burst = append(burst, d.Seconds())
	}
	mb, mc := median(base), median(burst)
	b.ReportMetric(mb, "base-drain-s")
	b.ReportMetric(mc, "burst-drain-s")
	b.ReportMetric(mc/mb, "drain-ratio")
	b.ReportMetric(float64(baseFx), "base-effects")
	b.ReportMetric(float64(burstFx), "burst-effects")
}

// drainAfter commits n changes on coalescedKeys airports (n ≥ keys) with
// coalescedWriters callers on a fresh synced store, then times the drain
// of its outbox; it returns the drain time and the effects queued.
func drainAfter(b *testing.B, n int) (time.Duration, int64) {
	x := openSyncedOn(b, b.TempDir(), hikouteitest.NewSheet(b), nil, airports, func(o *hikoutei.SyncOptions) { o.MaxBatch = 5000 })
	burstCommits(b, x.Store, n)
	fx := total(x.outbox())
	start := time.Now()
	x.drain()
	d := time.Since(start)
	if c := x.outbox(); c[aggregates.EffectApplied] != fx {
		b.Fatalf("outbox %v after the drain, want %d applied", c, fx)
	}
	want := "v" + strconv.Itoa(n/coalescedKeys-1)
	if r := x.rowOf(airportSystem, "k0"); len(r) < 2 || r[1] != want {
		b.Fatalf("row k0 shows %v, want name %s (its newest state)", r, want)
	}
	return d, fx
}

// burstCommits makes n commits, commit i changing key i mod
// coalescedKeys to version i / coalescedKeys; each writer owns the keys
// congruent to it, so the keys' versions are committed in order.
func burstCommits(b *testing.B, s *hikoutei.Store, n int) {
	var wg sync.WaitGroup
	for w := range coalescedWriters {
		wg.Go(func() {
			for i := w; i < n; i += coalescedWriters {
				k := i % coalescedKeys
				u := s.Begin()
				err := u.Persist(&Airport{ID: "k" + strconv.Itoa(k), Name: "v" + strconv.Itoa(i/coalescedKeys), Altitude: int64(i)})
				if _, cerr := u.Commit(ctx); err != nil || cerr != nil {
					b.Errorf("commit %d: %v %v", i, err, cerr)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

func total(c map[aggregates.EffectState]int64) int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
