package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser test drives Debian's Chromium; .ci/run installs it.
const chromiumPath = "/usr/bin/chromium"

// startChromium starts headless Chromium; it fails (never skips) without it.
func startChromium(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the status page test needs Chromium at %s: install it with `apt-get install -y chromium`", chromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1200, 800))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	ctx, cancelDeadline := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelDeadline(); cancelBrowser(); cancelAlloc() })
	return ctx
}

// browserConsole collects every console error or warning, uncaught
// exception and security message (a Content-Security-Policy violation is
// one) of the tab from the moment it is created.
type browserConsole struct {
	mu   sync.Mutex
	seen []string
}

func listenConsole(ctx context.Context) *browserConsole {
	c := &browserConsole{}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			problem := m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.Type == chromedp.ConsoleException ||
				m.Source == "security" || strings.Contains(m.Text, "Content Security Policy")
			if problem {
				c.mu.Lock()
				c.seen = append(c.seen, fmt.Sprintf("%s (source %q, %s:%d)", m, m.Source, m.URL, m.Line))
				c.mu.Unlock()
			}
		}
	}()
	return c
}

func (c *browserConsole) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.seen) > 0 {
		t.Fatalf("the browser console is not empty:\n%s", strings.Join(c.seen, "\n"))
	}
}

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
	addr, _ := servedStore(t)
	ctx := startChromium(t)
	console := listenConsole(ctx)
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
