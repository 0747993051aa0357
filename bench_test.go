package hikoutei

import (
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
)

// Benchmarks of the public write and rebuild paths, each beside a raw
// baseline in benchraw_test.go measured in the same run (machines are noisy:
// compare ratios, not absolute numbers). Every store is durable (default
// Options: fsync on every log commit). Run with
//
//	go test -run '^$' -bench 'Commit|RawFloor|BoltBatch|Rebuild|RawSQLite' -benchtime 2s .
//
// Pairs and the ratios to watch:
//
//	BenchmarkCommit64Concurrent ÷ BenchmarkRawFloor64        commits/s ÷ records/s (goal ≥ 0.5)
//	BenchmarkCommit64Concurrent ÷ BenchmarkBoltBatchDefault64 commits/s ÷ records/s (goal ≥ 5)
//	BenchmarkCommitSingle p99 ÷ BenchmarkRawFloorSingle p99   (goal ≤ 2.0)
//	BenchmarkRebuild ÷ BenchmarkRawSQLiteInsert               events/s ÷ rows/s (goal ≥ 0.5)
//
// Besides its throughput or latency, every benchmark reports process CPU
// µs, written KB and write syscalls per op (from /proc/self, Linux): on a
// shared machine these are far steadier than wall time, so compare them too,
// and use -count 5 with benchstat before trusting a ratio.
//
// HIKOUTEI_BENCH_DATA=cities makes the rebuild pair use the 171,075 GeoNames
// cities instead of the 7,184 OpenFlights airports (slow to set up).

// benchWriters is how many goroutines commit concurrently.
const benchWriters = 64

// benchWarmup commits run before the timer of the latency benchmarks, so
// first-use costs (statement preparation, file growth) are not sampled.
const benchWarmup = 8

var (
	benchAirportsOnce sync.Once
	benchAirportsData []Airport
)

// benchAirports returns the OpenFlights airports (read once per process).
func benchAirports(b *testing.B) []Airport {
	benchAirportsOnce.Do(func() { benchAirportsData = readAirports(b) })
	if len(benchAirportsData) == 0 {
		b.Fatal("no airports in testdata")
	}
	return benchAirportsData
}

// benchAirport is the i-th benchmark entity: an OpenFlights airport under a
// fresh primary key, so every commit creates one new entity.
func benchAirport(all []Airport, i int) Airport {
	a := all[i%len(all)]
	a.ID = "b" + strconv.Itoa(i)
	return a
}

// warmUp commits benchWarmup entities under their own keys.
func warmUp(b *testing.B, s *Store, all []Airport) {
	b.Helper()
	for i := range benchWarmup {
		a := all[i%len(all)]
		a.ID = "warm" + strconv.Itoa(i)
		if err := commitOne(s, &a); err != nil {
			b.Fatal(err)
		}
	}
}

// benchOptions are the default options (durable: fsync on every log
// commit, wall clock, heartbeat on) with the logger silenced, so the
// "read.sqlite is missing" warning of a new store does not interleave with
// the benchmark output.
func benchOptions() Options {
	return Options{Logger: slog.New(slog.DiscardHandler)}
}

// openBenchStore opens a durable store with default options.
func openBenchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(b.Context(), b.TempDir(), benchOptions(), Entity[Airport]("Airport"))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func commitOne(s *Store, a *Airport) error {
	u := s.Begin()
	if err := u.Persist(a); err != nil {
		return err
	}
	_, err := u.Commit(ctx)
	return err
}

// BenchmarkCommit64Concurrent: 64 goroutines, each committing units of ONE
// new entity through the public API (group commit). One op = one commit.
func BenchmarkCommit64Concurrent(b *testing.B) {
	all := benchAirports(b)
	s := openBenchStore(b)
	defer s.Close()
	warmUp(b, s, all)
	before, err := s.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	m := startMeter()
	runWriters(b, func(i int) error {
		a := benchAirport(all, i)
		return commitOne(s, &a)
	})
	b.StopTimer()
	m.report(b, float64(b.N), "commit")
	st, err := s.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
	if txns := st.LogTxns - before.LogTxns; txns > 0 {
		b.ReportMetric(float64(st.Commits-before.Commits)/float64(txns), "commits/logtxn")
	}
}

// runWriters runs op(0) … op(b.N-1) from benchWriters goroutines, each
// taking the next index; the first error fails the benchmark.
func runWriters(b *testing.B, op func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range benchWriters {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < b.N; i = int(next.Add(1) - 1) {
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkCommitSingle: one goroutine committing one new entity per unit;
// every commit's latency is sampled.
func BenchmarkCommitSingle(b *testing.B) {
	all := benchAirports(b)
	s := openBenchStore(b)
	defer s.Close()
	warmUp(b, s, all)
	lat := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	m := startMeter()
	for i := 0; i < b.N; i++ {
		a := benchAirport(all, i)
		start := time.Now()
		if err := commitOne(s, &a); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(start)
	}
	b.StopTimer()
	m.report(b, float64(b.N), "commit")
	reportLatency(b, lat)
}

// procCPU returns the CPU time (user + system) this process used so far,
// read from /proc/self/stat, or -1 where that file does not exist. Under
// load from other processes CPU time per op is steadier than wall time.
func procCPU() time.Duration {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return -1
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * (time.Second / 100) // USER_HZ
}

// meter samples the process's CPU time and write activity (/proc/self/io:
// bytes handed to write/pwrite and their count), which explain fsync-bound
// results and are steadier than wall time on a shared machine.
type meter struct {
	cpu           time.Duration
	wchar, writes int64
}

func startMeter() meter {
	w, n := procWrites()
	return meter{cpu: procCPU(), wchar: w, writes: n}
}

// report reports, per unit (e.g. per commit), CPU µs, written KB and write
// syscalls since m was started; nothing of what /proc cannot tell.
func (m meter) report(b *testing.B, units float64, unit string) {
	if units <= 0 {
		return
	}
	if m.cpu >= 0 {
		b.ReportMetric(float64(procCPU()-m.cpu)/float64(time.Microsecond)/units, "cpu-us/"+unit)
	}
	if w, n := procWrites(); m.wchar >= 0 && w >= 0 {
		b.ReportMetric(float64(w-m.wchar)/1024/units, "wKB/"+unit)
		b.ReportMetric(float64(n-m.writes)/units, "writes/"+unit)
	}
}

// procWrites returns wchar and syscw of /proc/self/io (-1 without /proc).
func procWrites() (wchar, syscw int64) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1, -1
	}
	wchar, syscw = -1, -1
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "wchar":
			wchar = n
		case "syscw":
			syscw = n
		}
	}
	if syscw < 0 {
		wchar = -1
	}
	return wchar, syscw
}

// reportLatency reports the p50 and p99 of the sampled durations in ms.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(q float64) float64 {
		i := int(q*float64(len(lat))+0.999999) - 1 // nearest-rank
		return float64(lat[min(max(i, 0), len(lat)-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

// rebuildData is what the rebuild pair loads: "airports" (default) or
// "cities" (HIKOUTEI_BENCH_DATA=cities).
func rebuildData() string {
	if os.Getenv(config.EnvBenchData) == "cities" {
		return "cities"
	}
	return "airports"
}

// buildRebuildLog writes a durable log of every airport (or city) through
// the public API in units of 250 and closes the store. It returns the store
// directory, the entity declaration and the log head.
func buildRebuildLog(b *testing.B) (string, EntityDef, uint64) {
	b.Helper()
	dir := b.TempDir()
	var def EntityDef
	var entities []any
	if rebuildData() == "cities" {
		def = Entity[City]("City")
		cities := readCities(b)
		for i := range cities {
			entities = append(entities, &cities[i])
		}
	} else {
		def = Entity[Airport]("Airport")
		airports := append([]Airport(nil), benchAirports(b)...)
		for i := range airports {
			entities = append(entities, &airports[i])
		}
	}
	s, err := Open(b.Context(), dir, benchOptions(), def)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(entities); i += 250 {
		u := s.Begin()
		for _, e := range entities[i:min(i+250, len(entities))] {
			mustT(b, u.Persist(e))
		}
		_, err := u.Commit(ctx)
		mustT(b, err)
	}
	mustT(b, s.Close()) // appends lease.released
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	mustT(b, err)
	defer l.Close()
	head, err := l.Head()
	mustT(b, err)
	return dir, def, head
}

// BenchmarkRebuild: Replay of the whole log into a fresh read model (the
// log is built once per benchmark call, outside the timer). One op = one
// full replay; events/s counts every event applied (entities + lease).
func BenchmarkRebuild(b *testing.B) {
	dir, def, head := buildRebuildLog(b)
	out := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	m := startMeter()
	for i := 0; i < b.N; i++ {
		target := filepath.Join(out, "rebuilt-"+strconv.Itoa(i)+".sqlite")
		cp, err := Replay(b.Context(), dir, target, ReplayOptions{}, def)
		if err != nil {
			b.Fatal(err)
		}
		if cp != head {
			b.Fatalf("replay reached %d, log head is %d", cp, head)
		}
		b.StopTimer()
		mustT(b, removeReadModel(target))
		b.StartTimer()
	}
	b.StopTimer()
	m.report(b, float64(head)*float64(b.N), "event")
	b.ReportMetric(float64(head)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
