package engine_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/gsync"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// lockedBuffer is a goroutine-safe log sink.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// refusingGoogle is a loopback OAuth token endpoint answering as Google
// does for a JWT signed by a key it does not know: 400 invalid_grant.
// It returns a service-account file with a fresh key (never a real
// credential) whose token_uri points at it, and its hit count.
func refusingGoogle(t *testing.T) (string, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`))
	}))
	t.Cleanup(srv.Close)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	mustT(t, err)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	body, _ := json.Marshal(map[string]string{"type": "service_account", "client_email": "sync@example.iam.gserviceaccount.com",
		"private_key_id": "k", "private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "token_uri": srv.URL})
	file := filepath.Join(t.TempDir(), "key.json")
	mustT(t, os.WriteFile(file, body, 0o600))
	return file, &hits
}

// A key Google refuses stops sync at once, visibly: health is blocked
// with credentials_rejected on every tab and Sync says sync stopped; the
// token endpoint was asked once (no retry loop); the store's log says
// why, with the code, and never the key or the spreadsheet id; commits
// go on.
func TestRejectedCredentialsStopSyncAtOnceWithCredentialsRejected(t *testing.T) {
	creds, hits := refusingGoogle(t)
	sheet := hikouteitest.NewSheet(t, func(c *gsheets.Config) { c.CredentialsFile = creds })
	so := sheet.SyncOptions()
	so.Manual = false
	logs := &lockedBuffer{}
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, Sync: so,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), NATS: &hikoutei.NATSOptions{Disabled: true}}, airports...)
	mustT(t, err)
	defer s.Close()
	eventually(t, "sync stopped", func() bool {
		return s.Health().Sync != nil && strings.Contains(s.Health().Sync.Error(), "sync stopped")
	})
	h := s.Health()
	if !errors.Is(h.Sync, sheetsio.ErrCredentialsRejected) || h.SyncHealth.Reason != hikoutei.ReasonCredentials || !h.SyncHealth.Failing() {
		t.Fatalf("health: %v %+v", h.Sync, h.SyncHealth)
	}
	for _, tab := range h.SyncHealth.Tabs {
		if tab.Reason != hikoutei.ReasonCredentials {
			t.Errorf("tab %s: %s", tab.Tab, tab.Reason)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("token requests: %d, want 1", n)
	}
	if c := sheet.Emulator.Counters(hikouteitest.SpreadsheetID); c.Reads+c.Writes != 0 {
		t.Errorf("requests reached the Sheets API: %+v", c)
	}
	out := logs.String()
	if !strings.Contains(out, `"code":"credentials_rejected"`) || strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, hikouteitest.SpreadsheetID) {
		t.Errorf("logs: %s", out)
	}
	commit(t, s, &Airport{ID: "1", Name: "still commits"})
}

// gsync.SyncFromEnv builds its provider without a logger; the store lends it
// its own, so retries reach the store's log (without the spreadsheet id).
func TestSyncFromEnvProviderLogsRetriesThroughTheStoreLogger(t *testing.T) {
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	env := map[string]string{hikoutei.EnvSpreadsheetURL: "1SyncFromEnvSheetIdForLogs_x", hikoutei.EnvSheetsEndpoint: srv.URL}
	so, err := gsync.SyncFromEnv(ctx, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	mustT(t, err)
	so.Manual = true
	emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault503, Match: emulator.MatchReads})
	logs := &lockedBuffer{}
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, Sync: so,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), NATS: &hikoutei.NATSOptions{Disabled: true}}, airports...)
	mustT(t, err)
	defer s.Close()
	hikouteitest.New(t, s) // provisions: its first read is answered 503, then retried
	if out := logs.String(); !strings.Contains(out, `"msg":"sheets read retry"`) || strings.Contains(out, "1SyncFromEnvSheetIdForLogs_x") {
		t.Fatalf("logs: %s", out)
	}
}
