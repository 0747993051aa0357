package browsertest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// pageSeen is what an operator sees on the status page.
type pageSeen struct {
	Conflicts  string `json:"conflicts"`
	Tabs       int    `json:"tabs"`
	ChainSeq   string `json:"chainSeq"`
	Styled     bool   `json:"styled"`
	StatusText string `json:"statusText"`
}

const pageSeenJS = `(()=>({conflicts:document.querySelector('#conflict-count').innerText,
tabs:document.querySelectorAll('#tabs tbody tr').length, chainSeq:document.querySelector('#chain-seq').innerText,
styled:getComputedStyle(document.querySelector('th')).backgroundColor==='rgb(243, 243, 243)',
statusText:document.querySelector('#status').innerText}))()`

// The status page of a running serve loads in Chromium with an empty
// console (its style is allowed by the response's nonce, no policy
// violation), styled, showing the conflict count, the tabs and the head,
// and still so after it reloads itself.
func TestServeStatusPageInHeadlessChromiumHasAnEmptyConsole(t *testing.T) {
	addr := servedStore(t)
	ctx := newBrowser(t, "status page", 1200, 800)
	console := watchConsole(ctx)
	url := "http://" + addr + "/"
	waitTabs := chromedp.Poll[bool](`document.querySelectorAll('#tabs tbody tr').length===2`,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))
	for i := 0; i < 2; i++ { // the second load is what the meta refresh does
		if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#conflict-count"))); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, waitTabs); err != nil {
			t.Fatalf("the page shows no two tabs within 30 s: %v", err)
		}
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[pageSeen](pageSeenJS))
	if err != nil {
		t.Fatal(err)
	}
	console.check(t)
	if got.Conflicts != "1" || got.Tabs != 2 || got.ChainSeq == "" || got.ChainSeq == "0" || !got.Styled || got.StatusText != "ok" {
		t.Fatalf("the page shows %+v; want 1 conflict, 2 tabs, a chain head, status ok, styled", got)
	}
}

// stock is an entity with a column people edit.
type stock struct {
	ID  string `hikoutei:"id,pk"`
	Qty int64  `hikoutei:"qty,user"`
}

// servedStore runs `hikoutei serve --http 127.0.0.1:0` (the command built
// from this repository, as its own process) on a store holding one open
// conflict and one quarantined edit, synced to an emulated spreadsheet;
// it returns the address serve listens on. When the test ends, serve is
// stopped with SIGINT and must exit cleanly.
func servedStore(t *testing.T) string {
	t.Helper()
	bin := buildHikoutei(t)
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	conflictAndQuarantine(t, dir, sheet)
	cmd := exec.Command(bin, "serve", "--dir", dir, "--spreadsheet", hikouteitest.SpreadsheetID,
		"--sheets-endpoint", sheet.URL, "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs lockedLog
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.add(sc.Text())
			if m := httpAddrRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() { stopServe(t, cmd, done, &logs) })
	select {
	case addr := <-addrc:
		return addr
	case err := <-done:
		done <- err
		t.Fatalf("serve ended before it served: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not start within a minute:\n%s", logs.String())
	}
	return ""
}

// httpAddrRE finds the address in serve's log line saying where it serves
// HTTP (`msg=http addr=127.0.0.1:PORT`, text or JSON).
var httpAddrRE = regexp.MustCompile(`"?addr"?[=:]"?(127\.0\.0\.1:\d+)`)

// stopServe sends SIGINT and waits for a clean exit.
func stopServe(t *testing.T, cmd *exec.Cmd, done chan error, logs *lockedLog) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v\n%s", err, logs.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Errorf("serve did not stop within a minute of SIGINT:\n%s", logs.String())
	}
}

// lockedLog is serve's stderr, kept for failure messages.
type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// buildHikoutei builds the hikoutei command of this repository, in the
// library's module (../), into a temporary directory.
func buildHikoutei(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "hikoutei")
	build := exec.Command(gobin, "build", "-o", bin, "./cmd/hikoutei")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// conflictAndQuarantine prepares, in process, a store of two stocks
// synced to sheet: stock 1 in conflict (the system wrote 5, a person 9),
// stock 2's qty quarantined (a person typed text); the store is closed
// when it returns.
func conflictAndQuarantine(t *testing.T, dir string, sheet *hikouteitest.Sheet) {
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
	a, err := s.Attention(ctx)
	quarantined := int64(0)
	for _, n := range a.Quarantine {
		quarantined += n
	}
	if err != nil || quarantined != 1 {
		t.Fatalf("attention %+v %v, want one quarantined edit", a, err)
	}
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
