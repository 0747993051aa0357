package hikoutei

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

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
