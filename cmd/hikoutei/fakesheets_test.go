package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// fakeSheets is one in-process run of `hikoutei fake-sheets`.
type fakeSheets struct {
	t      *testing.T
	base   string
	cancel context.CancelFunc
	done   chan error
	lines  chan string
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var startLine = regexp.MustCompile(`^fake-sheets: API endpoint (http://\S+/) \(option\.WithEndpoint\) · web view (http://\S+/)$`)

// startFakeSheets runs the command on 127.0.0.1:0 and waits (bounded) for
// its start line, which carries the bound address.
func startFakeSheets(t *testing.T, args ...string) *fakeSheets {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	fs := &fakeSheets{t: t, cancel: cancel, done: make(chan error, 1), lines: make(chan string, 16), stderr: &lockedBuffer{}}
	root := newRootCmd()
	root.SetArgs(append([]string{"fake-sheets", "--addr", "127.0.0.1:0"}, args...))
	root.SetOut(pw)
	root.SetErr(fs.stderr)
	go func() {
		err := root.ExecuteContext(ctx)
		_ = pw.Close()
		fs.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fs.lines <- sc.Text()
		}
		close(fs.lines)
	}()
	t.Cleanup(func() { cancel() })
	select {
	case line, ok := <-fs.lines:
		if !ok {
			t.Fatalf("fake-sheets exited before serving: %v\n%s", <-fs.done, fs.stderr.String())
		}
		m := startLine.FindStringSubmatch(line)
		if m == nil || m[1] != m[2] {
			t.Fatalf("start line %q", line)
		}
		fs.base = m[1]
	case <-time.After(10 * time.Second):
		t.Fatal("fake-sheets did not print its start line within 10s")
	}
	return fs
}

// stop cancels the command and waits (bounded) for it to return.
func (fs *fakeSheets) stop() error {
	fs.t.Helper()
	fs.cancel()
	return fs.wait()
}

func (fs *fakeSheets) wait() error {
	fs.t.Helper()
	select {
	case err := <-fs.done:
		for range fs.lines { // drain the rest of stdout
		}
		return err
	case <-time.After(10 * time.Second):
		fs.t.Fatal("fake-sheets did not stop within 10s")
		return nil
	}
}

func (fs *fakeSheets) client() *sheets.Service {
	fs.t.Helper()
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(fs.base), option.WithoutAuthentication())
	if err != nil {
		fs.t.Fatal(err)
	}
	return svc
}

func TestFakeSheetsServesRealClientAndPersistsState(t *testing.T) {
	state := filepath.Join(t.TempDir(), "fake-sheets.json")
	fs := startFakeSheets(t, "--state", state)
	svc := fs.client()
	created, err := svc.Spreadsheets.Create(&sheets.Spreadsheet{Properties: &sheets.SpreadsheetProperties{Title: "Inventory <b>&"}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	id := created.SpreadsheetId
	vr := &sheets.ValueRange{Values: [][]any{{"id", "name", "qty"}, {"00123", "Bolt", 5}}}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:C2").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil || len(got.Values) != 2 || got.Values[1][0] != "00123" {
		t.Fatalf("read back %v, %v", got, err)
	}
	// Without --auto-create an unknown id is a 404, like Google.
	_, err = svc.Spreadsheets.Get("no-such-spreadsheet").Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != http.StatusNotFound {
		t.Fatalf("unknown id: %v", err)
	}
	if err := fs.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	info, err := os.Stat(state)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, want 0600", info.Mode().Perm())
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(state), ".*tmp*")); len(leftovers) > 0 {
		t.Fatalf("temp files left: %v", leftovers)
	}

	fs2 := startFakeSheets(t, "--state", state)
	got, err = fs2.client().Spreadsheets.Values.Get(id, "Sheet1!A1:C2").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil || len(got.Values) != 2 || got.Values[1][0] != "00123" || got.Values[1][2] != float64(5) {
		t.Fatalf("after restart: %v, %v", got, err)
	}
	page := httpGet(t, fs2.base)
	if !strings.Contains(page, "/view/"+id) || !strings.Contains(page, "Inventory &lt;b&gt;&amp;") {
		t.Fatalf("web view does not list the spreadsheet (escaped):\n%s", page)
	}
	if err := fs2.stop(); err != nil {
		t.Fatal(err)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return string(body)
}

func TestFakeSheetsAutoCreateAndPeriodicSave(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s.json")
	fs := startFakeSheets(t, "--auto-create", "--state", state, "--save-interval", "20ms")
	svc := fs.client()
	vr := &sheets.ValueRange{Values: [][]any{{"periodic"}}}
	if _, err := svc.Spreadsheets.Values.Update("any-id", "A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	// The periodic save lands while the server still runs (a kill loses little).
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(state)
		if bytes.Contains(b, []byte("periodic")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("state was not saved periodically")
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
	if err := fs.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestFakeSheetsDenyAnswers403(t *testing.T) {
	fs := startFakeSheets(t, "--auto-create", "--deny", "unshared")
	svc := fs.client()
	_, err := svc.Spreadsheets.Get("unshared").Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != http.StatusForbidden || gerr.Message != "The caller does not have permission" {
		t.Fatalf("denied id: %v", err)
	}
	if _, err := svc.Spreadsheets.Get("shared").Do(); err != nil {
		t.Fatalf("other id: %v", err)
	}
	// The printed URL is also what gsheets.Config.Endpoint takes.
	p, err := gsheets.New(context.Background(), gsheets.Config{Endpoint: fs.base})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(context.Background(), "unshared"); !errors.Is(err, sheetsio.ErrPermissionDenied) {
		t.Fatalf("provider check of denied id: %v", err)
	}
	if err := p.Check(context.Background(), "shared"); err != nil {
		t.Fatalf("provider check: %v", err)
	}
	if err := fs.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestFakeSheetsStopsOnSIGTERM(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s.json")
	fs := startFakeSheets(t, "--auto-create", "--state", state, "--save-interval", "0")
	vr := &sheets.ValueRange{Values: [][]any{{"on-term"}}}
	if _, err := fs.client().Spreadsheets.Values.Update("x", "A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	// The command's signal handler is installed before it prints its start
	// line, so the signal reaches it, not the test process's default action.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := fs.wait(); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	if b, _ := os.ReadFile(state); !bytes.Contains(b, []byte("on-term")) {
		t.Fatal("state not saved at shutdown")
	}
}

func TestFakeSheetsCorruptStateIsLeftUntouched(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(state, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "fake-sheets", "--addr", "127.0.0.1:0", "--state", state)
	if code != exitFailure || !strings.Contains(out, "cannot load state file") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if b, _ := os.ReadFile(state); string(b) != "{not json" {
		t.Fatalf("corrupt state was overwritten: %q", b)
	}
}

func TestFakeSheetsUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"fake-sheets", "extra"},
		{"fake-sheets", "--no-such-flag"},
		{"fake-sheets", "--addr", "no-port"},
		{"fake-sheets", "--save-interval", "-1s"},
		{"fake-sheets", "--max-request-bytes", "-1"},
	} {
		if code, out := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d:\n%s", args, code, exitUsage, out)
		}
	}
	code, out := runCLI(t, "fake-sheets", "--help")
	if code != exitOK || !strings.Contains(out, "option.WithEndpoint") || !strings.Contains(out, "--auto-create") || !strings.Contains(out, "--state") {
		t.Fatalf("help exit %d:\n%s", code, out)
	}
}

func TestFakeSheetsListenFailureExitsOne(t *testing.T) {
	fs := startFakeSheets(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(fs.base, "http://"), "/")
	code, out := runCLI(t, "fake-sheets", "--addr", addr)
	if code != exitFailure || !strings.Contains(out, "cannot listen") {
		t.Fatalf("port in use: exit %d:\n%s", code, out)
	}
	if err := fs.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestRepro11_FakeSheetsRefusesCrossSiteRequests: the served emulator
// refuses a rebinding Host, a foreign Origin and a text/plain write, and
// --allow-host admits a named host.
func TestRepro11_FakeSheetsRefusesCrossSiteRequests(t *testing.T) {
	fs := startFakeSheets(t, "--auto-create", "--allow-host", "fake-sheets")
	url := fs.base + "v4/spreadsheets/x/values/A1:append?valueInputOption=RAW"
	send := func(host, origin, ct string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"values":[["planted"]]}`))
		req.Host, req.Header["Content-Type"] = host, []string{ct}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(fs.base, "http://"), "/")
	for _, c := range []struct {
		host, origin, ct string
		want             int
	}{
		{"evil.example", "", "application/json", http.StatusForbidden},
		{addr, "http://evil.example", "application/json", http.StatusForbidden},
		{addr, "", "text/plain", http.StatusUnsupportedMediaType},
		{"fake-sheets:8787", "http://fake-sheets:8787", "application/json", http.StatusOK},
		{addr, "http://" + addr, "application/json; charset=utf-8", http.StatusOK},
	} {
		if got := send(c.host, c.origin, c.ct); got != c.want {
			t.Errorf("Host %s Origin %q Content-Type %s: %d, want %d", c.host, c.origin, c.ct, got, c.want)
		}
	}
	if code, out := runCLI(t, "fake-sheets", "--allow-host", "a:1"); code != exitUsage {
		t.Errorf("--allow-host with a port: exit %d:\n%s", code, out)
	}
	if err := fs.stop(); err != nil {
		t.Fatal(err)
	}
}
