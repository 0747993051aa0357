package main

import (
	"path/filepath"
	"slices"
	"strings"
)

// A step's benchmarks run from its package's test binary, built once per
// run before the first step: a `go test` per repeat linked that binary
// again each time (about 3 CPU-s of the linker each, over twenty times a
// run), which is setup, not the measured work.

// testBin is one package's test binary and the folder it runs in (the
// package's, where its testdata resolves, as under `go test`).
type testBin struct {
	path, dir string
}

// stepPkgs is the package whose benchmarks each step runs ("bench" is the
// bench/ module, a module of its own).
var stepPkgs = map[string]string{
	"1": ".", "3": ".", "8": ".", "10b": ".", "13": ".", "14": ".",
	"10a": "./events/", "7": "./internal/engine/",
	"4": "bench", "5": "bench", "5c": "bench", "6": "bench", "9": "bench", "11": "bench", "11b": "bench", "12": "bench",
}

// pkgOrder is the order the binaries are built in.
var pkgOrder = []string{".", "./events/", "./internal/engine/", "bench"}

// neededPkgs are the packages of the steps -rows runs, in build order.
func neededPkgs() []string {
	var out []string
	for _, pkg := range pkgOrder {
		for step, p := range stepPkgs {
			if p == pkg && selected(step) {
				out = append(out, pkg)
				break
			}
		}
	}
	return out
}

// testBins builds the test binaries into dir.
type testBins struct {
	dir string
}

// build builds the test binary of each package (go test -c).
func (b testBins) build(pkgs []string) {
	for _, pkg := range pkgs {
		t := b.of(pkg)
		if pkg == "bench" {
			run(nil, "", *goCmd, "test", "-C", "bench", "-c", "-o", t.path, ".") // bench/ is a module of its own
			continue
		}
		run(nil, "", *goCmd, "test", "-c", "-o", t.path, pkg)
	}
}

// of is the test binary of pkg (built by build).
func (b testBins) of(pkg string) testBin {
	dir := strings.Trim(pkg, "./")
	name := strings.ReplaceAll(dir, "/", "-")
	if name == "" {
		name = "root"
	}
	abs, err := filepath.Abs(filepath.Join(b.dir, name+".test"))
	check(err)
	return testBin{path: abs, dir: dir}
}

// bench runs the benchmarks matching re once each (-test.count 1) for
// benchtime, with -test.benchmem and a 10-minute timeout unless extra
// sets another, as `go test -run ^$ -benchmem -bench re` would, and
// parses their results. A pattern that matches no benchmark is not an
// error (the row says so).
func (t testBin) bench(env []string, re, benchtime string, extra ...string) runs {
	args := []string{"-test.run", "^$", "-test.benchmem", "-test.bench", re, "-test.benchtime", benchtime, "-test.count", "1"}
	if !slices.Contains(extra, "-test.timeout") {
		args = append(args, "-test.timeout", "10m")
	}
	out, _ := run(env, t.dir, t.path, append(args, extra...)...)
	return parse(out)
}
