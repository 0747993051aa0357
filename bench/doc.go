// Package bench holds the end-to-end sync benchmarks behind `make bench`
// (bench_test.go: the safe path and the backfill through the Sheets
// emulator with Google's latency and quota model, each beside a raw
// sheets/v4 baseline, and the unchanged poll) and, in cmd/benchtable, the
// runner that measures every figure of the results table. See README.md.
// Nothing here runs under `go test` without -bench.
package bench
