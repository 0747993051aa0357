package gsheets

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/auth"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// recorder is an Observer that keeps what it heard.
type recorder struct {
	mu       sync.Mutex
	requests []string // "method status"
	retries  []string // "method wait"
}

func (r *recorder) SheetsRequest(method string, status sheetsio.StatusClass, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, method+" "+string(status))
}

func (r *recorder) SheetsRetry(method string, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries = append(r.retries, method+" "+wait.String())
}

func (r *recorder) heard() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...), append([]string(nil), r.retries...)
}

// A read answered 429 with Retry-After is observed as a 429 attempt, a
// retry waiting the server's delay, then a 2xx attempt; the provider logs
// the retry and the wait through the logger the store lent it (Adopt),
// without the spreadsheet id.
func TestObserverHearsEachAttemptAndTheRetryAfterWait(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.Logger = nil })
	rec := &recorder{}
	h.p.Adopt(sheetsio.Hooks{Logger: h.logger(), Observer: rec})
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchReads, RetryAfter: 7 * time.Second})
	if err := h.p.Check(context.Background(), testSheetID); err != nil {
		t.Fatal(err)
	}
	requests, retries := rec.heard()
	if strings.Join(requests, ",") != "check 429,check 2xx" || strings.Join(retries, ",") != "check 7s" {
		t.Fatalf("requests %v, retries %v", requests, retries)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"msg":"sheets read retry"`) || !strings.Contains(logs, `"retry_after":7000000000`) {
		t.Fatalf("the retry is not logged with its Retry-After: %s", logs)
	}
	if strings.Contains(logs, testSheetID) {
		t.Fatalf("the logs carry the spreadsheet id: %s", logs)
	}
}

// A provider configured with its own logger keeps it: Adopt lends a
// logger only to a provider built without one.
func TestAdoptKeepsAConfiguredLogger(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	var other syncBuffer
	h.p.Adopt(sheetsio.Hooks{Logger: newJSONLogger(&other)})
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads})
	if err := h.p.Check(context.Background(), testSheetID); err != nil {
		t.Fatal(err)
	}
	if other.String() != "" || !strings.Contains(h.logs.String(), "sheets read retry") {
		t.Fatalf("lent logger got %q; own logger got %q", other.String(), h.logs.String())
	}
}

// tokenServer answers every token request as Google's OAuth endpoint
// answers a JWT signed by a key it does not know: 400 invalid_grant.
func tokenServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// pointTokenURI rewrites the token_uri of a service-account file.
func pointTokenURI(t *testing.T, file, uri string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]string
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	f["token_uri"] = uri
	raw, _ = json.Marshal(f)
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A key Google does not know (its token endpoint answers 400
// invalid_grant) is credentials_rejected at the first attempt: no
// retry, no backoff, no request reaches the Sheets API, and the log says
// why without the key, the token or the spreadsheet id.
func TestGarbageKeyIsCredentialsRejectedAtOnce(t *testing.T) {
	tok, hits := tokenServer(t)
	creds := serviceAccountFile(t, "sync@example-project.iam.gserviceaccount.com")
	pointTokenURI(t, creds, tok.URL)
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.CredentialsFile = creds })
	rec := &recorder{}
	h.p.Adopt(sheetsio.Hooks{Observer: rec})
	err := h.p.Check(context.Background(), testSheetID)
	if !errors.Is(err, sheetsio.ErrCredentialsRejected) {
		t.Fatalf("err = %v, want credentials_rejected", err)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("token requests = %d, want 1", n)
	}
	if s := h.recordedSleeps(); len(s) != 0 || h.counters().Reads != 0 {
		t.Fatalf("retried (%v) or reached the API (%+v)", s, h.counters())
	}
	if requests, _ := rec.heard(); strings.Join(requests, ",") != "check 4xx" {
		t.Fatalf("observed %v", requests)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"code":"credentials_rejected"`) || strings.Contains(logs, testSheetID) || strings.Contains(logs, "PRIVATE KEY") {
		t.Fatalf("logs: %s", logs)
	}
}

// A write whose token request is refused never left the process: it is
// NotSent with credentials_rejected, not uncertain.
func TestRefusedTokenMakesAWriteNotSent(t *testing.T) {
	refused := &auth.Error{Response: &http.Response{StatusCode: http.StatusBadRequest}}
	w := ClassifyWrite(refused)
	if w.Outcome != sheetsio.NotSent || w.Code != sheetsio.CodeCredentialsRejected || w.Status != http.StatusBadRequest {
		t.Fatalf("%+v", w)
	}
	if w := ClassifyWrite(&auth.Error{Response: &http.Response{StatusCode: http.StatusServiceUnavailable}}); w.Code == sheetsio.CodeCredentialsRejected {
		t.Fatalf("a 503 from the token endpoint is not a rejection: %+v", w)
	}
}

// newJSONLogger logs JSON to w at debug level.
func newJSONLogger(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// logger is a logger into the harness's log buffer.
func (h *harness) logger() *slog.Logger { return newJSONLogger(h.logs) }
