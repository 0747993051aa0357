package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// servedStore runs serve on a store holding one open conflict and one
// quarantined edit, synced to an emulated spreadsheet; it returns the
// --http address and the chain head the store had before serve opened
// it. serve stops when the test ends.
func servedStore(t *testing.T) (string, uint64) {
	t.Helper()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	conflictAndQuarantine(t, dir, sheet)
	before, err := hikoutei.VerifyDir(context.Background(), dir, hikoutei.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	cmd := &cobra.Command{}
	cmd.SetErr(&bytes.Buffer{})
	f := serveFlags{dir: dir, spreadsheet: hikouteitest.SpreadsheetID, endpoint: sheet.URL, httpAddr: "127.0.0.1:0"}
	go func() { done <- serve(ctx, cmd, f, func(a string) { ready <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case addr := <-ready:
		return addr, before.Head
	case err := <-done:
		t.Fatalf("serve ended before it served: %v", err)
	}
	return "", 0
}

// fetchPage gets url and returns the response and its body.
func fetchPage(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp, b.String()
}

var chainSeqRE = regexp.MustCompile(`id="chain-seq">(\d+)<`)

// The status page of a running serve shows the sync health of each tab,
// the open conflicts (count and where), the quarantine and the chain
// head, under a nonce policy that changes with every response, and never
// the spreadsheet id or a value a person typed.
func TestServeStatusPageShowsTabsConflictsQuarantineAndChainHead(t *testing.T) {
	addr, headBefore := servedStore(t)
	var page string
	deadline := time.Now().Add(20 * time.Second)
	for { // the running store reports its tabs once provisioned
		resp, body := fetchPage(t, "http://"+addr+"/")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET / answered %d", resp.StatusCode)
		}
		if page = body; strings.Contains(page, `<td>Stock_System</td><td class="ok">ok</td>`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page shows no ok state for the Stock_System tab within 20 s:\n%s", page)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{`<span id="conflict-count">1</span>`, `<span id="quarantine-count">1</span>`,
		"<td>Stock</td><td>1</td><td>qty</td><td>Stock_Input</td>", `<td>Stock_Input</td><td class="ok">ok</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	m := chainSeqRE.FindStringSubmatch(page)
	if m == nil || m[1] == "0" || !regexp.MustCompile(`id="chain-hash">[0-9a-f]{64}<`).MatchString(page) {
		t.Fatalf("the page shows no chain head:\n%s", page)
	}
	if seq, _ := strconv.ParseUint(m[1], 10, 64); seq < headBefore {
		t.Fatalf("the page's chain head %d is behind the log's %d before serve", seq, headBefore)
	}
	if strings.Contains(page, hikouteitest.SpreadsheetID) || strings.Contains(page, "lots") {
		t.Fatalf("the page carries the spreadsheet id or a person's value:\n%s", page)
	}
	checkPageHeaders(t, addr)
}

// checkPageHeaders: a nonce-only policy, a new nonce per response, and no
// page but /.
func checkPageHeaders(t *testing.T, addr string) {
	t.Helper()
	r1, body := fetchPage(t, "http://"+addr+"/")
	r2, _ := fetchPage(t, "http://"+addr+"/")
	csp := r1.Header.Get("Content-Security-Policy")
	if !strings.HasPrefix(csp, "default-src 'none'; style-src 'nonce-") || strings.Contains(csp, "unsafe") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}
	if csp == r2.Header.Get("Content-Security-Policy") {
		t.Fatal("two responses share a style nonce")
	}
	if strings.Contains(body, "<script") {
		t.Fatal("the page carries a script")
	}
	if r, _ := fetchPage(t, "http://"+addr+"/nope"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /nope answered %d, want 404", r.StatusCode)
	}
}

// hostileSource is a store whose names and codes carry markup.
type hostileSource struct{}

const hostileMarkup = `<script>window.__pwned=1</script>`

func (hostileSource) Health() hikoutei.Health {
	return hikoutei.Health{Sync: errors.New("blocked: " + hostileMarkup),
		SyncHealth: &hikoutei.SyncHealth{Spreadsheet: "ss-" + hostileMarkup, State: hikoutei.SyncBlocked, Reason: hostileMarkup,
			Tabs: []hikoutei.TabHealth{{Tab: "Tab" + hostileMarkup, State: hikoutei.SyncBlocked, Reason: hostileMarkup}}}}
}

func (hostileSource) Stats(context.Context) (hikoutei.Stats, error) {
	return hikoutei.Stats{LogHead: 7, Outbox: map[aggregates.EffectState]int64{aggregates.EffectState(hostileMarkup): 1}}, nil
}

func (hostileSource) Attention(context.Context) (hikoutei.Attention, error) {
	return hikoutei.Attention{OpenConflicts: 1, Quarantine: map[string]int64{hostileMarkup: 2}}, nil
}

func (hostileSource) Conflicts(context.Context, hikoutei.ConflictStatus) ([]hikoutei.Conflict, error) {
	return []hikoutei.Conflict{{ID: "c-" + hostileMarkup, Entity: "E" + hostileMarkup, EntityID: "id" + hostileMarkup, Field: "f" + hostileMarkup,
		Tab: "T" + hostileMarkup, SystemValue: "system-value-secret", SheetValue: "sheet-value-secret"}}, nil
}

func (hostileSource) ChainHead() (hikoutei.ChainPin, error) { return hikoutei.ChainPin{Seq: 7}, nil }

// Every name and code on the page is escaped text: markup in a tab, an
// entity, a key, a field, a reason or an error never becomes an element;
// a conflict's values are never shown.
func TestServeStatusPageEscapesHostileNamesAndShowsNoValues(t *testing.T) {
	rec := httptest.NewRecorder()
	statusPageHandler(hostileSource{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	page := rec.Body.String()
	if rec.Code != http.StatusOK || strings.Contains(page, "<script") {
		t.Fatalf("status %d; the page carries markup from a name:\n%s", rec.Code, page)
	}
	if n := strings.Count(page, "&lt;script&gt;window.__pwned=1&lt;/script&gt;"); n != 12 {
		t.Fatalf("the hostile names are shown escaped %d times, want every one (12: the sync error, target, its reason, the tab, its reason, an outbox state, a quarantine reason, five conflict names):\n%s", n, page)
	}
	if strings.Contains(page, "value-secret") {
		t.Fatalf("the page shows a conflict's values:\n%s", page)
	}
}
