package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/projector"
)

// stock is an entity with a column people edit.
type stock struct {
	ID  string `hikoutei:"id,pk"`
	Qty int64  `hikoutei:"qty,user"`
}

// buildHikoutei builds this command into a temporary directory.
func buildHikoutei(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the hikoutei binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "hikoutei")
	if out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// qtyCell is the A1 reference of stock id's qty cell on the Input tab.
func qtyCell(t *testing.T, sheet *hikouteitest.Sheet, id string) string {
	t.Helper()
	rows, err := sheet.Person().Displayed("Stock_Input")
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "qty")
	for i, r := range rows {
		if col >= 0 && len(r) > 0 && r[len(r)-1] == id {
			return fmt.Sprintf("%c%d", 'A'+col, i+1)
		}
	}
	t.Fatalf("no row %s", id)
	return ""
}

// conflictAndQuarantine prepares, in process, a store of two stocks
// synced to sheet: stock 1 in conflict (the system wrote 5, a person 9),
// stock 2's qty quarantined (a person typed text). It returns the
// conflict's and the quarantine record's ids, with the store closed.
func conflictAndQuarantine(t *testing.T, dir string, sheet *hikouteitest.Sheet) (string, string) {
	t.Helper()
	ctx := context.Background()
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1}, hikoutei.Entity[stock]("Stock"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := hikouteitest.New(t, s)
	commitStocks(t, s, &stock{ID: "1", Qty: 1}, &stock{ID: "2", Qty: 2})
	h.Drain(ctx)
	commitStocks(t, s, &stock{ID: "1", Qty: 5})
	if err := sheet.Person().Type("Stock_Input", qtyCell(t, sheet, "1"), "9"); err != nil {
		t.Fatal(err)
	}
	if err := sheet.Person().Type("Stock_Input", qtyCell(t, sheet, "2"), "lots"); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	if _, err := h.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	open, err := s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 {
		t.Fatalf("open conflicts %+v %v", open, err)
	}
	return open[0].ID, activeQuarantine(t, s.ReadModelPath())
}

func commitStocks(t *testing.T, s *hikoutei.Store, st ...*stock) {
	t.Helper()
	u := s.Begin()
	for _, x := range st {
		u.Persist(x)
	}
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// activeQuarantine is the id of the one active quarantine record.
func activeQuarantine(t *testing.T, readModel string) string {
	t.Helper()
	conn, done, err := inspectReadModel(filepath.Dir(readModel))
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	rows, _, err := projector.ListQuarantine(conn, projector.QuarantineFilter{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("active quarantine %+v %v", rows, err)
	}
	return rows[0].ID
}

// servingProcess is `hikoutei serve` running as its own process.
type servingProcess struct {
	cmd  *exec.Cmd
	logs *bytes.Buffer
	done chan error
}

// startServeProcess starts bin serve and returns once its log says it serves.
func startServeProcess(t *testing.T, bin string, args ...string) *servingProcess {
	t.Helper()
	p := &servingProcess{cmd: exec.Command(bin, append([]string{"serve"}, args...)...), logs: &bytes.Buffer{}, done: make(chan error, 1)}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serving := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			p.logs.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), `"addr"`) {
				once = true
				close(serving)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() { p.stop(t) })
	select {
	case <-serving:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("serve exited before serving: %v\n%s", err, p.logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not start within a minute:\n%s", p.logs)
	}
	return p
}

// stop sends SIGINT and waits for a clean exit (once).
func (p *servingProcess) stop(t *testing.T) {
	t.Helper()
	if p.cmd.ProcessState != nil {
		return
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("serve did not stop cleanly: %v\n%s", err, p.logs)
		}
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("serve did not stop within a minute of SIGINT:\n%s", p.logs)
	}
}

// runBinary runs bin with args and returns its exit code and output.
func runBinary(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("hikoutei %s: %v", strings.Join(args, " "), err)
	}
	return 0, string(out)
}

// Issue 17 item 5, end to end: with the real `hikoutei serve` process
// holding the store, the real CLI resolves a conflict with --use-sheet and
// dismisses a quarantined edit through the store's channel, without
// spreadsheet flags; the service applies both (the dismissed cell shows
// the system's value again) and stops cleanly on SIGINT.
func TestConflictsResolveAndQuarantineDismissFromTheCLIReachTheServeProcess(t *testing.T) {
	t.Parallel()
	bin := buildHikoutei(t)
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	conflictID, quarantineID := conflictAndQuarantine(t, dir, sheet)

	p := startServeProcess(t, bin, "--dir", dir, "--spreadsheet", hikouteitest.SpreadsheetID, "--sheets-endpoint", sheet.URL, "--http", "127.0.0.1:0")
	if code, out := runBinary(t, bin, "conflicts", "resolve", "--dir", dir, conflictID, "--use-sheet"); code != 0 {
		t.Fatalf("conflicts resolve while serve runs: exit %d\n%s\nserve:\n%s", code, out, p.logs)
	}
	if code, out := runBinary(t, bin, "quarantine", "dismiss", "--dir", dir, quarantineID); code != 0 {
		t.Fatalf("quarantine dismiss while serve runs: exit %d\n%s\nserve:\n%s", code, out, p.logs)
	}
	deadline := time.Now().Add(60 * time.Second)
	for cellShows(t, sheet, "2") != "2" { // the service rewrites the dismissed cell
		if time.Now().After(deadline) {
			t.Fatalf("the dismissed cell still shows %q\nserve:\n%s", cellShows(t, sheet, "2"), p.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.stop(t)
	if _, err := os.Stat(filepath.Join(dir, events.LeaseFileName)); !os.IsNotExist(err) {
		t.Fatalf("lease.toml after SIGINT: %v", err)
	}

	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[stock]("Stock"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resolved, err := s.Conflicts(context.Background(), hikoutei.ConflictResolved)
	if err != nil || len(resolved) != 1 || resolved[0].ID != conflictID || resolved[0].Resolution != events.ResolutionUseSheet {
		t.Fatalf("resolved conflicts %+v %v", resolved, err)
	}
	if got, err := hikoutei.Get[stock](context.Background(), s, "1"); err != nil || got.Qty != 9 {
		t.Fatalf("stock 1 after use-sheet: %+v %v", got, err)
	}
}

// cellShows is what stock id's qty cell displays.
func cellShows(t *testing.T, sheet *hikouteitest.Sheet, id string) string {
	t.Helper()
	rows, err := sheet.Person().Displayed("Stock_Input")
	if err != nil {
		t.Fatal(err)
	}
	ref := qtyCell(t, sheet, id)
	col := int(ref[0] - 'A')
	for _, r := range rows {
		if len(r) > 0 && r[len(r)-1] == id && col < len(r) {
			return r[col]
		}
	}
	return ""
}
