package gsync_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/gsync"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestSyncFromEnvLocalOnlyWithoutURL(t *testing.T) {
	o, err := gsync.SyncFromEnv(t.Context(), envOf(map[string]string{hikoutei.EnvCredentials: "/nonexistent.json"}))
	if o != nil || err != nil {
		t.Fatalf("no spreadsheet URL: %+v %v (want local-only)", o, err)
	}
}

func TestSyncFromEnvStartupDiagnostics(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "creds.json")
	if err := os.WriteFile(bad, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		env  map[string]string
		want error
	}{
		"bad url":      {map[string]string{hikoutei.EnvSpreadsheetURL: "https://example.invalid/x"}, sheetsio.ErrInvalidSpreadsheetURL},
		"no creds":     {map[string]string{hikoutei.EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp"}, sheetsio.ErrCredentialsMissing},
		"creds broken": {map[string]string{hikoutei.EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp", hikoutei.EnvCredentials: bad}, sheetsio.ErrCredentialsNotJSON},
	}
	for name, c := range cases {
		_, err := gsync.SyncFromEnv(t.Context(), envOf(c.env))
		if !errors.Is(err, hikoutei.ErrSyncStartup) || !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	o, err := gsync.SyncFromEnv(t.Context(), envOf(map[string]string{hikoutei.EnvSpreadsheetURL: "https://docs.google.com/spreadsheets/d/1AbCdEfGhIjKlMnOpQr/edit#gid=0",
		hikoutei.EnvSheetsEndpoint: "http://127.0.0.1:1"}))
	if err != nil || o.SpreadsheetID != "1AbCdEfGhIjKlMnOpQr" {
		t.Fatalf("emulator endpoint: %+v %v", o, err)
	}
}

// HIKOUTEI_SYNC_RATE_LIMIT_INTERVAL_MS paces both request classes of the
// provider SyncFromEnv builds; a malformed value fails with
// sync_startup_failed, and unset keeps the default pacing.
func TestSyncFromEnvRateLimitConfiguresPacing(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return envOf(map[string]string{hikoutei.EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp", hikoutei.EnvSheetsEndpoint: "http://127.0.0.1:1",
			config.EnvRateLimitInterval: v})
	}
	if _, err := gsync.SyncFromEnv(t.Context(), env("0x10")); !errors.Is(err, hikoutei.ErrSyncStartup) || !errors.Is(err, config.ErrInvalidInterval) {
		t.Fatalf("malformed rate limit: %v", err)
	}
	o, err := gsync.SyncFromEnv(t.Context(), env("40"))
	if err != nil || o.Provider.(*gsheets.Provider).Pacing().ReadInterval != 40*time.Millisecond || o.Provider.(*gsheets.Provider).Pacing().WriteInterval != 40*time.Millisecond {
		t.Fatalf("rate limit 40: %+v %v", o, err)
	}
	o, err = gsync.SyncFromEnv(t.Context(), env(""))
	if err != nil || o.Provider.(*gsheets.Provider).Pacing().ReadInterval != gsheets.DefaultInterval {
		t.Fatalf("unset rate limit: %+v %v", o, err)
	}
}

// HIKOUTEI_SHEETS_ENDPOINT must be an absolute http(s) URL.
func TestSyncFromEnvRejectsAMalformedEndpoint(t *testing.T) {
	for _, v := range []string{"::not a url::", "localhost:8787", "ftp://127.0.0.1:1", "http://"} {
		_, err := gsync.SyncFromEnv(t.Context(), envOf(map[string]string{hikoutei.EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp", hikoutei.EnvSheetsEndpoint: v}))
		if !errors.Is(err, hikoutei.ErrSyncStartup) || !errors.Is(err, config.ErrInvalidEndpoint) {
			t.Errorf("endpoint %q: %v", v, err)
		}
	}
}

// writeKey writes a service-account key file Google's client would load
// (a fresh RSA key; never sent anywhere here).
func writeKey(t *testing.T, email string) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(map[string]string{"type": "service_account", "client_email": email,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "token_uri": "https://oauth2.googleapis.com/token"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// HIKOUTEI_SHEETS_CREDENTIALS_POOL adds the accounts of a pool to
// GOOGLE_APPLICATION_CREDENTIALS's: the provider reports a budget for
// each, by index; a pool key that cannot be loaded fails like the first
// one, naming its index, never its path's content.
func TestSyncFromEnvCredentialsPool(t *testing.T) {
	first, second := writeKey(t, "sa-0@example.invalid"), writeKey(t, "sa-1@example.invalid")
	env := func(pool string) func(string) (string, bool) {
		return envOf(map[string]string{hikoutei.EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp", hikoutei.EnvCredentials: first,
			hikoutei.EnvCredentialsPool: pool})
	}
	o, err := gsync.SyncFromEnv(t.Context(), env(" :"+second+string(os.PathListSeparator)))
	if err != nil {
		t.Fatal(err)
	}
	q := o.Provider.(*gsheets.Provider).QuotaBudget()
	if len(q.Accounts) != 2 || q.Accounts[1].Index != 1 || q.ReadCeiling != 2 {
		t.Fatalf("pool budget %+v, want two accounts of one read a second each", q)
	}
	_, err = gsync.SyncFromEnv(t.Context(), env(second+string(os.PathListSeparator)+"/nonexistent.json"))
	if !errors.Is(err, sheetsio.ErrCredentialsMissing) || !strings.Contains(err.Error(), "pool account 2") {
		t.Fatalf("a missing pool key: %v, want credentials_missing naming pool account 2", err)
	}
}
