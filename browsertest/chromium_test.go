package browsertest_test

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

// The browser tests drive Debian's Chromium; .ci/run installs it.
const chromiumPath = "/usr/bin/chromium"

// newBrowser starts headless Chromium with a window of width × height for
// the test of what; it fails (never skips) without Chromium.
func newBrowser(t *testing.T, what string, width, height int) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the %s test needs Chromium at %s: install it with `apt-get install -y chromium` (.ci/run installs it in CI)", what, chromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(width, height))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	ctx, cancelDeadline := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelDeadline(); cancelBrowser(); cancelAlloc() })
	return ctx
}

// consoleProblems collects, from the moment it is called, every console
// error or warning, uncaught exception and browser log entry of level
// error or warning (a Content-Security-Policy violation is one) of the tab.
type consoleProblems struct {
	mu   sync.Mutex
	seen []string
}

func watchConsole(ctx context.Context) *consoleProblems {
	p := &consoleProblems{}
	messages := chromedp.Console(ctx) // subscribed from here on
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
			default:
				if m.Source != "security" && !strings.Contains(m.Text, "Content Security Policy") {
					continue
				}
			}
			p.mu.Lock()
			p.seen = append(p.seen, fmt.Sprintf("%s (source %q, %s:%d)", m, m.Source, m.URL, m.Line))
			p.mu.Unlock()
		}
	}()
	return p
}

// check fails the test when the console had anything to say.
func (p *consoleProblems) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) > 0 {
		t.Fatalf("the browser console is not empty:\n%s", strings.Join(p.seen, "\n"))
	}
}
