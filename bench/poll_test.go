package bench

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Poll benchmarks (row 6 and the poll allocation row). Each pass is
// measured on its own and the benchmark reports the median:
//
//	ms/pass        wall time of one pass
//	alloc-MB/pass  runtime TotalAlloc growth over one pass (this process:
//	               with the in-process emulator it includes the emulator
//	               serving the read; set HIKOUTEI_BENCH_EMULATOR to leave it
//	               out)
//
// Passes are spaced by the provider's read pacing interval (not timed):
// the poller runs on a cadence far longer than that, so a pass never
// waits for the pacer in production, and back-to-back passes would
// measure the pacer (1 read/s, Google's per-user quota) instead of the
// pass. The raw baselines are spaced the same way.

// passes measures passes one at a time.
type passes struct {
	ms, mb []float64
	ms0    runtime.MemStats
	start  time.Time
}

// begin starts measuring one pass.
func (p *passes) begin() {
	runtime.ReadMemStats(&p.ms0)
	p.start = time.Now()
}

// end records the pass begun last.
func (p *passes) end() {
	d := time.Since(p.start)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	p.ms = append(p.ms, float64(d.Microseconds())/1000)
	p.mb = append(p.mb, float64(m.TotalAlloc-p.ms0.TotalAlloc)/(1<<20))
}

// report reports the medians.
func (p *passes) report(b *testing.B, allocs bool) {
	if len(p.ms) == 0 {
		return
	}
	b.ReportMetric(median(p.ms), "ms/pass")
	if allocs {
		b.ReportMetric(median(p.mb), "alloc-MB/pass")
	}
}

// pace waits (untimed) for the provider's read pacer to admit a request
// at once: one interval after the previous pass.
func pace(b *testing.B) {
	b.StopTimer()
	time.Sleep(gsheets.DefaultInterval)
	b.StartTimer()
}

// Ten entities, each with a user-owned field, so the spreadsheet has ten
// Input tabs for the poll benchmark.
type (
	P0 struct {
		ID   string `hikoutei:"id,pk"`
		Name string `hikoutei:"name"`
		Note string `hikoutei:"note,user"`
	}
	P1 P0
	P2 P0
	P3 P0
	P4 P0
	P5 P0
	P6 P0
	P7 P0
	P8 P0
	P9 P0
)

func pollDefs() []hikoutei.EntityDef {
	return []hikoutei.EntityDef{hikoutei.Entity[P0]("P0"), hikoutei.Entity[P1]("P1"), hikoutei.Entity[P2]("P2"),
		hikoutei.Entity[P3]("P3"), hikoutei.Entity[P4]("P4"), hikoutei.Entity[P5]("P5"), hikoutei.Entity[P6]("P6"),
		hikoutei.Entity[P7]("P7"), hikoutei.Entity[P8]("P8"), hikoutei.Entity[P9]("P9")}
}

// seedPoll commits 100 rows of each of the ten entities.
func seedPoll(b *testing.B, s *hikoutei.Store) {
	b.Helper()
	u := s.Begin()
	for i := range 100 {
		id, name := strconv.Itoa(i), "item "+strconv.Itoa(i)
		for _, v := range []any{&P0{id, name, ""}, &P1{id, name, ""}, &P2{id, name, ""}, &P3{id, name, ""}, &P4{id, name, ""},
			&P5{id, name, ""}, &P6{id, name, ""}, &P7{id, name, ""}, &P8{id, name, ""}, &P9{id, name, ""}} {
			if err := u.Persist(v); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := u.Commit(ctx); err != nil {
		b.Fatal(err)
	}
}

// drain runs dispatch passes until every effect of the harness's store
// is settled (probes and retries fall due on the wall clock).
func drain(b *testing.B, h *hikouteitest.Harness) {
	b.Helper()
	for range 200 {
		busy, err := h.Dispatch(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if h.Unsettled() == 0 {
			return
		}
		if !busy {
			time.Sleep(time.Second)
		}
	}
	b.Fatalf("effects still unsettled: %v", h.Outbox())
}

// BenchmarkPollUnchanged10Tabs: one inbound Poll pass over ten Input tabs
// that nobody changed since they converged (row 6). Sync runs in Manual
// mode so nothing but the measured passes talks to the emulator; the
// emulator is in process (its counters are the measurement). One op = one
// Poll; reads/op and writes/op are requests the emulator received;
// ms/pass is the median pass.
func BenchmarkPollUnchanged10Tabs(b *testing.B) {
	e := googleEmulator(b, "bench-poll")
	if e.local == nil {
		b.Skip("needs the in-process emulator (unset HIKOUTEI_BENCH_EMULATOR)")
	}
	defer e.closer()
	log := slog.New(slog.DiscardHandler)
	prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: e.url, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	s, err := hikoutei.Open(b.Context(), b.TempDir(), hikoutei.Options{Operation: "bench", Logger: log,
		Sync: &hikoutei.SyncOptions{SpreadsheetID: e.sheet, Provider: prov, Manual: true}}, pollDefs()...)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := hikouteitest.New(b, s) // provisions the spreadsheet (not measured)
	seedPoll(b, s)
	drain(b, h)
	if _, err := h.Poll(ctx); err != nil { // first pass: learns nothing new, but is not measured
		b.Fatal(err)
	}
	c0 := e.local.Counters(e.sheet)
	var certified, n int
	var ps passes
	for b.Loop() {
		pace(b)
		ps.begin()
		r, err := h.Poll(ctx)
		ps.end()
		if err != nil {
			b.Fatal(err)
		}
		certified, n = certified+r.Certified, n+1
		if r.Tabs != 10 {
			b.Fatalf("poll read %d Input tabs, want 10", r.Tabs)
		}
	}
	c1 := e.local.Counters(e.sheet)
	b.ReportMetric(float64(c1.Reads-c0.Reads)/float64(n), "reads/op")
	b.ReportMetric(float64(c1.Writes-c0.Writes)/float64(n), "writes/op")
	b.ReportMetric(float64(certified)/float64(n), "certified/op")
	ps.report(b, false)
}

// BenchmarkRawBatchGet10Tabs: the floor under BenchmarkPollUnchanged10Tabs
// — one raw values.batchGet of the same ten Input tabs through sheets/v4.
func BenchmarkRawBatchGet10Tabs(b *testing.B) {
	e := googleEmulator(b, "bench-poll-raw")
	if e.local == nil {
		b.Skip("needs the in-process emulator (unset HIKOUTEI_BENCH_EMULATOR)")
	}
	defer e.closer()
	svc := rawService(b, e)
	var ranges []string
	for i := range 10 {
		tab := layout.InputTabName("P" + strconv.Itoa(i))
		addTab(b, svc, e.sheet, tab, 101, 3)
		ranges = append(ranges, tab)
	}
	c0 := e.local.Counters(e.sheet)
	n := 0
	var ps passes
	for b.Loop() {
		pace(b)
		ps.begin()
		_, err := rawBatchGet(svc, e.sheet, ranges)
		ps.end()
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	c1 := e.local.Counters(e.sheet)
	b.ReportMetric(float64(c1.Reads-c0.Reads)/float64(n), "reads/op")
	b.ReportMetric(float64(c1.Writes-c0.Writes)/float64(n), "writes/op")
	ps.report(b, false)
}

// rawBatchGet is one values.batchGet as a poll reads: unformatted values,
// serial-number dates, by rows.
func rawBatchGet(svc *sheets.Service, sheet string, ranges []string) (*sheets.BatchGetValuesResponse, error) {
	return svc.Spreadsheets.Values.BatchGet(sheet).Ranges(ranges...).ValueRenderOption("UNFORMATTED_VALUE").
		DateTimeRenderOption("SERIAL_NUMBER").MajorDimension("ROWS").Context(ctx).Do()
}

// NotedCity is a City whose name and note people edit in the City_Input
// tab (key, name, note, anchor).
type NotedCity = fixtures.NotedCity

// noted is c as a NotedCity with an empty note.
func noted(c *City) NotedCity {
	return NotedCity{Key: c.Key, Name: c.Name, Lat: c.Lat, Lng: c.Lng, Country: c.Country, Admin1: c.Admin1, Admin2: c.Admin2}
}

// citiesProvider is an unpaced provider with a request timeout long
// enough for whole-tab reads of 171,075 rows: the setup writes through it,
// and the measured passes (spaced as the pacer would) read through it.
func citiesProvider(b *testing.B, e *emu) *gsheets.Provider {
	b.Helper()
	prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: e.url, Logger: slog.New(slog.DiscardHandler),
		Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1}, RequestTimeout: 5 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return prov
}

// syncNotedCities commits every city (units of 5,000) to a Manual-mode
// store and dispatches until all 2 × 171,075 rows are applied (not timed).
func syncNotedCities(b *testing.B, e *emu) (*hikoutei.Store, *hikouteitest.Harness) {
	b.Helper()
	cities := benchCities(b)
	start := time.Now()
	log := slog.New(slog.DiscardHandler)
	s, err := hikoutei.Open(b.Context(), b.TempDir(), hikoutei.Options{Operation: "bench", Logger: log,
		Sync: &hikoutei.SyncOptions{SpreadsheetID: e.sheet, Provider: citiesProvider(b, e), Manual: true, MaxBatch: 50000}},
		hikoutei.Entity[NotedCity]("City"))
	if err != nil {
		b.Fatal(err)
	}
	h := hikouteitest.New(b, s)
	commitNotedCities(b, s, cities)
	b.Logf("setup: committed %d cities in %v", len(cities), time.Since(start).Round(time.Millisecond))
	drain(b, h)
	if c := h.Outbox(); c[aggregates.EffectApplied] != int64(2*len(cities)) {
		b.Fatalf("outbox after the setup: %v, want %d applied", c, 2*len(cities))
	}
	b.Logf("setup: synced in %v", time.Since(start).Round(time.Millisecond))
	return s, h
}

// benchCities are the cities of the poll benchmarks: all of them, or the
// first HIKOUTEI_BENCH_INBOUND_ROWS (for profiling at a smaller size).
func benchCities(b *testing.B) []City {
	cities := readCities(b)
	if v := os.Getenv(config.EnvBenchInboundRows); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > len(cities) {
			b.Fatalf("%s=%q: want 1 to %d", config.EnvBenchInboundRows, v, len(cities))
		}
		cities = cities[:n]
	}
	return cities
}

// plainEmulator is googleEmulator without latency and quotas when in
// process (the poll benchmarks measure our work on the read, and their
// setup writes 2 × 171,075 rows); a runner's emulator is used as served.
func plainEmulator(b *testing.B, sheet string) *emu {
	b.Helper()
	if os.Getenv(config.EnvBenchEmulator) != "" {
		return googleEmulator(b, sheet)
	}
	e := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(e.Handler())
	return &emu{url: srv.URL, local: e, sheet: sheet, closer: srv.Close}
}

// BenchmarkPollUnchangedCities: unchanged Poll passes over the City_Input
// tab of all 171,075 cities (synced first, not timed). Reports the median
// ms/pass and alloc-MB/pass (see the top of this file).
func BenchmarkPollUnchangedCities(b *testing.B) {
	e := plainEmulator(b, "bench-poll-cities")
	defer e.closer()
	s, h := syncNotedCities(b, e)
	defer s.Close()
	if r, err := h.Poll(ctx); err != nil || r.Certified != 1 { // not measured
		b.Fatalf("first poll: %+v %v", r, err)
	}
	var ps passes
	for b.Loop() {
		pace(b)
		ps.begin()
		r, err := h.Poll(ctx)
		ps.end()
		if err != nil || r.Certified != 1 || r.Escalated != 0 {
			b.Fatalf("unchanged pass: %+v %v", r, err)
		}
	}
	ps.report(b, true)
}

// BenchmarkRawBatchGetCities: the floor under BenchmarkPollUnchangedCities
// — a raw values.batchGet through sheets/v4 of a tab showing what the
// City_Input tab shows (header, then key, name, empty note and anchor of
// every city; written raw, not timed).
func BenchmarkRawBatchGetCities(b *testing.B) {
	e := plainEmulator(b, "bench-poll-cities-raw")
	defer e.closer()
	svc := rawService(b, e)
	cities := benchCities(b)
	tab := layout.InputTabName("City")
	addTab(b, svc, e.sheet, tab, len(cities)+1, 4)
	rawWriteRows(b, svc, e.sheet, tab, "D", []any{"key", "name", "note", "__hikoutei_row_id"}, len(cities), func(i int) []any {
		return []any{cities[i].Key, cities[i].Name, "", cities[i].Key}
	}, time.Now())
	var ps passes
	for b.Loop() {
		pace(b)
		ps.begin()
		resp, err := rawBatchGet(svc, e.sheet, []string{tab})
		ps.end()
		if err != nil {
			b.Fatal(err)
		}
		if n := len(resp.ValueRanges[0].Values); n != len(cities)+1 {
			b.Fatalf("raw read %d rows, want %d", n, len(cities)+1)
		}
	}
	ps.report(b, true)
}

// commitNotedCities commits cities as NotedCity rows (an empty note), 5,000
// to a unit.
func commitNotedCities(b *testing.B, s *hikoutei.Store, cities []City) {
	b.Helper()
	for i := 0; i < len(cities); i += 5000 {
		u := s.Begin()
		for j := i; j < min(i+5000, len(cities)); j++ {
			n := noted(&cities[j])
			if err := u.Persist(&n); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := u.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
