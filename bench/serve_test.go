package bench

import (
	"os"
	"runtime"
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
	for i, c := range cities {
		out[i] = NotedCity{c.Key, c.Name, c.Lat, c.Lng, c.Country, c.Admin1, c.Admin2, ""}
	}
	return out
}

// BenchmarkBackfillCitiesServe: the cities (HIKOUTEI_BENCH_BACKFILL_ROWS,
// default all 171,075) committed in units of 500 and synced to both tabs
// with the poller and anti-entropy running (rows 5c, 5d). Reports rows/s
// (first commit → every effect settled; 2 effects a row), requests when
// the emulator is in process, and this process's VmHWM.
func BenchmarkBackfillCitiesServe(b *testing.B) {
	rows := notedCities(backfillCities(b))
	benchBackfill(b, backfill{emu: "bench-backfill-serve", trace: "backfillserve", rows: len(rows), open: openServing,
		sync: func(b *testing.B, s *hikoutei.Store, start time.Time) []point { return syncRows(b, s, rows, start) }})
}

// BenchmarkRawBackfillCitiesBoth: the floor under
// BenchmarkBackfillCitiesServe — the same rows by raw values.batchUpdate
// (2 MB bodies) to a System-like tab (key + 6 fields) and then an
// Input-like tab (key, name, note, anchor), tab creation included.
func BenchmarkRawBackfillCitiesBoth(b *testing.B) {
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
// when HIKOUTEI_BENCH_PEAK_PROFILE names a file, writes a
// heap profile there each time the heap in use reaches a new maximum
// (sampled every 200 ms, after the collection that measured it), so the
// file shows what held memory at the peak; stop ends the sampling.
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
		var ms runtime.MemStats
		for {
			select {
			case <-quit:
				return
			case <-time.After(200 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse <= peak+peak/20 {
				continue
			}
			peak = ms.HeapInuse
			if err := writeHeapProfile(path); err != nil {
				b.Error(err)
				return
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
