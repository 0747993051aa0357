package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// F6 and issue 29 item 4, end to end: `serve` under a limit of 100 open
// files (ulimit -n 100, as the report's repro) gets a burst of 300
// connections to its administrative socket and its --http port. The burst
// exhausts its descriptors; once it is over, ping answers, /healthz
// answers, and the workers still run: a person's edit made after the
// burst is polled (through the channel) and committed.
func TestF6_ServeSurvivesADescriptorBurstAndRecovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	conflictAndQuarantine(t, dir, sheet) // a synced store of stocks
	var logs bytes.Buffer
	var mu sync.Mutex
	cmd := exec.Command("bash", "-c", `ulimit -n 100 && exec "$0" "$@"`, os.Args[0], "serve", "--dir", dir,
		"--spreadsheet", hikouteitest.SpreadsheetID, "--sheets-endpoint", sheet.URL, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), envTestCLI+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGINT); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			var l struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "http" {
				addr <- l.Addr
			}
		}
	}()
	var httpAddr string
	select {
	case httpAddr = <-addr:
	case <-time.After(time.Minute):
		t.Fatal("serve did not start")
	}
	serveLogs := func() string { mu.Lock(); defer mu.Unlock(); return logs.String() }

	var conns []net.Conn
	for range 150 {
		if c, err := net.Dial("unix", admin.SocketPath(dir)); err == nil {
			conns = append(conns, c)
		}
		if c, err := net.Dial("tcp", httpAddr); err == nil {
			conns = append(conns, c)
		}
	}
	time.Sleep(3 * time.Second)
	for _, c := range conns {
		c.Close()
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out := runCLI(t, "ping", "--dir", dir)
		resp, herr := http.Get("http://" + httpAddr + "/healthz")
		if herr == nil {
			resp.Body.Close()
		}
		if code == exitOK && herr == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the burst: ping exit %d %s, healthz %v\nserve:\n%s", code, out, herr, serveLogs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := sheet.Person().Type("Stock_Input", qtyCell(t, sheet, "1"), "77"); err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, "poll", "--dir", dir); code != exitOK {
		t.Fatalf("poll after the burst: %d %s", code, out)
	}
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(auditText(t, dir), "77") {
		if time.Now().After(deadline) {
			t.Fatalf("the edit made after the burst was never committed\nserve:\n%s", serveLogs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.Contains(serveLogs(), "too many open files") {
		t.Logf("serve met EMFILE during the burst and recovered")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve did not stop cleanly: %v\n%s", err, serveLogs())
	}
}

// auditText is stock 1's history as audit prints it (from the running
// store's copy of its log).
func auditText(t *testing.T, dir string) string {
	t.Helper()
	_, out := runCLI(t, "audit", "--dir", dir, "--entity", "Stock", "--id", "1")
	return out
}
