package examples_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// binDir holds the example programs this test binary built, each built
// once (several tests run the same program); TestMain removes it.
var (
	binDir   string
	binMu    sync.Mutex
	binBuilt = map[string]bool{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hikoutei-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles the example program in dir with the go command that runs
// the test, once per test binary, and returns the program's path.
func build(t *testing.T, dir string) string {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	bin := filepath.Join(binDir, dir)
	if binBuilt[dir] {
		return bin
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH (go test puts GOROOT/bin there): %v", err)
	}
	cmd := exec.CommandContext(t.Context(), gobin, "build", "-o", bin, "./"+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./%s: %v\n%s", dir, err, out)
	}
	binBuilt[dir] = true
	return bin
}

// runProgram runs bin with args and env, and returns its standard output;
// a non-zero exit fails the test with what it wrote.
func runProgram(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), args, err, out, stderr.String())
	}
	return string(out)
}

// The local-only example builds, runs on a fresh directory, and prints
// what it committed, read and queried; run again on the same directory,
// it reopens the store (nothing changes, so nothing is committed).
func TestLocalOnlyExampleRunsAndReopens(t *testing.T) {
	bin := build(t, "localonly")
	dir := filepath.Join(t.TempDir(), "store")
	want := "committed 3 events\nget: HGU Mount Hagen 5388\nfind: HGU 5388\nfind: GKA 5282\nfind: MAG 20\ncount altitude >= 5000: 2\nin and prefix: Goroka\n"
	if got := runProgram(t, bin, nil, "-dir", dir); got != want {
		t.Fatalf("first run printed\n%s\nwant\n%s", got, want)
	}
	want = strings.Replace(want, "committed 3 events", "committed 0 events", 1)
	if got := runProgram(t, bin, nil, "-dir", dir); got != want {
		t.Fatalf("second run printed\n%s\nwant\n%s", got, want)
	}
}

// The sync example builds, runs against the Sheets emulator over HTTP
// (configured only through the environment, as in production), and exits
// once the outbox is drained; the emulated spreadsheet then shows the
// committed rows.
func TestSyncExampleWritesTheRowsToTheEmulator(t *testing.T) {
	bin := build(t, "sync")
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	env := []string{"HIKOUTEI_SYNC_SPREADSHEET_URL=examples-sheet", "HIKOUTEI_SHEETS_ENDPOINT=" + srv.URL,
		"GOOGLE_APPLICATION_CREDENTIALS=", "HIKOUTEI_NATS_URL="}
	out := runProgram(t, bin, env, "-dir", filepath.Join(t.TempDir(), "store"), "-timeout", "2m")
	if !strings.HasPrefix(out, "synced: ") {
		t.Fatalf("the sync example printed %q", out)
	}
	rows, err := emu.Person("examples-sheet").Displayed("Airport_System")
	if err != nil {
		t.Fatalf("the Airport_System tab: %v", err)
	}
	var shown []string
	for _, r := range rows {
		shown = append(shown, strings.Join(r, "|"))
	}
	for _, name := range []string{"Goroka", "Madang"} {
		if !strings.Contains(strings.Join(shown, "\n"), name) {
			t.Fatalf("the Airport_System tab lacks %s:\n%s", name, strings.Join(shown, "\n"))
		}
	}
}

// The verifylog example, which reads log.db with bbolt alone, prints the
// same head as `hikoutei audit verify` (Store.ChainHead) for a store the
// local-only example wrote, accepts that head as a pin, and refuses a pin
// the log does not extend.
func TestVerifyLogExamplePrintsTheStoresHead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	runProgram(t, build(t, "localonly"), nil, "-dir", dir)
	head, err := hikoutei.VerifyDir(t.Context(), dir, hikoutei.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bin := build(t, "verifylog")
	logPath := filepath.Join(dir, events.LogFileName)
	pin := fmt.Sprintf("%d:%s", head.Head, head.HeadHash)
	want := fmt.Sprintf("verified %d records\nhead %s\n", head.Records, pin)
	if got := runProgram(t, bin, nil, "-log", logPath, "-pin", pin); got != want {
		t.Fatalf("verifylog printed\n%s\nwant\n%s", got, want)
	}
	other := fmt.Sprintf("%d:%s", head.Head, strings.Repeat("0", 64))
	if err := exec.CommandContext(t.Context(), bin, "-log", logPath, "-pin", other).Run(); err == nil {
		t.Fatal("verifylog accepted a pin the log does not extend")
	}
}

// The program docs/operations.md's "Binary size" section measures builds and runs:
// it commits one airport to a temporary store and prints it back.
func TestLocalOnlySizeExampleRuns(t *testing.T) {
	bin := build(t, "localonly-size")
	if got := runProgram(t, bin, []string{"TMPDIR=" + t.TempDir()}); got != "Goroka\n" {
		t.Fatalf("localonly-size printed %q, want %q", got, "Goroka\n")
	}
}

// The README's first program builds and runs as a newcomer runs it, in a
// directory of its own: it creates ./airports.store, commits one airport
// and prints it; run again, it reopens the store and prints the same.
func TestQuickStartExampleRunsAndReopens(t *testing.T) {
	bin := build(t, "quickstart")
	work := t.TempDir()
	for run := 1; run <= 2; run++ {
		cmd := exec.CommandContext(t.Context(), bin)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "Goroka 5282\n" {
			t.Fatalf("run %d: %v, printed %q, want %q", run, err, out, "Goroka 5282\n")
		}
	}
	if _, err := os.Stat(filepath.Join(work, "airports.store", events.LogFileName)); err != nil {
		t.Fatalf("the quick start left no store in ./airports.store: %v", err)
	}
}
