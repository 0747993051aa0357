package bench

import (
	"errors"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The real configuration at scale (rows 5c and 5d): the cities backfilled
// to both tabs of NotedCity (the System tab and the Input tab people edit)
// while the dispatcher, the Input poller and the reconciliation with
// anti-entropy run on their own cadences, as `hikoutei serve` runs them,
// beside the raw client writing the same two tabs.
//
// Cadences: serve's defaults (the seed's): the poll and the safety full
// scan every 60 s, the surplus-row cleanup and the reconciliation with
// anti-entropy every 30 s (the environment's HIKOUTEI_SYNC_* variables
// are not read); the dispatcher's tuning is row 5's (the demo's) but for
// the batch, serve's default (effects.DefaultMaxBatch).

// backfillCities are the cities of the serve-configuration backfill pair:
// all of them, or the first HIKOUTEI_BENCH_BACKFILL_ROWS.
func backfillCities(b *testing.B) []City {
	cities := readCities(b)
	if v := os.Getenv(config.EnvBenchBackfillRows); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > len(cities) {
			b.Fatalf("%s=%q: want 1 to %d", config.EnvBenchBackfillRows, v, len(cities))
		}
		cities = cities[:n]
	}
	return cities
}

// openServing opens a store syncing NotedCity to e with every worker
// running (not Manual) at serve's default cadences, and waits until the
// spreadsheet is provisioned (not timed).
func openServing(b *testing.B, e *emu) *hikoutei.Store {
	b.Helper()
	s := openOn(b, e, hikoutei.SyncOptions{Interval: 500 * time.Millisecond, ProbeDelay: time.Second,
		LookupEnv: func(string) (string, bool) { return "", false }}, hikoutei.Entity[NotedCity]("City"))
	waitProvisioned(b, s)
	return s
}

// notedCities are the cities as NotedCity rows (an empty note).
func notedCities(cities []City) []NotedCity {
	out := make([]NotedCity, len(cities))
	for i := range cities {
		out[i] = noted(&cities[i])
	}
	return out
}

// BenchmarkBackfillCitiesServe: the cities (HIKOUTEI_BENCH_BACKFILL_ROWS,
// default all 171,075) committed in units of 500 and synced to both tabs
// with the poller and anti-entropy running (rows 5c, 5d). Reports rows/s
// (first commit → every effect settled; 2 effects a row), requests when
// the emulator is in process, and this process's VmHWM.
func BenchmarkBackfillCitiesServe(b *testing.B) {
	defer rssTrace(b)()
	rows := notedCities(backfillCities(b))
	benchBackfill(b, backfill{emu: "bench-backfill-serve", trace: "backfillserve", rows: len(rows), open: openServing,
		sync: func(b *testing.B, s *hikoutei.Store, start time.Time) []point { return syncRows(b, s, rows, start) }})
}

// BenchmarkRawBackfillCitiesBoth: the floor under
// BenchmarkBackfillCitiesServe — the same rows by raw values.batchUpdate
// (2 MB bodies) to a System-like tab (key + 6 fields) and then an
// Input-like tab (key, name, note, anchor), tab creation included.
func BenchmarkRawBackfillCitiesBoth(b *testing.B) {
	defer rssTrace(b)()
	cities := backfillCities(b)
	benchRawBackfill(b, "bench-raw-backfill-both", "rawbackfillboth", len(cities), func(svc *sheets.Service, e *emu, start time.Time) []point {
		addTab(b, svc, e.sheet, "City_Raw", len(cities)+1, len(cityHeader))
		input := layout.InputTabName("City") + "_Raw"
		addTab(b, svc, e.sheet, input, len(cities)+1, 4)
		rawWrite(b, svc, e.sheet, "City_Raw", cities, start)
		return rawWriteRows(b, svc, e.sheet, input, "D", []any{"key", "name", "note", "__hikoutei_row_id"}, len(cities), func(i int) []any {
			return []any{cities[i].Key, cities[i].Name, "", cities[i].Key}
		}, start)
	})
}

// peakHeapProfile (BenchmarkBackfillCities and BenchmarkBackfillCitiesServe),
// when HIKOUTEI_BENCH_PEAK_PROFILE names a file, writes a heap profile
// there each time a collection finds a new maximum of live heap (the
// runtime's /gc/heap/live:bytes, sampled every 200 ms): the sampler then
// collects once more and writes the profile, so the file shows what was
// live while the transient that set the next heap goal still was (a heap
// profile otherwise shows the heap of a collection or two before), and
// a copy of it as FILE.N, the run's Nth maximum. The extra collections
// change the run's: a diagnosis, not a measurement of row 5b. stop ends
// the sampling.
func peakHeapProfile(b *testing.B) (stop func()) {
	path := os.Getenv(config.EnvBenchPeakProfile)
	if path == "" {
		return func() {}
	}
	runtime.GC() // the data set's decoding garbage is not the peak
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var peak uint64
		n := 0 // maxima written
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-quit:
				return
			case <-time.After(200 * time.Millisecond):
			}
			metrics.Read(live)
			if v := live[0].Value.Uint64(); v > peak+peak/20 {
				peak, n = v, n+1
				runtime.GC()
				if err := errors.Join(writeHeapProfile(path), writeHeapProfile(path+"."+strconv.Itoa(n))); err != nil {
					b.Error(err)
					return
				}
			}
		}
	}()
	return func() { close(quit); <-done }
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
