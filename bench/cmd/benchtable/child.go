package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	benchpkg "github.com/hikoutei/hikoutei-go/bench"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// runs maps a benchmark name (without the -GOMAXPROCS suffix) to the
// metrics of each of its runs, in the order they ran (unit → value, "ns/op"
// included). Benchmarks run as interleaved pairs (ours, baseline, ours,
// baseline, …) so the i-th run of one side pairs with the i-th of the other.
type runs map[string][]map[string]float64

func (r runs) add(o runs) {
	for k, v := range o {
		r[k] = append(r[k], v...)
	}
}

// vals is a metric of a benchmark over its runs, in order; nil if the
// benchmark did not run or never reported the metric.
func (r runs) vals(bench, unit string) []float64 {
	var xs []float64
	for _, m := range r[bench] {
		if v, ok := m[unit]; ok {
			xs = append(xs, v)
		}
	}
	return xs
}

// median of xs; NaN when xs is empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// echoMu serializes the echo of buffered child output.
var echoMu sync.Mutex

// run runs a command in dir with extra environment, echoing its output to
// stderr when it ends (children may run side by side), and returns its
// standard output and process state. A command that fails (a benchmark
// that exists and fails, a build error) ends the runner.
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

// childBench runs benchmarks of the compiled bench/ test binary (in bench/,
// where its testdata paths resolve).
func childBench(bin string, env []string, re string, extra ...string) runs {
	args := append([]string{"-test.run", "^$", "-test.bench", re, "-test.benchtime", "1x", "-test.count", "1"}, extra...)
	out, _ := run(env, "bench", bin, args...)
	return parse(out)
}

// cities is the row count of the backfill (testdata/data/cities.json.gz).
const cities = 171075

// backfill runs one backfill benchmark alone in a child process against an
// emulator with Google's model served by this process, so the child's peak
// RSS is the store's (or the raw client's) alone. Besides the benchmark's
// metrics it returns "rss-MB" (the child's own VmHWM, see below) and
// "req/1krows" (every request the emulator received for the spreadsheet).
func backfill(bin string, env []string, bench, sheet string) runs {
	emu := emulator.New(emulator.GoogleModel(emulator.Options{AutoCreate: true}))
	url, stop := serve(emu.Handler())
	defer stop()
	env = append(env, config.EnvBenchEmulator+"="+url, config.EnvBenchSheet+"="+sheet)
	out, ps := run(env, "bench", bin, "-test.run", "^$", "-test.bench", "^"+bench+"$", "-test.benchtime", "1x")
	r := parse(out)[bench]
	if len(r) == 0 {
		log.Fatalf("%s reported nothing", bench)
	}
	m := r[0]
	// The child's own VmHWM (the peak of its address space since exec). The
	// rusage max RSS of a child is not used when VmHWM is there: Linux
	// carries the pre-exec high-water mark over exec, and Go starts children
	// with vfork semantics, so it can report this (runner) process's peak.
	var rusage float64
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		rusage = float64(ru.Maxrss) / 1024 // KB on Linux
	}
	m["rss-MB"] = rusage
	if v := m["peak-MB"]; v > 0 {
		m["rss-MB"] = v
	}
	c := emu.Counters(sheet)
	m["requests"] = float64(c.Reads + c.Writes)
	m["req/1krows"] = float64(c.Reads+c.Writes) * 1000 / cities
	echoMu.Lock()
	defer echoMu.Unlock()
	fmt.Fprintf(os.Stderr, "%s: child VmHWM %.1f MB (getrusage max RSS %.1f MB), %d requests (%d reads, %d writes)\n",
		bench, m["peak-MB"], rusage, c.Reads+c.Writes, c.Reads, c.Writes)
	return runs{bench: {m}}
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
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		name := benchName(f[0])
		r[name] = append(r[name], m)
	}
	return r
}

// benchName drops the -GOMAXPROCS suffix of a result line's name.
func benchName(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// serve serves an emulator's handler on a loopback port until stop; it
// returns its URL.
func serve(h http.Handler) (url string, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // loopback only
	check(err)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }
}

// googleBench runs one benchmark of the bench/ binary alone in a child
// process against a fresh emulator with Google's latency and quota model
// served by this process on sheet, so the child's CPU is its own and the
// two sides of a pair do not share a quota window.
func googleBench(bin string, env []string, bench, sheet string) runs {
	url, stop := serve(emulator.New(emulator.GoogleModel(emulator.Options{AutoCreate: true})).Handler())
	defer stop()
	env = append(env[:len(env):len(env)], config.EnvBenchEmulator+"="+url, config.EnvBenchSheet+"="+sheet)
	return childBench(bin, env, "^"+bench+"$")
}

// servedBench runs one benchmark of the bench/ binary alone in a child
// process against a plain emulator (no latency, no quota) this process
// serves on sheet, so the child's allocations are its own.
func servedBench(bin string, env []string, bench, sheet string, extra ...string) runs {
	url, stop := serve(emulator.New(emulator.Options{AutoCreate: true}).Handler())
	defer stop()
	env = append(env[:len(env):len(env)], config.EnvBenchEmulator+"="+url, config.EnvBenchSheet+"="+sheet)
	return childBench(bin, env, "^"+bench+"$", extra...)
}

// switchedBench runs one idle benchmark of the bench/ binary alone in a
// child process against a bench.ModelSwitch this process serves on sheet:
// no latency or quota for the child's untimed setup, Google's model once
// the child switches it (the measured minutes). Its results are keyed
// name@rows (rows 11 and 11b run the same benchmarks at two sizes).
func switchedBench(bin string, env []string, rows int, bench, sheet string, extra ...string) runs {
	url, stop := serve(benchpkg.NewModelSwitch())
	defer stop()
	env = append(env[:len(env):len(env)], config.EnvBenchEmulator+"="+url, config.EnvBenchSheet+"="+sheet,
		config.EnvBenchInboundRows+"="+strconv.Itoa(rows))
	out := runs{}
	for name, ms := range childBench(bin, env, "^"+bench+"$", extra...) {
		out[atRows(name, rows)] = ms
	}
	return out
}

// atRows names a benchmark's results at a row count.
func atRows(bench string, rows int) string { return bench + "@" + strconv.Itoa(rows) }
