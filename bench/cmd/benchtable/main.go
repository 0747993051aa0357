// Command benchtable is `make bench`: it runs the Go benchmarks of the
// write, rebuild and sync paths beside their raw baselines (measured in the
// same run), prints one table — figure, ours, baseline, ratio, goal — and
// writes it to bench/results.json, with the convergence plot in
// bench/convergence.svg. It lives in the bench/ module (its plotting
// dependencies stay out of the library's go.mod); build it there and run
// it from the repository root, as `make bench` does:
//
//	go build -C bench -o /tmp/benchtable ./cmd/benchtable && /tmp/benchtable [-benchtime 1s] [-count 3]
//
// See bench/README.md for what each row means.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// Row is one line of the table and of bench/results.json.
type Row struct {
	Name     string   `json:"name"`
	Ours     float64  `json:"ours"`
	Baseline float64  `json:"baseline"`
	Ratio    *float64 `json:"ratio"` // ours ÷ baseline; null when the baseline is 0
	Goal     string   `json:"goal"`
	Unit     string   `json:"unit"`
	Met      bool     `json:"met"`
	Note     string   `json:"note,omitempty"`
}

// runs maps a benchmark name (without the -GOMAXPROCS suffix) to the
// metrics of each of its runs (unit → value, "ns/op" included).
type runs map[string][]map[string]float64

var (
	goCmd     = flag.String("go", "go", "go command")
	benchtime = flag.String("benchtime", "1s", "-benchtime of the commit benchmarks")
	count     = flag.Int("count", 3, "-count of the benchmarks cheap enough to repeat (medians are reported)")
	outDir    = flag.String("out", "bench", "directory for results.json and convergence.svg")
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("benchtable: ")
	flag.Parse()
	start := time.Now()
	tmp, err := os.MkdirTemp("", "benchtable-")
	check(err)
	defer os.RemoveAll(tmp)
	traces := filepath.Join(tmp, "traces")
	check(os.MkdirAll(traces, 0o755))

	// Repeated pairs run ours, baseline, ours, baseline, … (one process
	// each -count 1), so a slow phase of a shared machine hits both sides.
	commit, rebuild, safe := runs{}, runs{}, runs{}
	for i := range *count {
		step(fmt.Sprintf("rows 1–2 (%d/%d): commit benchmarks beside the raw floor and bbolt's db.Batch", i+1, *count))
		commit.add(goBench(nil, "-bench", "^(BenchmarkCommit64Concurrent|BenchmarkRawFloor64|BenchmarkBoltBatchDefault64|BenchmarkCommitSingle|BenchmarkRawFloorSingle)$",
			"-benchtime", *benchtime, "-count", "1", "."))
	}
	for i := range *count {
		step(fmt.Sprintf("row 3 (%d/%d): rebuild of the 171,075 cities beside raw SQLite inserts", i+1, *count))
		rebuild.add(goBench([]string{"HIKOUTEI_BENCH_DATA=cities"}, "-bench", "^(BenchmarkRebuild|BenchmarkRawSQLiteInsert)$",
			"-benchtime", "1x", "-count", "1", "."))
	}

	step("building the sync benchmarks (bench/)")
	bin := filepath.Join(tmp, "bench.test")
	run(nil, "", *goCmd, "test", "-C", "bench", "-c", "-o", bin, ".") // bench/ is a module of its own
	benchEnv := []string{config.EnvBenchOut + "=" + traces}
	for i := range *count {
		step(fmt.Sprintf("row 4 (%d/%d): 10,000 rows through the safe path beside raw values.batchUpdate", i+1, *count))
		safe.add(childBench(bin, benchEnv, "^(BenchmarkSafePath10k|BenchmarkRawBatchUpdate10k)$", "1"))
	}
	// Row 5's backfill runs alone (a process competing for the 2 cores
	// delays its garbage collections and so inflates its peak RSS); then its
	// raw baseline and the poll, which report counts, run side by side, each
	// in its own process. Output is shown when each ends.
	step("row 5: 171,075 cities backfill (child process, alone; emulator served here)")
	ours := backfill(bin, benchEnv, "BenchmarkBackfillCities", "bench-backfill")
	step("rows 5 and 6: the raw backfill and the unchanged poll (child processes, side by side)")
	var raw backfillResult
	var poll runs
	var wg sync.WaitGroup
	wg.Go(func() { raw = backfill(bin, benchEnv, "BenchmarkRawBackfillCities", "bench-raw-backfill") })
	wg.Go(func() {
		poll = childBench(bin, benchEnv, "^(BenchmarkPollUnchanged10Tabs|BenchmarkRawBatchGet10Tabs)$", "1", "-test.benchtime", "5x")
	})
	wg.Wait()

	rows := table(commit, rebuild, safe, poll, ours, raw)
	wall := time.Since(start)
	printTable(os.Stdout, rows)
	fmt.Printf("\nwall time %s on %d CPUs; results in %s, plot in %s (and .png)\n", wall.Round(time.Second), numCPU(),
		filepath.Join(*outDir, "results.json"), filepath.Join(*outDir, "convergence.svg"))
	data, err := json.MarshalIndent(rows, "", "  ")
	check(err)
	check(os.WriteFile(filepath.Join(*outDir, "results.json"), append(data, '\n'), 0o644))
	check(plotConvergence(traces, filepath.Join(*outDir, "convergence.svg")))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func step(s string) { fmt.Fprintf(os.Stderr, "\n== %s\n", s) }

func numCPU() int {
	out, err := exec.Command("nproc").Output()
	if n, e := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && e == nil {
		return n
	}
	return 0
}

// echoMu serializes the echo of buffered child output.
var echoMu sync.Mutex

// run runs a command in dir with extra environment, echoing its output to
// stderr when it ends (children may run side by side), and returns its
// standard output and process state.
func run(env []string, dir, name string, args ...string) (string, *os.ProcessState) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var out bytes.Buffer
	all := &lockedBuffer{}
	cmd.Stdout = io.MultiWriter(&out, all)
	cmd.Stderr = all
	err := cmd.Run()
	echoMu.Lock()
	fmt.Fprintf(os.Stderr, "-- %s %s\n%s", filepath.Base(name), strings.Join(args, " "), all.String())
	echoMu.Unlock()
	if err != nil {
		log.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out.String(), cmd.ProcessState
}

// lockedBuffer is a bytes.Buffer written by the child's stdout and stderr
// copiers at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// goBench runs `go test -run ^$ -benchmem …` and parses its results.
func goBench(env []string, args ...string) runs {
	out, _ := run(env, "", *goCmd, append([]string{"test", "-run", "^$", "-benchmem"}, args...)...)
	return parse(out)
}

// childBench runs benchmarks of the compiled bench/ test binary (in bench/,
// where its testdata paths resolve).
func childBench(bin string, env []string, re, cnt string, extra ...string) runs {
	args := append([]string{"-test.run", "^$", "-test.bench", re, "-test.benchtime", "1x", "-test.count", cnt}, extra...)
	out, _ := run(env, "bench", bin, args...)
	return parse(out)
}

// backfillResult is one backfill child: its metrics, its max RSS and the
// requests the emulator (served by this process) received.
type backfillResult struct {
	metrics  map[string]float64
	rssMB    float64
	requests int64
	rows     float64
}

const cities = 171075

// backfill runs one backfill benchmark alone in a child process against an
// emulator with Google's model served by this process, so the child's
// max RSS (getrusage) is the store's (or the raw client's) alone.
func backfill(bin string, env []string, bench, sheet string) backfillResult {
	emu := emulator.New(emulator.Options{AutoCreate: true, Latency: emulator.GoogleLatency(), Quota: emulator.GoogleQuota()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: emu.Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	env = append(env, config.EnvBenchEmulator+"=http://"+ln.Addr().String(), config.EnvBenchSheet+"="+sheet)
	out, ps := run(env, "bench", bin, "-test.run", "^$", "-test.bench", "^"+bench+"$", "-test.benchtime", "1x")
	r := parse(out)[bench]
	if len(r) == 0 {
		log.Fatalf("%s reported nothing", bench)
	}
	res := backfillResult{metrics: r[0], rows: cities}
	// The child's own VmHWM (the peak of its address space since exec). The
	// rusage max RSS of a child is not used when VmHWM is there: Linux
	// carries the pre-exec high-water mark over exec, and Go starts children
	// with vfork semantics, so it can report this (runner) process's peak.
	var rusage float64
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		rusage = float64(ru.Maxrss) / 1024 // KB on Linux
	}
	res.rssMB = rusage
	if v := res.metrics["peak-MB"]; v > 0 {
		res.rssMB = v
	}
	c := emu.Counters(sheet)
	res.requests = c.Reads + c.Writes
	echoMu.Lock()
	defer echoMu.Unlock()
	fmt.Fprintf(os.Stderr, "%s: child VmHWM %.1f MB (getrusage max RSS %.1f MB), %d requests (%d reads, %d writes)\n",
		bench, res.metrics["peak-MB"], rusage, res.requests, c.Reads, c.Writes)
	return res
}

// parse reads benchmark result lines: name, iterations, value unit pairs.
func parse(out string) runs {
	r := runs{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		r[name] = append(r[name], m)
	}
	return r
}

func (r runs) add(o runs) {
	for k, v := range o {
		r[k] = append(r[k], v...)
	}
}

// med is the median of a metric over a benchmark's runs (NaN if absent).
func (r runs) med(bench, unit string) float64 {
	var xs []float64
	for _, m := range r[bench] {
		if v, ok := m[unit]; ok {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		log.Printf("warning: no %s for %s", unit, bench)
		return math.NaN()
	}
	sort.Float64s(xs)
	if len(xs)%2 == 0 {
		return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	return xs[len(xs)/2]
}

func ratio(ours, base float64) *float64 {
	if base == 0 || math.IsNaN(base) || math.IsNaN(ours) {
		return nil
	}
	r := ours / base
	return &r
}

func le(p *float64, goal float64) bool { return p != nil && *p <= goal }
func ge(p *float64, goal float64) bool { return p != nil && *p >= goal }

func table(commit, rebuild, safe, poll runs, ours, raw backfillResult) []Row {
	var rows []Row
	add := func(r Row) { rows = append(rows, r) }
	n := fmt.Sprintf(" (median of %d, interleaved)", *count)

	c64 := commit.med("BenchmarkCommit64Concurrent", "commits/s")
	floor64 := commit.med("BenchmarkRawFloor64", "records/s")
	batch64 := commit.med("BenchmarkBoltBatchDefault64", "records/s")
	r := ratio(c64, floor64)
	add(Row{Name: "1a durable commits/s, 64 concurrent callers ÷ raw floor (bbolt Update + SQLite tx per 64)", Ours: c64, Baseline: floor64,
		Ratio: r, Goal: "ratio ≥ 0.5", Unit: "commits/s", Met: ge(r, 0.5), Note: "BenchmarkCommit64Concurrent ÷ BenchmarkRawFloor64" + n})
	r = ratio(c64, batch64)
	add(Row{Name: "1b durable commits/s, 64 concurrent callers ÷ bbolt default db.Batch", Ours: c64, Baseline: batch64,
		Ratio: r, Goal: "ratio ≥ 5", Unit: "commits/s", Met: ge(r, 5), Note: "BenchmarkCommit64Concurrent ÷ BenchmarkBoltBatchDefault64" + n})

	p99 := commit.med("BenchmarkCommitSingle", "p99-ms")
	fp99 := commit.med("BenchmarkRawFloorSingle", "p99-ms")
	r = ratio(p99, fp99)
	add(Row{Name: "2 single commit p99 ÷ raw floor p99 (one record)", Ours: p99, Baseline: fp99, Ratio: r, Goal: "ratio ≤ 2.0",
		Unit: "ms", Met: le(r, 2.0), Note: "BenchmarkCommitSingle ÷ BenchmarkRawFloorSingle" + n})

	ev := rebuild.med("BenchmarkRebuild", "events/s")
	rw := rebuild.med("BenchmarkRawSQLiteInsert", "rows/s")
	r = ratio(ev, rw)
	add(Row{Name: "3a read-model rebuild events/s ÷ raw SQLite insert rows/s (171,075 cities)", Ours: ev, Baseline: rw, Ratio: r,
		Goal: "ratio ≥ 0.5", Unit: "events/s ÷ rows/s", Met: ge(r, 0.5), Note: "BenchmarkRebuild ÷ BenchmarkRawSQLiteInsert, HIKOUTEI_BENCH_DATA=cities" + n})
	rs := rebuild.med("BenchmarkRebuild", "ns/op") / 1e9
	rr := rebuild.med("BenchmarkRawSQLiteInsert", "ns/op") / 1e9
	add(Row{Name: "3b rebuild of all 171,075 cities", Ours: rs, Baseline: rr, Ratio: ratio(rs, rr), Goal: "ours < 10 s",
		Unit: "s", Met: rs < 10, Note: "one full Replay vs one full raw load" + n})

	sp := safe.med("BenchmarkSafePath10k", "rows/s")
	rp := safe.med("BenchmarkRawBatchUpdate10k", "rows/s")
	r = ratio(sp, rp)
	note := "Google latency+quota emulator, default pacing, demo sync options; commit → all effects settled" + n
	add(Row{Name: "4a 10,000 new rows through the full safe path (receipts, CAS, fencing)", Ours: sp, Baseline: rp, Ratio: r,
		Goal: "ours ≥ 2500 rows/s", Unit: "rows/s", Met: sp >= 2500, Note: note})
	add(Row{Name: "4b 10,000 rows safe path ÷ raw values.batchUpdate (sheets/v4, same emulator model)", Ours: sp, Baseline: rp, Ratio: r,
		Goal: "ratio ≥ 0.5", Unit: "rows/s", Met: ge(r, 0.5), Note: "BenchmarkSafePath10k ÷ BenchmarkRawBatchUpdate10k" + n})

	oq := float64(ours.requests) * 1000 / ours.rows
	rq := float64(raw.requests) * 1000 / raw.rows
	r = ratio(oq, rq)
	add(Row{Name: "5a 171,075 cities backfill: requests per 1,000 rows", Ours: oq, Baseline: rq, Ratio: r, Goal: "ours ≤ 2",
		Unit: "requests/1k rows", Met: oq <= 2, Note: fmt.Sprintf("all requests incl. provisioning: ours %d (%.0f rows/s), raw values.batchUpdate in 2 MB bodies %d (%.0f rows/s)",
			ours.requests, ours.metrics["rows/s"], raw.requests, raw.metrics["rows/s"])})
	r = ratio(ours.rssMB, raw.rssMB)
	add(Row{Name: "5b 171,075 cities backfill: peak RSS", Ours: ours.rssMB, Baseline: raw.rssMB, Ratio: r, Goal: "ours ≤ 300 MB",
		Unit: "MB", Met: ours.rssMB > 0 && ours.rssMB <= 300, Note: "peak RSS (VmHWM) of a child process running only the backfill; the emulator runs in the parent; baseline = raw sheets/v4 backfill child"})

	pr := poll.med("BenchmarkPollUnchanged10Tabs", "reads/op")
	pw := poll.med("BenchmarkPollUnchanged10Tabs", "writes/op")
	br := poll.med("BenchmarkRawBatchGet10Tabs", "reads/op")
	bw := poll.med("BenchmarkRawBatchGet10Tabs", "writes/op")
	add(Row{Name: "6a unchanged poll of 10 Input tabs (Store.Poller().Poll): read requests", Ours: pr, Baseline: br, Ratio: ratio(pr, br),
		Goal: "ours = 1", Unit: "requests/poll", Met: pr == 1, Note: "mean over 5 polls after convergence; baseline = one raw values.batchGet of the 10 tabs"})
	add(Row{Name: "6b unchanged poll of 10 Input tabs (Store.Poller().Poll): write requests", Ours: pw, Baseline: bw, Ratio: ratio(pw, bw),
		Goal: "ours = 0", Unit: "requests/poll", Met: pw == 0, Note: "ratio null: the baseline writes nothing"})
	return rows
}

func printTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tours\tbaseline\tratio\tgoal\tunit\tmet")
	for _, r := range rows {
		rat := "—"
		if r.Ratio != nil {
			rat = fmt.Sprintf("%.3f", *r.Ratio)
		}
		met := "yes"
		if !r.Met {
			met = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, num(r.Ours), num(r.Baseline), rat, r.Goal, r.Unit, met)
	}
	tw.Flush()
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}

type point struct {
	T    float64 `json:"t"`
	Rows float64 `json:"rows"`
}

func readTrace(dir, name string) plotter.XYs {
	data, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		log.Printf("warning: no %s trace: %v", name, err)
		return plotter.XYs{{}}
	}
	var pts []point
	check(json.Unmarshal(data, &pts))
	xys := make(plotter.XYs, len(pts))
	for i, p := range pts {
		xys[i].X, xys[i].Y = p.T, p.Rows
	}
	return xys
}

// plotConvergence draws rows converged vs seconds: the 10,000-row safe path
// beside raw values.batchUpdate (top) and the 171,075-city backfill beside
// its raw baseline (bottom), with gonum.org/v1/plot.
func plotConvergence(dir, path string) error {
	panel := func(title string, series ...any) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "seconds"
		p.Y.Label.Text = "rows converged"
		p.Legend.Top, p.Legend.Left = true, true
		return p, plotutil.AddLines(p, series...)
	}
	top, err := panel("10,000 new rows, emulator with Google's latency and quota",
		"hikoutei safe path", readTrace(dir, "safe10k"), "raw values.batchUpdate", readTrace(dir, "raw10k"))
	if err != nil {
		return err
	}
	bottom, err := panel("171,075 cities backfill",
		"hikoutei safe path", readTrace(dir, "backfill"), "raw values.batchUpdate", readTrace(dir, "rawbackfill"))
	if err != nil {
		return err
	}
	w, h := 8*vg.Inch, 9*vg.Inch
	for _, img := range []struct {
		c    vg.CanvasWriterTo
		path string
	}{{vgsvg.New(w, h), path}, {vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))}, strings.TrimSuffix(path, ".svg") + ".png"}} {
		dc := draw.New(img.c)
		t := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 8, PadTop: vg.Millimeter * 4,
			PadBottom: vg.Millimeter * 4, PadLeft: vg.Millimeter * 4, PadRight: vg.Millimeter * 4}
		plots := [][]*plot.Plot{{top}, {bottom}}
		canvases := plot.Align(plots, t, dc)
		for i := range plots {
			plots[i][0].Draw(canvases[i][0])
		}
		f, err := os.Create(img.path)
		if err != nil {
			return err
		}
		if _, err := img.c.WriteTo(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
