package bench

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// End-to-end sync benchmarks, run by bench/cmd/benchtable (`make bench`),
// each beside its raw baseline measured in the same run:
//
//	BenchmarkSafePath10k       ÷ BenchmarkRawBatchUpdate10k   rows/s (row 4)
//	BenchmarkBackfillCities    ÷ BenchmarkRawBackfillCities   requests/1k rows, peak RSS (row 5)
//	BenchmarkPollUnchanged10Tabs ÷ BenchmarkRawBatchGet10Tabs requests and ms per pass (row 6)
//	BenchmarkPollUnchangedCities ÷ BenchmarkRawBatchGetCities alloc-MB and ms per pass (poll_test.go)
//
// The emulator runs with Google's latency (150 ms per request + 20 µs per
// written cell) and per-minute quotas; our provider keeps its default
// pacing (1 request/s per class, burst 5 = Google's per-user quota); the
// store uses the demo's sync options (internal/above/demo). Environment:
//
//	HIKOUTEI_BENCH_EMULATOR  URL of an emulator served by another process
//	                         (the runner), so this process's peak RSS is the
//	                         store's alone; its request counters are then
//	                         read by that process. Unset: an in-process one.
//	HIKOUTEI_BENCH_SHEET     spreadsheet id to use there (default per bench).
//	HIKOUTEI_BENCH_OUT       directory for convergence traces (<bench>.json).

// City is a GeoNames city (testdata/data/cities.json.gz), the same entity
// the root package's scale test and rebuild benchmark use.
type City struct {
	Key     string `hikoutei:"key,pk"`
	Name    string `hikoutei:"name"`
	Lat     string `hikoutei:"lat"`
	Lng     string `hikoutei:"lng"`
	Country string `hikoutei:"country"`
	Admin1  string `hikoutei:"admin1"`
	Admin2  string `hikoutei:"admin2"`
}

// row is the city's visible row: key, then fields in declaration order.
func (c *City) row() []any {
	return []any{c.Key, c.Name, c.Lat, c.Lng, c.Country, c.Admin1, c.Admin2}
}

var cityHeader = []any{"key", "name", "lat", "lng", "country", "admin1", "admin2"}

func readCities(b *testing.B) []City {
	b.Helper()
	f, err := os.Open("../testdata/data/cities.json.gz")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	var cities []City
	if err := json.NewDecoder(zr).Decode(&cities); err != nil {
		b.Fatal(err)
	}
	for i := range cities {
		cities[i].Key = strconv.Itoa(i + 1)
	}
	return cities
}

var ctx = context.Background()

// emu is the emulator a benchmark talks to.
type emu struct {
	url    string
	local  *emulator.Emulator // nil when the runner serves it
	sheet  string
	closer func()
}

// rawBodyBytes bounds the raw client's values.batchUpdate bodies: the
// 2 MB Google recommends.
const rawBodyBytes = 2 << 20

// googleEmulator returns the runner's emulator (HIKOUTEI_BENCH_EMULATOR) or
// a fresh in-process one, with Google's latency and quota model.
func googleEmulator(b *testing.B, sheet string) *emu {
	b.Helper()
	if s := os.Getenv(config.EnvBenchSheet); s != "" {
		sheet = s
	}
	if u := os.Getenv(config.EnvBenchEmulator); u != "" {
		return &emu{url: u, sheet: sheet, closer: func() {}}
	}
	e := emulator.New(emulator.GoogleModel(emulator.Options{AutoCreate: true}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: e.Handler()}
	go srv.Serve(ln)
	return &emu{url: "http://" + ln.Addr().String(), local: e, sheet: sheet, closer: func() { srv.Close() }}
}

// requests reports the emulator's request count for the sheet, or -1 when
// another process serves it.
func (e *emu) requests() (reads, writes int64) {
	if e.local == nil {
		return -1, -1
	}
	c := e.local.Counters(e.sheet)
	return c.Reads, c.Writes
}

// point is one convergence sample: seconds since the first commit (or the
// first raw request) and rows converged in the spreadsheet by then.
type point struct {
	T    float64 `json:"t"`
	Rows float64 `json:"rows"`
}

// writeTrace saves a convergence trace for the runner's plot.
func writeTrace(b *testing.B, name string, pts []point) {
	dir := os.Getenv(config.EnvBenchOut)
	if dir == "" {
		return
	}
	data, err := json.Marshal(pts)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".json"), data, 0o644)
	}
	if err != nil {
		b.Error(err)
	}
}

// vmHWM is this process's peak resident set in MB (/proc/self/status), or
// -1 where that is unavailable.
func vmHWM() float64 {
	if v := procStatus("VmHWM:")[0]; v > 0 {
		return float64(v) / (1 << 20)
	}
	return -1
}

// openSynced opens a store on a fresh directory that syncs the City entity
// to e with the demo's options and the provider's default pacing, and waits
// until the spreadsheet is provisioned (provisioning is not timed).
func openSynced(b *testing.B, e *emu, defs ...hikoutei.EntityDef) *hikoutei.Store {
	b.Helper()
	s := openOn(b, e, demoSync(), defs...)
	waitProvisioned(b, s)
	return s
}

// demoSync is the demo's sync options (the provider's default pacing).
func demoSync() hikoutei.SyncOptions {
	return hikoutei.SyncOptions{Interval: 500 * time.Millisecond, ProbeDelay: time.Second,
		ReconcileInterval: 5 * time.Second}
}

// openOn opens a store on a fresh directory syncing defs to e's
// spreadsheet with opts, through a provider of its own (nothing waited for).
func openOn(b *testing.B, e *emu, opts hikoutei.SyncOptions, defs ...hikoutei.EntityDef) *hikoutei.Store {
	b.Helper()
	log := slog.New(slog.DiscardHandler)
	prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: e.url, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	opts.SpreadsheetID, opts.Provider = e.sheet, prov
	s, err := hikoutei.Open(b.Context(), b.TempDir(), hikoutei.Options{Operation: "bench", Logger: log, Sync: &opts}, defs...)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// waitProvisioned waits until s's sync workers exist (the spreadsheet is
// provisioned).
func waitProvisioned(b *testing.B, s *hikoutei.Store) {
	b.Helper()
	eng := engine.Of(s)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		disp, _, wb := eng.Workers()
		if wb != nil && disp != nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("spreadsheet not provisioned after 2 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// unsettled counts effects not yet settled (as the demo's waitSynced):
// pending, processing, delivery_uncertain and failed.
func unsettled(c map[aggregates.EffectState]int64) int64 {
	var n int64
	for _, st := range aggregates.Unsettled() {
		n += c[st]
	}
	return n
}

// outboxCounts counts the effects of s in every state.
func outboxCounts(b *testing.B, s *hikoutei.Store) map[aggregates.EffectState]int64 {
	b.Helper()
	c, err := engine.Of(s).OutboxCounts()
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func total(c map[aggregates.EffectState]int64) int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// syncCities commits the cities in units of 500 (as the demo does) and
// waits until every effect is settled, sampling convergence every 100 ms.
// Rows converged = applied effects × rows ÷ effects queued.
func syncCities(b *testing.B, s *hikoutei.Store, cities []City, start time.Time) []point {
	return syncRows(b, s, cities, start)
}

// syncRows is syncCities for any entity's rows.
func syncRows[T any](b *testing.B, s *hikoutei.Store, cities []T, start time.Time) []point {
	b.Helper()
	done := make(chan error, 1)
	go func() {
		for i := 0; i < len(cities); i += 500 {
			u := s.Begin()
			for j := i; j < min(i+500, len(cities)); j++ {
				if err := u.Persist(&cities[j]); err != nil {
					done <- err
					return
				}
			}
			if _, err := u.Commit(ctx); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	pts := []point{{0, 0}}
	committed := false
	deadline := start.Add(60 * time.Minute)
	for {
		if !committed {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				committed = true
			default:
			}
		}
		c := outboxCounts(b, s)
		t := time.Since(start).Seconds()
		if n := total(c); n > 0 && committed {
			pts = append(pts, point{t, float64(c[aggregates.EffectApplied]) * float64(len(cities)) / float64(n)})
			if unsettled(c) == 0 {
				pts[len(pts)-1] = point{t, float64(len(cities))}
				return pts
			}
		} else if n > 0 {
			pts = append(pts, point{t, float64(c[aggregates.EffectApplied])}) // an underestimate until all is queued
		}
		if time.Now().After(deadline) {
			b.Fatalf("not converged after 60 minutes: %v", c)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// BenchmarkSafePath10k: 10,000 new cities through the full safe path
// (durable commit, outbox, receipts, CAS, fencing) to the emulator with
// Google's latency and quota model. Timed from the first commit until
// every effect is settled; provisioning is not timed. rows/s is row 4.
func BenchmarkSafePath10k(b *testing.B) {
	cities := readCities(b)[:10000]
	var secs, cpu []float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := googleEmulator(b, "bench-safe-"+strconv.Itoa(i))
		s := openSynced(b, e, hikoutei.Entity[City]("City"))
		r0, w0 := e.requests()
		b.StartTimer()
		prof := cpuProfile(b, config.EnvBenchSyncProfile)
		start, c0 := time.Now(), cpuTime(b)
		pts := syncCities(b, s, cities, start)
		secs = append(secs, time.Since(start).Seconds())
		cpu = append(cpu, (cpuTime(b) - c0).Seconds())
		prof()
		b.StopTimer()
		r1, w1 := e.requests()
		if r0 >= 0 {
			b.ReportMetric(float64(r1-r0), "reads")
			b.ReportMetric(float64(w1-w0), "writes")
		}
		writeTrace(b, "safe10k", pts)
		s.Close()
		e.closer()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(cities))/median(secs), "rows/s")
	reportCPU(b, median(cpu), len(cities))
}

// reportCPU reports cpu-us/row, this process's CPU time (user + system,
// getrusage) over the timed part of a run ÷ rows (row 4c). With an
// in-process emulator (HIKOUTEI_BENCH_EMULATOR unset) the emulator's CPU
// is in the figure too; the runner serves the emulator itself, so its
// figure is the client's alone.
func reportCPU(b *testing.B, cpuSecs float64, rows int) {
	b.ReportMetric(cpuSecs*1e6/float64(rows), "cpu-us/row")
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// rawService is a bare sheets/v4 client on the emulator.
func rawService(b *testing.B, e *emu) *sheets.Service {
	b.Helper()
	svc, err := sheets.NewService(ctx, option.WithEndpoint(strings.TrimSuffix(e.url, "/")+"/"),
		option.WithoutAuthentication(), option.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

// addTab creates a tab with room for rows × cols (not timed).
func addTab(b *testing.B, svc *sheets.Service, sheet, title string, rows, cols int) {
	b.Helper()
	_, err := svc.Spreadsheets.BatchUpdate(sheet, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{
		AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: title,
			GridProperties: &sheets.GridProperties{RowCount: int64(rows), ColumnCount: int64(cols)}}}}}}).Context(ctx).Do()
	if err != nil {
		b.Fatal(err)
	}
}

// rawWrite writes the header and the cities' rows to tab with plain
// values.batchUpdate calls, each body at most rawBodyBytes (the 2 MB
// Google recommends). It
// returns the convergence trace (rows written when each request returned).
func rawWrite(b *testing.B, svc *sheets.Service, sheet, tab string, cities []City, start time.Time) []point {
	return rawWriteRows(b, svc, sheet, tab, "G", cityHeader, len(cities), func(i int) []any { return cities[i].row() }, start)
}

// rawWriteRows is rawWrite for any n rows of columns A:lastCol under
// header.
func rawWriteRows(b *testing.B, svc *sheets.Service, sheet, tab, lastCol string, header []any, n int, row func(int) []any,
	start time.Time) []point {
	b.Helper()
	pts := []point{{0, 0}}
	rows := [][]any{header}
	size := 0
	first := 1 // sheet row of rows[0]
	done := 0
	flush := func() {
		if len(rows) == 0 {
			return
		}
		rng := fmt.Sprintf("%s!A%d:%s%d", tab, first, lastCol, first+len(rows)-1)
		_, err := svc.Spreadsheets.Values.BatchUpdate(sheet, &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW",
			Data: []*sheets.ValueRange{{Range: rng, Values: rows}}}).Context(ctx).Do()
		if err != nil {
			b.Fatal(err)
		}
		done += len(rows)
		if first == 1 {
			done-- // the header
		}
		pts = append(pts, point{time.Since(start).Seconds(), float64(done)})
		first += len(rows)
		rows, size = nil, 0
	}
	for i := range n {
		r := row(i)
		js, _ := json.Marshal(r)
		if size+len(js)+1 > rawBodyBytes-4096 {
			flush()
		}
		rows = append(rows, r)
		size += len(js) + 1
	}
	flush()
	return pts
}

// BenchmarkRawBatchUpdate10k: the floor under BenchmarkSafePath10k — the
// same 10,000 rows (key + fields) written by raw values.batchUpdate through
// sheets/v4 to a fresh emulator with the same model; no pacing, no
// receipts, no verification. Tab creation is not timed.
func BenchmarkRawBatchUpdate10k(b *testing.B) {
	cities := readCities(b)[:10000]
	var secs, cpu []float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := googleEmulator(b, "bench-raw-"+strconv.Itoa(i))
		svc := rawService(b, e)
		addTab(b, svc, e.sheet, "City_Raw", len(cities)+1, len(cityHeader))
		b.StartTimer()
		start, c0 := time.Now(), cpuTime(b)
		pts := rawWrite(b, svc, e.sheet, "City_Raw", cities, start)
		secs = append(secs, time.Since(start).Seconds())
		cpu = append(cpu, (cpuTime(b) - c0).Seconds())
		b.StopTimer()
		writeTrace(b, "raw10k", pts)
		e.closer()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(cities))/median(secs), "rows/s")
	reportCPU(b, median(cpu), len(cities))
}

// BenchmarkBackfillCities: all 171,075 cities committed and synced through
// the full safe path (row 5). Reports rows/s, requests (when the emulator
// is in process) and this process's VmHWM; the runner runs it alone in a
// child process against its own emulator and takes the child's max RSS.
func BenchmarkBackfillCities(b *testing.B) {
	defer rssTrace(b)()
	cities := readCities(b)
	benchBackfill(b, backfill{emu: "bench-backfill", trace: "backfill", rows: len(cities), timedOpen: true,
		open: func(b *testing.B, e *emu) *hikoutei.Store { return openSynced(b, e, hikoutei.Entity[City]("City")) },
		sync: func(b *testing.B, s *hikoutei.Store, start time.Time) []point { return syncCities(b, s, cities, start) }})
}

// BenchmarkRawBackfillCities: the floor under BenchmarkBackfillCities —
// the same rows by raw values.batchUpdate (2 MB bodies), tab creation
// included (the safe path's count includes provisioning).
func BenchmarkRawBackfillCities(b *testing.B) {
	defer rssTrace(b)()
	cities := readCities(b)
	benchRawBackfill(b, "bench-raw-backfill", "rawbackfill", len(cities), func(svc *sheets.Service, e *emu, start time.Time) []point {
		addTab(b, svc, e.sheet, "City_Raw", len(cities)+1, len(cityHeader))
		return rawWrite(b, svc, e.sheet, "City_Raw", cities, start)
	})
}

// backfill is one safe-path backfill bench: each iteration a fresh
// emulator (spreadsheet emu), a store open opens (within the time
// measured when timedOpen) and sync commits and syncs the rows from
// start; its trace is written under trace.
type backfill struct {
	emu, trace string
	rows       int
	timedOpen  bool
	open       func(*testing.B, *emu) *hikoutei.Store
	sync       func(b *testing.B, s *hikoutei.Store, start time.Time) []point
}

// benchBackfill runs bf b.N times and reports rows/s, requests and
// this process's VmHWM.
func benchBackfill(b *testing.B, bf backfill) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := googleEmulator(b, bf.emu)
		var s *hikoutei.Store
		if !bf.timedOpen {
			s = bf.open(b, e)
		}
		stop := peakHeapProfile(b)
		b.StartTimer()
		start := time.Now()
		if bf.timedOpen {
			s = bf.open(b, e)
		}
		pts := bf.sync(b, s, time.Now())
		secs := time.Since(start).Seconds()
		b.StopTimer()
		stop()
		reportBackfill(b, e, bf.rows, secs, bf.trace, pts)
		s.Close()
		e.closer()
		b.StartTimer()
	}
	b.ReportMetric(vmHWM(), "peak-MB")
}

// benchRawBackfill is benchBackfill's floor: write writes the rows by the
// raw client (tab creation included) from start.
func benchRawBackfill(b *testing.B, emuName, trace string, rows int, write func(svc *sheets.Service, e *emu, start time.Time) []point) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := googleEmulator(b, emuName)
		svc := rawService(b, e)
		b.StartTimer()
		start := time.Now()
		pts := write(svc, e, start)
		secs := time.Since(start).Seconds()
		b.StopTimer()
		reportBackfill(b, e, rows, secs, trace, pts)
		e.closer()
		b.StartTimer()
	}
	b.ReportMetric(vmHWM(), "peak-MB")
}

// reportBackfill reports one backfill's requests (when the emulator is in
// process) and rows/s, and writes its trace.
func reportBackfill(b *testing.B, e *emu, rows int, secs float64, trace string, pts []point) {
	if r, w := e.requests(); r >= 0 {
		b.ReportMetric(float64(r+w)*1000/float64(rows), "req/1krows")
	}
	b.ReportMetric(float64(rows)/secs, "rows/s")
	writeTrace(b, trace, pts)
}
