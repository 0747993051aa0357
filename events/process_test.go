package events

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cross-process tests re-execute this test binary as a child writer. The
// child's behaviour is chosen by environment variables read in TestMain.
const (
	envChild       = "HIKOUTEI_TEST_CHILD"        // "hold" | "open"
	envChildDir    = "HIKOUTEI_TEST_DIR"          // store directory
	envClockOffset = "HIKOUTEI_TEST_CLOCK_OFFSET" // child clock = wall clock + this duration
	envOldFence    = "HIKOUTEI_TEST_OLD_FENCE"    // "epoch:token" to try an append with
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// offsetClock is the wall clock shifted by a fixed offset: it lets a child
// process stand at "16 s later" without the test waiting 16 s.
type offsetClock struct{ d time.Duration }

func (c offsetClock) Now() time.Time                         { return time.Now().Add(c.d) }
func (c offsetClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func runChild(mode string) int {
	offset, _ := time.ParseDuration(os.Getenv(envClockOffset))
	opts := WriterOptions{Log: Options{Clock: offsetClock{offset}}, Operation: "child-" + mode, AcquireWait: -1}
	w, err := OpenWriter(os.Getenv(envChildDir), opts)
	if err != nil {
		fmt.Printf("ERR %s\n", err)
		return 0
	}
	f := w.Fence()
	fmt.Printf("HELD %d %s %d\n", f.Epoch, f.Token, os.Getpid())
	if old := os.Getenv(envOldFence); old != "" {
		fmt.Printf("OLDFENCE %v\n", appendWithOld(w, old))
	}
	if mode == "hold" {
		bufio.NewReader(os.Stdin).ReadString('\n') // hold until killed
	}
	if err := w.Close(); err != nil {
		fmt.Printf("CLOSE %v\n", err)
	}
	return 0
}

func appendWithOld(w *Writer, old string) error {
	epoch, token, _ := strings.Cut(old, ":")
	e, _ := strconv.ParseUint(epoch, 10, 64)
	_, err := w.Log().Append(Fence{Role: DefaultRole, Epoch: e, Token: token}, unit("s/a", AnyVersion, 1))
	return err
}

type child struct {
	cmd   *exec.Cmd
	lines *bufio.Scanner
	stdin interface{ Close() error }
}

func startChild(t *testing.T, mode, dir string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, envChild+"="+mode, envChildDir+"="+dir)...)
	out, err := cmd.StdoutPipe()
	must(t, err)
	in, err := cmd.StdinPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &child{cmd: cmd, lines: bufio.NewScanner(out), stdin: in}
}

func (c *child) line(t *testing.T) string {
	t.Helper()
	if !c.lines.Scan() {
		t.Fatalf("child ended without output: %v", c.lines.Err())
	}
	return c.lines.Text()
}

// runToEnd runs a child that opens, reports and closes; it returns its lines.
func runToEnd(t *testing.T, dir string, env ...string) []string {
	t.Helper()
	c := startChild(t, "open", dir, env...)
	var lines []string
	for c.lines.Scan() {
		lines = append(lines, c.lines.Text())
	}
	c.cmd.Wait()
	return lines
}

func TestTwoProcessesNeverTwoWritersAndKillNineTakeover(t *testing.T) {
	dir := t.TempDir()
	holder := startChild(t, "hold", dir)
	held := strings.Fields(holder.line(t)) // HELD epoch token pid
	if held[0] != "HELD" {
		t.Fatalf("holder: %v", held)
	}

	// Second process while the first holds: a clear error naming the holder
	// and its operation, after the 1 s open timeout — not a hang.
	start := time.Now()
	got := runToEnd(t, dir)
	if len(got) != 1 || !strings.HasPrefix(got[0], "ERR store_locked") || !strings.Contains(got[0], "pid "+held[3]) || !strings.Contains(got[0], `"child-hold"`) {
		t.Fatalf("contender saw %v", got)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("contender took %v: it hung", waited)
	}

	must(t, holder.cmd.Process.Signal(syscall.SIGKILL))
	holder.cmd.Wait()

	// Right after the kill the dead holder's heartbeat is fresh: the rule
	// forbids a takeover, and the leftover lease.toml is not seized.
	if got := runToEnd(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], "ERR lease_held") {
		t.Fatalf("immediately after kill -9: %v", got)
	}
	// 16 s later (child clock), the stale-heartbeat rule allows it.
	got = runToEnd(t, dir, envClockOffset+"=16s", envOldFence+"="+held[1]+":"+held[2])
	if len(got) < 2 || !strings.HasPrefix(got[0], "HELD ") {
		t.Fatalf("takeover child: %v", got)
	}
	epoch, _ := strconv.Atoi(strings.Fields(got[0])[1])
	if old, _ := strconv.Atoi(held[1]); epoch != old+1 {
		t.Fatalf("epoch %d after takeover of epoch %d", epoch, old)
	}
	if !strings.HasPrefix(got[1], "OLDFENCE stale_writer_fence") {
		t.Fatalf("append with the dead holder's token: %v", got[1])
	}
}

func TestCleanCloseLetsAnotherProcessOpenAtOnce(t *testing.T) {
	dir := t.TempDir()
	first := runToEnd(t, dir) // opens, appends nothing, closes cleanly
	if !strings.HasPrefix(first[0], "HELD 1 ") {
		t.Fatalf("first: %v", first)
	}
	// No clock offset and AcquireWait -1: any remaining lease would fail it.
	second := runToEnd(t, dir)
	if len(second) != 1 || !strings.HasPrefix(second[0], "HELD 2 ") {
		t.Fatalf("second: %v", second)
	}
	if _, err := os.Stat(dir + "/" + LeaseFileName); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lease.toml after clean close: %v", err)
	}
}
