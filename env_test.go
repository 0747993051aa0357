package hikoutei

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestSyncFromEnvLocalOnlyWithoutURL(t *testing.T) {
	o, err := SyncFromEnv(ctx, envOf(map[string]string{EnvCredentials: "/nonexistent.json"}))
	if o != nil || err != nil {
		t.Fatalf("no spreadsheet URL: %+v %v (want local-only)", o, err)
	}
}

func TestSyncFromEnvStartupDiagnostics(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "creds.json")
	mustT(t, os.WriteFile(bad, []byte("not json"), 0o600))
	cases := map[string]struct {
		env  map[string]string
		want error
	}{
		"bad url":      {map[string]string{EnvSpreadsheetURL: "https://example.invalid/x"}, sheetsio.ErrInvalidSpreadsheetURL},
		"no creds":     {map[string]string{EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp"}, sheetsio.ErrCredentialsMissing},
		"creds broken": {map[string]string{EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp", EnvCredentials: bad}, sheetsio.ErrCredentialsNotJSON},
	}
	for name, c := range cases {
		_, err := SyncFromEnv(ctx, envOf(c.env))
		if !errors.Is(err, ErrSyncStartup) || !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	o, err := SyncFromEnv(ctx, envOf(map[string]string{EnvSpreadsheetURL: "https://docs.google.com/spreadsheets/d/1AbCdEfGhIjKlMnOpQr/edit#gid=0",
		EnvSheetsEndpoint: "http://127.0.0.1:1"}))
	if err != nil || o.SpreadsheetID != "1AbCdEfGhIjKlMnOpQr" {
		t.Fatalf("emulator endpoint: %+v %v", o, err)
	}
}

// Open resolves the poller cadences from the options, then the
// environment, then the 60 s default; a malformed variable (config's I20
// rule: plain positive decimal integers of milliseconds only) fails Open
// with sync_startup_failed.
func TestOpenFailsWithSyncStartupOnAMalformedCadenceAndResolvesTheOthers(t *testing.T) {
	for _, bad := range []string{"0x10", "1e3", "+100", "-100", "1.5", " 100", "100 ", "0", "00100", "9007199254740992", "１００", "10_000", "abc"} {
		for _, env := range []string{config.EnvPollingInterval, config.EnvFullScanInterval} {
			_, err := Open(t.Context(), t.TempDir(), Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1,
				Sync: &SyncOptions{SpreadsheetID: "sheet-under-test", Provider: &sheetsio.Provider{}, Manual: true,
					LookupEnv: func(k string) (string, bool) { return bad, k == env }}}, Entity[Airport]("Airport"))
			if !errors.Is(err, ErrSyncStartup) || err.Error()[:len("sync_startup_failed")] != "sync_startup_failed" {
				t.Fatalf("%s=%q: Open returned %v, want sync_startup_failed", env, bad, err)
			}
		}
	}
	maxInterval := time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond
	for _, tc := range []struct {
		env, val string
		opt      time.Duration
		want     time.Duration
	}{{"", "", 0, 60 * time.Second}, {config.EnvPollingInterval, "", 0, 60 * time.Second}, {config.EnvPollingInterval, "1500", 0, 1500 * time.Millisecond},
		{config.EnvPollingInterval, "86400000", 0, 24 * time.Hour},
		{config.EnvPollingInterval, "9007199254740991", 0, maxInterval}, {config.EnvPollingInterval, "0x10", 5 * time.Second, 5 * time.Second}} {
		o := SyncOptions{PollingInterval: tc.opt, LookupEnv: func(k string) (string, bool) { return tc.val, k == tc.env }}
		c, err := syncConfig(o)
		if err != nil || c.PollingInterval != tc.want || c.FullScanInterval != config.DefaultFullScanInterval {
			t.Fatalf("%s=%q option %v: %v, got %v / %v", tc.env, tc.val, tc.opt, err, c.PollingInterval, c.FullScanInterval)
		}
	}
}

// HIKOUTEI_SYNC_RATE_LIMIT_INTERVAL_MS paces both request classes of the
// provider SyncFromEnv builds; a malformed value fails with
// sync_startup_failed, and unset keeps the default pacing.
func TestSyncFromEnvRateLimitConfiguresPacing(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return envOf(map[string]string{EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp", EnvSheetsEndpoint: "http://127.0.0.1:1",
			config.EnvRateLimitInterval: v})
	}
	if _, err := SyncFromEnv(ctx, env("0x10")); !errors.Is(err, ErrSyncStartup) || !errors.Is(err, config.ErrInvalidInterval) {
		t.Fatalf("malformed rate limit: %v", err)
	}
	o, err := SyncFromEnv(ctx, env("40"))
	if err != nil || o.Provider.Pacing().ReadInterval != 40*time.Millisecond || o.Provider.Pacing().WriteInterval != 40*time.Millisecond {
		t.Fatalf("rate limit 40: %+v %v", o, err)
	}
	o, err = SyncFromEnv(ctx, env(""))
	if err != nil || o.Provider.Pacing().ReadInterval != sheetsio.DefaultInterval {
		t.Fatalf("unset rate limit: %+v %v", o, err)
	}
}

// HIKOUTEI_SHEETS_ENDPOINT must be an absolute http(s) URL.
func TestSyncFromEnvRejectsAMalformedEndpoint(t *testing.T) {
	for _, v := range []string{"::not a url::", "localhost:8787", "ftp://127.0.0.1:1", "http://"} {
		_, err := SyncFromEnv(ctx, envOf(map[string]string{EnvSpreadsheetURL: "1AbCdEfGhIjKlMnOp", EnvSheetsEndpoint: v}))
		if !errors.Is(err, ErrSyncStartup) || !errors.Is(err, config.ErrInvalidEndpoint) {
			t.Errorf("endpoint %q: %v", v, err)
		}
	}
}
