// Command benchtable is `make bench`: it runs the Go benchmarks of the
// write, rebuild, sync, drain, log-size and poll paths beside their raw
// baselines (measured in the same run, as interleaved repeats), prints one
// table — figure, ours, baseline, ratio, goal — and the time each step
// took, and writes the table to bench/results.json, with the convergence
// plot in bench/convergence.svg. It lives in the bench/ module (its
// plotting dependencies stay out of the library's go.mod); build it there
// and run it from the repository root, as `make bench` does:
//
//	go build -C bench -o /tmp/benchtable ./cmd/benchtable && /tmp/benchtable [-benchtime 1s] [-count 3] [-backfills 1] [-historymax 1000000]
//
// A benchmark that does not exist (yet) gives its row n/a and met = false;
// a benchmark that exists and fails ends the runner. See bench/README.md
// for what each row means.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

var (
	goCmd     = flag.String("go", "go", "go command")
	benchtime = flag.String("benchtime", "1s", "-benchtime of the commit benchmarks (rows 1–2 and 13; row 10a runs twice it, both its sides in one process)")
	count     = flag.Int("count", 3, "interleaved repeats (ours, baseline, ours, …; one process each) of rows 1–4 and 6; medians are reported")
	drains    = flag.Int("drains", 1, "repeats of row 7 (each one interleaved pair: 5,000 rows, then the burst)")
	backfills = flag.Int("backfills", 1, "interleaved repeats of row 5 (our 171,075-city backfill, then the raw one, each alone)")
	serveRows = flag.Int("serverows", 40000, "rows of rows 5c–5d (the backfill of both tabs with the poller and anti-entropy running, and its raw baseline; 171075 = every city, which takes many minutes)")
	serves    = flag.Int("serves", 1, "interleaved repeats of rows 5c–5d (ours, then the raw one, each alone)")
	cityRows  = flag.Int("cityrows", 20000, "rows of row 9's Input tab (171075 = every city; its untimed sync of 2 × 171,075 rows alone takes minutes, so the default is the first 20,000 and the goal scales with the rows)")
	cityPolls = flag.Int("citypolls", 1, "repeats of row 9 (one process each: the 171,075-city poll after its untimed sync, then the raw read; 3 passes each)")
	idleRows  = flag.Int("idlerows", 7184, "rows of row 11's idle store (171075 = every city; its untimed sync takes minutes)")
	idles     = flag.Int("idles", 1, "repeats of rows 11 and 11b (a pair of processes each: the idle store, then the raw read; 3 idle minutes each)")
	freshRows = flag.Int("freshrows", 1000, "rows per entity of row 12's ten entities (10000 = the issue's 10 × 10,000; its untimed sync takes minutes)")
	freshSecs = flag.Int("freshsecs", 40, "seconds of row 12's measured window (commits at 50/s, a person's edit every 2 s)")
	histMax   = flag.Uint64("historymax", 1000000, "largest generated log row 14 opens (10^5, 10^6, 10^7 events): 10000000 adds row 14c, whose generation takes over half an hour (kept in HIKOUTEI_BENCH_LOGS when set)")
	outDir    = flag.String("out", "bench", "directory for results.json and convergence.svg")
	only      = flag.String("rows", "", "comma-separated steps to run (1, 3, 4, 5, 5c, 6, 7, 8, 9, 10a, 10b, 11, 11b, 12, 13, 14; 1 runs rows 1–2, 5c rows 5c–5d); empty runs every step. The table then holds only those rows: pass -out elsewhere to keep bench/results.json")
)

// budget is the wall time of a whole default run on an idle 2-core
// machine, as measured (bench/README.md, the Makefile's bench target).
const budget = "15 minutes"

func main() {
	log.SetFlags(0)
	log.SetPrefix("benchtable: ")
	flag.Parse()
	start := time.Now()
	// The results are written after every step has run: a folder that
	// cannot hold them fails now, not at the end of the run.
	check(os.MkdirAll(*outDir, 0o755))
	tmp, err := os.MkdirTemp("", "benchtable-")
	check(err)
	defer os.RemoveAll(tmp)
	traces := filepath.Join(tmp, "traces")
	check(os.MkdirAll(traces, 0o755))

	var clock steps
	all := measure(&clock, tmp, traces)
	rows := table(all)
	wall := time.Since(start)
	printTable(os.Stdout, rows)
	clock.print(os.Stdout, wall)
	fmt.Printf("\nwall time %s on %d CPUs; results in %s, plot in %s (and .png)\n", wall.Round(time.Second), numCPU(),
		filepath.Join(*outDir, "results.json"), filepath.Join(*outDir, "convergence.svg"))
	data, err := json.MarshalIndent(rows, "", "  ")
	check(err)
	check(os.WriteFile(filepath.Join(*outDir, "results.json"), append(data, '\n'), 0o644))
	if selected("4") || selected("5") {
		check(plotConvergence(traces, filepath.Join(*outDir, "convergence.svg")))
	}
}

// measure runs every step and returns all their results. Repeated pairs
// run ours, baseline, ours, baseline, … (one process each repeat), so a
// slow phase of a shared machine hits both sides of a pair; nothing runs
// side by side, since every row but 6a/6b is a time or a peak.
func measure(clock *steps, tmp, traces string) runs {
	all := runs{}
	bins := testBins{dir: tmp}
	clock.do("build", "building the test binaries ("+strings.Join(neededPkgs(), ", ")+")", 1, func(int) {
		bins.build(neededPkgs())
	})
	root, evts, eng, bin := bins.of("."), bins.of("./events/"), bins.of("./internal/engine/"), bins.of("bench").path
	clock.do("1", "rows 1–2: commit benchmarks beside the raw floor and bbolt's db.Batch", *count, func(int) {
		all.add(root.bench(nil, "^(BenchmarkCommit64Concurrent|BenchmarkRawFloor64|BenchmarkBoltBatchDefault64|BenchmarkCommitSingle|BenchmarkRawFloorSingle)$", *benchtime))
	})
	clock.do("3", "row 3: rebuild of the 171,075 cities beside raw SQLite inserts", *count, func(int) {
		all.add(root.bench([]string{config.EnvBenchData + "=cities"}, "^(BenchmarkRebuild|BenchmarkRawSQLiteInsert)$", "1x"))
	})
	clock.do("10a", "row 10a: durable appends with the hash chain beside without it (one process, alternating rounds)", *count, func(int) {
		all.add(evts.bench(nil, "^"+chainAlt+"$", chainTime(*benchtime)))
	})
	clock.do("10b", "row 10b: audit verify of the 171,075 cities' log", 1, func(int) {
		all.add(root.bench([]string{config.EnvBenchData + "=cities"}, "^BenchmarkVerify$", "1x"))
	})
	clock.do("7", "row 7: drain after 100,000 commits on 5,000 keys beside 5,000 single-row commits", *drains, func(int) {
		all.add(eng.bench(nil, "^BenchmarkCoalescedDrain$", "1x"))
	})
	clock.do("8", "row 8: log bytes per synced row", 1, func(int) {
		all.add(withRecordBytes(root.bench(nil, "^BenchmarkLogBytesPerSyncedRow$", "1x")))
	})
	clock.do("13", "row 13: personal fields beside plain ones (commit, rebuild, reads)", *count, func(int) {
		all.add(root.bench(nil, "^BenchmarkPersonalCommit$", *benchtime))
		all.add(root.bench(nil, "^BenchmarkPersonalRebuild$", "10x"))
	})
	clock.do("14", "rows 14a–14e: Open and commit rate over a generated log, hot log.db under retention", 1, func(int) {
		all.add(historyBenches(root, tmp))
	})
	benchEnv := []string{config.EnvBenchOut + "=" + traces}
	// Row 4: each side alone in a child process against a fresh emulator
	// with Google's model served by this process, so the child's CPU per
	// row (4c) is the client's alone, without the emulator's.
	clock.do("4", "rows 4a–4d: 10,000 rows through the safe path beside raw values.batchUpdate, then their sync alone (child processes, emulator in the runner)", *count, func(int) {
		all.add(googleBench(bin, benchEnv, safe10k, "bench-safe"))
		all.add(googleBench(bin, benchEnv, raw10k, "bench-raw"))
		all.add(googleBench(bin, benchEnv, safeSync, "bench-safe-sync"))
	})
	// Row 5: each backfill runs alone (a process competing for the 2 cores
	// delays its garbage collections and so inflates its peak RSS), against
	// an emulator this process serves, so the child's peak is its own.
	clock.do("5", "row 5: 171,075 cities backfill, ours then raw (child processes, each alone)", *backfills, func(int) {
		all.add(backfill(bin, benchEnv, "BenchmarkBackfillCities", "bench-backfill"))
		all.add(backfill(bin, benchEnv, "BenchmarkRawBackfillCities", "bench-raw-backfill"))
	})
	clock.do("5c", fmt.Sprintf("rows 5c–5d: %d cities backfilled to both tabs with serve's workers, ours then raw (child processes, each alone)", *serveRows), *serves, func(int) {
		env := append(benchEnv[:len(benchEnv):len(benchEnv)], config.EnvBenchBackfillRows+"="+strconv.Itoa(*serveRows))
		all.add(backfill(bin, env, "BenchmarkBackfillCitiesServe", "bench-backfill-serve"))
		all.add(backfill(bin, env, "BenchmarkRawBackfillCitiesBoth", "bench-raw-backfill-both"))
	})
	clock.do("6", "row 6: unchanged poll of 10 Input tabs beside raw values.batchGet", *count, func(int) {
		all.add(childBench(bin, benchEnv, "^(BenchmarkPollUnchanged10Tabs|BenchmarkRawBatchGet10Tabs)$", "-test.benchtime", "5x"))
	})
	clock.do("9", fmt.Sprintf("row 9: unchanged poll of %d cities beside raw values.batchGet", *cityRows), *cityPolls, func(int) {
		env := append(benchEnv[:len(benchEnv):len(benchEnv)], config.EnvBenchInboundRows+"="+strconv.Itoa(*cityRows))
		all.add(servedBench(bin, env, pollCities, "bench-poll-cities", "-test.benchtime", "3x"))
		all.add(servedBench(bin, env, getCities, "bench-poll-cities-raw", "-test.benchtime", "3x"))
	})
	clock.do("11", fmt.Sprintf("row 11: idle minutes of a store of %d rows beside one raw values.batchGet a minute", *idleRows), *idles, func(int) {
		all.add(switchedBench(bin, benchEnv, *idleRows, idle, "bench-idle", "-test.benchtime", "3x"))
		all.add(switchedBench(bin, benchEnv, *idleRows, rawIdle, "bench-idle-raw", "-test.benchtime", "3x"))
	})
	clock.do("11b", fmt.Sprintf("row 11b: idle minutes of a store of %d rows beside one raw values.batchGet a minute", cities), *idles, func(int) {
		all.add(switchedBench(bin, benchEnv, cities, idle, "bench-idle-all", "-test.benchtime", "3x"))
		all.add(switchedBench(bin, benchEnv, cities, rawIdle, "bench-idle-all-raw", "-test.benchtime", "3x"))
	})
	clock.do("12", fmt.Sprintf("row 12: freshness of %d × %d rows, with the wake hook then without", 10, *freshRows), 1, func(int) {
		env := append(benchEnv[:len(benchEnv):len(benchEnv)], config.EnvBenchFreshRows+"="+strconv.Itoa(*freshRows),
			config.EnvBenchFreshSeconds+"="+strconv.Itoa(*freshSecs))
		all.add(childBench(bin, env, "^"+freshHook+"$"))
		all.add(childBench(bin, env, "^"+freshPoll+"$"))
	})
	return all
}

// historyBenches runs the long-history benchmarks of row 14 (root
// package): Open of each generated log up to -historymax, the commit rate
// after 10^6 events beside an empty log, and log.db under retention. The
// generated logs are kept in HIKOUTEI_BENCH_LOGS when it is set (a second
// run reuses them), else in the runner's temporary directory, shared by
// the Open and commit-rate benchmarks of this run.
func historyBenches(root testBin, tmp string) runs {
	logs := os.Getenv(config.EnvBenchLogs)
	if logs == "" {
		logs = filepath.Join(tmp, "logs")
	}
	env := []string{config.EnvBenchLogs + "=" + logs}
	r := root.bench(env, "^"+openHistory+"$/^events=("+strings.Join(historySizes(*histMax), "|")+")$", "3x", "-test.timeout", "3h")
	r.add(root.bench(env, "^"+commitAfter+"$", "1x", "-test.timeout", "3h"))
	r.add(root.bench(nil, "^"+hotLog+"$", "1x", "-test.timeout", "3h"))
	return r
}

// historySizes are the generated logs row 14 opens: 10^5 and 10^6
// events, and 10^7 when -historymax reaches it.
func historySizes(most uint64) []string {
	out := []string{"100000", "1000000"}
	if most >= 10_000_000 {
		out = append(out, "10000000")
	}
	return out
}

// withRecordBytes adds record-B/row (the log's record bytes per synced
// row, log-B/row ÷ file/records) to the runs of the log-size benchmark:
// the baseline of row 8.
func withRecordBytes(r runs) runs {
	for _, m := range r["BenchmarkLogBytesPerSyncedRow"] {
		if lb, fr := m["log-B/row"], m["file/records"]; lb > 0 && fr > 0 {
			m["record-B/row"] = lb / fr
		}
	}
	return r
}

// step is one step of the runner and the wall time it took.
type step struct {
	name string
	took time.Duration
}

// steps times the runner's steps.
type steps []step

// do runs f(i) for i in [0, n), announcing each repeat, and records the
// step's wall time; a step that -rows leaves out does not run (the build
// builds only the test binaries of the steps that run).
func (s *steps) do(id, name string, n int, f func(i int)) {
	if !selected(id) {
		return
	}
	t0 := time.Now()
	for i := range n {
		fmt.Fprintf(os.Stderr, "\n== %s (%d/%d)\n", name, i+1, n)
		f(i)
	}
	*s = append(*s, step{fmt.Sprintf("%s (×%d)", name, n), time.Since(t0)})
}

// print lists each step's wall time and its share of the whole run's
// wall time, then the total (the budget in bench/README.md is of it).
func (s steps) print(w io.Writer, wall time.Duration) {
	fmt.Fprintln(w, "\nstep times (share of the whole run):")
	for _, st := range s {
		fmt.Fprintf(w, "  %7s  %3.0f %%  %s\n", st.took.Round(time.Second), 100*st.took.Seconds()/wall.Seconds(), st.name)
	}
	fmt.Fprintf(w, "  %7s  total (budget: %s idle on 2 cores for every step, see bench/README.md)\n", wall.Round(time.Second), budget)
}

// selected says whether -rows runs the step id ("build" is the build of
// the test binaries, needed by every step: see neededPkgs).
func selected(id string) bool {
	if id == "build" {
		return len(neededPkgs()) > 0
	}
	if *only == "" {
		return true
	}
	ids := strings.Split(*only, ",")
	return slices.ContainsFunc(ids, func(x string) bool { return strings.TrimSpace(x) == id })
}

// rowStep is the step that measures a table row ("1a" → "1", "4c" → "4",
// "10a" → "10a", "5d" → "5c", "11b" → "11b", "12b" → "12").
func rowStep(name string) string {
	id := strings.Fields(name)[0]
	switch {
	case strings.HasPrefix(id, "10"):
		return id
	case id == "5c" || id == "5d":
		return "5c"
	case id == "11b":
		return id
	}
	if id == "2" {
		return "1"
	}
	return strings.TrimRight(id, "abcdefgh")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func numCPU() int {
	out, err := exec.Command("nproc").Output()
	if n, e := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && e == nil {
		return n
	}
	return 0
}

// chainTime is row 10a's -benchtime: twice bt when it is a duration, so
// that each of the row's two sides, now in one process, is timed for about
// bt as when each had a process of its own; an iteration count ("40x", of
// rounds) as it is.
func chainTime(bt string) string {
	d, err := time.ParseDuration(bt)
	if err != nil {
		return bt
	}
	return (2 * d).String()
}
