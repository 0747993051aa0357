package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/observe"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

const healthSheetID = "1HealthTestSheetId"

// hangingSheets serves an emulator; requests that match the current
// hang rule block until the test ends (or their client gives up).
type hangingSheets struct {
	emu      *emulator.Emulator
	url      string
	rule     atomic.Pointer[func(body []byte) bool]
	inflight atomic.Int64
	release  chan struct{}
}

func serveHangingSheets(t testing.TB) *hangingSheets {
	h := &hangingSheets{emu: emulator.New(emulator.Options{AutoCreate: true}), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(h.release) }) // runs first: hung requests end, then the server closes
	h.url = srv.URL
	return h
}

// hangWhen makes requests whose body satisfies rule hang (nil: none).
func (h *hangingSheets) hangWhen(rule func(body []byte) bool) { h.rule.Store(&rule) }

func (h *hangingSheets) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if rule := h.rule.Load(); rule != nil && *rule != nil && (*rule)(body) {
		h.inflight.Add(1)
		defer h.inflight.Add(-1)
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
		return
	}
	h.emu.Handler().ServeHTTP(w, r)
}

func hangAll([]byte) bool { return true }

// hangRowsNamed hangs the writes that carry a row named name (the
// dispatch of that row), nothing else.
func hangRowsNamed(name string) func([]byte) bool {
	return func(body []byte) bool { return bytes.Contains(body, []byte(name)) }
}

// running is a serve started by a test.
type running struct {
	addr string
	stop func()
}

func startServe(t testing.TB, dir, endpoint string) running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	cmd := &cobra.Command{}
	cmd.SetErr(io.Discard)
	f := serveFlags{dir: dir, spreadsheet: healthSheetID, endpoint: endpoint, httpAddr: "127.0.0.1:0"}
	go func() { done <- serve(ctx, cmd, f, func(a string) { ready <- a }) }()
	select {
	case addr := <-ready:
		return running{addr: addr, stop: func() { cancel(); <-done }}
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	}
	return running{stop: cancel}
}

// boundedGet GETs url, failing the test unless it answers within a
// generous bound (the 100 ms goal is measured by BenchmarkHealthzWhileSheetsHang).
func boundedGet(t testing.TB, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s while Sheets hangs: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitUntil polls cond until it holds or 20 s pass (a bound, not a sleep
// the test relies on).
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func decodeHealth(t testing.TB, body string) observe.HealthReport {
	t.Helper()
	var h observe.HealthReport
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("healthz body %q: %v", body, err)
	}
	return h
}

// withHungRows adds items named name to the closed store at dir.
func withHungRows(t testing.TB, dir, name string, n int) {
	t.Helper()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	for i := range n {
		u.Persist(&item{ID: name + string(rune('a'+i)), Name: name})
	}
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestI29_HealthzAnswersWhileSheetsHangs(t *testing.T) {
	t.Parallel()
	dir := storeWithItems(t, 5)
	sheets := serveHangingSheets(t)

	// Provisioning is stuck inside a hung request.
	sheets.hangWhen(hangAll)
	srv := startServe(t, dir, sheets.url)
	waitUntil(t, "provisioning to reach the hung sheet", func() bool { return sheets.inflight.Load() > 0 })
	code, body := boundedGet(t, "http://"+srv.addr+"/healthz")
	if h := decodeHealth(t, body); code != http.StatusOK || h.Local != "ok" || !strings.Contains(h.Sync, "not provisioned") {
		t.Fatalf("healthz while provisioning hangs: %d %s", code, body)
	}
	if code, _ := boundedGet(t, "http://"+srv.addr+"/metrics"); code != http.StatusOK {
		t.Fatalf("metrics while provisioning hangs: %d", code)
	}
	srv.stop()

	// The dispatch of the rows named "hung-row" is stuck inside a hung
	// request; provisioning and everything else answer.
	withHungRows(t, dir, "hung-row", 3)
	sheets.hangWhen(hangRowsNamed("hung-row"))
	srv = startServe(t, dir, sheets.url)
	defer srv.stop()
	waitUntil(t, "the dispatch to reach the hung sheet", func() bool { return sheets.inflight.Load() > 0 })
	code, body = boundedGet(t, "http://"+srv.addr+"/healthz")
	h := decodeHealth(t, body)
	if code != http.StatusOK || h.Sync != "ok" || h.SyncHealth == nil || h.SyncHealth.State != "behind" || h.SyncHealth.Pending == 0 {
		t.Fatalf("healthz while dispatch hangs: %d %s", code, body)
	}
	code, metrics := boundedGet(t, "http://"+srv.addr+"/metrics")
	if code != http.StatusOK || !strings.Contains(metrics, `hikoutei_sync_state{state="behind",tab="Item_System"} 1`) ||
		!strings.Contains(metrics, `hikoutei_sync_pending_effects{tab="Item_System"}`) || !strings.Contains(metrics, `hikoutei_sync_oldest_pending_seconds{tab="Item_System"}`) ||
		!strings.Contains(metrics, `hikoutei_sync_diverged_rows{tab="Item_System"} 0`) {
		t.Fatalf("metrics while dispatch hangs: %d\n%s", code, grepLines(metrics, "hikoutei_sync"))
	}
	if strings.Contains(metrics, healthSheetID) || strings.Contains(body, healthSheetID) {
		t.Fatal("health or metrics name the spreadsheet id")
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestHealthzAnswers503WhileAccessIsDeniedAnd200OnceRestored(t *testing.T) {
	dir := storeWithItems(t, 2)
	sheets := serveHangingSheets(t)
	sheets.emu.Deny(healthSheetID)
	srv := startServe(t, dir, sheets.url)
	defer srv.stop()
	var body string
	waitUntil(t, "healthz to report access_denied", func() bool {
		code, b := boundedGet(t, "http://"+srv.addr+"/healthz")
		body = b
		return code == http.StatusServiceUnavailable && strings.Contains(b, `"reason":"access_denied"`)
	})
	if h := decodeHealth(t, body); h.Local != "ok" || h.SyncHealth.State != "blocked" || h.SyncHealth.Tabs[0].State != "blocked" {
		t.Fatalf("healthz while denied: %s", body)
	}
	sheets.emu.Allow(healthSheetID)
	waitUntil(t, "healthz to recover", func() bool {
		code, b := boundedGet(t, "http://"+srv.addr+"/healthz")
		return code == http.StatusOK && decodeHealth(t, b).SyncHealth.State == "ok"
	})
}

func TestStatusShowsSyncHealthPerTab(t *testing.T) {
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Sync: sheet.SyncOptions(), NATS: &hikoutei.NATSOptions{Disabled: true}}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	u.Persist(&item{ID: "a", Name: "waiting"})
	u.Persist(&item{ID: "b", Name: "waiting"})
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "sync ss-") || !strings.Contains(out, ": behind (2 pending") || !strings.Contains(out, "TAB") ||
		!containsLine(out, "Item_System", "behind", "-", "2") {
		t.Fatalf("status exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "status", "--dir", dir, "--json")
	var st storeStatus
	if err := json.Unmarshal([]byte(out), &st); code != exitOK || err != nil || len(st.SyncHealth) != 1 ||
		st.SyncHealth[0].State != "behind" || st.SyncHealth[0].Tabs[0].Tab != "Item_System" || st.SyncHealth[0].Tabs[0].Pending != 2 {
		t.Fatalf("status --json exit %d (%v):\n%s", code, err, out)
	}
}

// containsLine reports whether a line of out starts with fields.
func containsLine(out string, fields ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= len(fields) && strings.Join(f[:len(fields)], " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

// BenchmarkHealthzWhileSheetsHang measures GET /healthz (real HTTP,
// serve's handler) while the dispatch is stuck in a hung request.
func BenchmarkHealthzWhileSheetsHang(b *testing.B) {
	dir := b.TempDir()
	withHungRows(b, dir, "hung-row", 3)
	sheets := serveHangingSheets(b)
	sheets.hangWhen(hangRowsNamed("hung-row"))
	srv := startServe(b, dir, sheets.url)
	defer srv.stop()
	waitUntil(b, "the dispatch to reach the hung sheet", func() bool { return sheets.inflight.Load() > 0 })
	url := "http://" + srv.addr + "/healthz"
	b.ResetTimer()
	for b.Loop() {
		if code, _ := boundedGet(b, url); code != http.StatusOK {
			b.Fatalf("healthz %d", code)
		}
	}
}
