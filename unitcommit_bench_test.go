package hikoutei_test

import (
	"log/slog"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
)

// unitSize is how many new entities one unit of BenchmarkUnitCommit500
// commits (row 4's and row 5c's units).
const unitSize = 500

// NotedCity is row 5c's entity: a City with an Input tab besides its
// System tab, so every new one queues two effects.
type NotedCity = fixtures.NotedCity

// BenchmarkUnitCommit500 commits units of 500 new cities, one unit an op,
// to a durable store syncing to an emulated spreadsheet with its workers
// stopped (SyncOptions.Manual, provisioned): each entity queues its
// effects as row 4's and row 5c's commits do, and nothing dispatches, so
// the process's CPU is the commit path's (decisions, log append, read
// model with its outbox rows) and the collector's. system: the cities of
// row 4 (a System tab, one effect each); system+input: row 5c's (System
// and Input tabs, two effects each). Reports cpu-us/entity (getrusage:
// user + system) and allocs/entity.
func BenchmarkUnitCommit500(b *testing.B) {
	cities := fixtures.Cities(b)
	b.Run("system", func(b *testing.B) {
		commitUnits500(b, hikoutei.Entity[fixtures.City]("City"), func(u *hikoutei.Unit, i int) error {
			c := cities[i%len(cities)]
			c.Key = "u" + strconv.Itoa(i)
			return u.Persist(&c)
		})
	})
	b.Run("system+input", func(b *testing.B) {
		commitUnits500(b, hikoutei.Entity[NotedCity]("City"), func(u *hikoutei.Unit, i int) error {
			c := cities[i%len(cities)]
			return u.Persist(&NotedCity{Key: "u" + strconv.Itoa(i), Name: c.Name, Lat: c.Lat, Lng: c.Lng, Country: c.Country,
				Admin1: c.Admin1, Admin2: c.Admin2})
		})
	})
}

// commitUnits500 opens a synced store of def and commits b.N units of
// unitSize entities, persist adding the i-th (a new key each).
func commitUnits500(b *testing.B, def hikoutei.EntityDef, persist func(u *hikoutei.Unit, i int) error) {
	sheet := hikouteitest.NewSheet(b)
	s, err := hikoutei.Open(b.Context(), b.TempDir(), hikoutei.Options{Logger: slog.New(slog.DiscardHandler),
		Sync: sheet.SyncOptions()}, def)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hikouteitest.New(b, s) // provisions: the commits queue effects
	commitUnit := func(n int) {
		u := s.Begin()
		for i := n * unitSize; i < (n+1)*unitSize; i++ {
			if err := persist(u, i); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := u.Commit(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	commitUnit(0) // warm-up: statements prepared, files grown
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c0 := rusageCPU(b)
	b.ResetTimer()
	for n := range b.N {
		commitUnit(n + 1)
	}
	b.StopTimer()
	cpu := rusageCPU(b) - c0
	runtime.ReadMemStats(&m1)
	entities := float64(b.N * unitSize)
	b.ReportMetric(float64(cpu.Microseconds())/entities, "cpu-us/entity")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/entities, "allocs/entity")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/entities, "B/entity")
	b.ReportMetric(entities/b.Elapsed().Seconds(), "entities/s")
}

// rusageCPU is the CPU time (user + system) this process used so far.
func rusageCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
