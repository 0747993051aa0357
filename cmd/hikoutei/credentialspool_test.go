package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

var keySeq atomic.Int64

// validKey writes a service-account key file that loads (a fresh RSA
// key; nothing is sent: the test stops at configuration).
func validKey(t *testing.T) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	email := fmt.Sprintf("sa-%d@example.invalid", keySeq.Add(1)) // each key its own account
	raw, err := json.Marshal(map[string]string{"type": "service_account", "client_email": email,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serve --credentials given again adds the accounts of a pool: a pool key
// that cannot load is a configuration error (exit 2) naming the flag, or
// the variable when the pool came from HIKOUTEI_SHEETS_CREDENTIALS_POOL,
// and the account's index, before anything touches the store.
func TestServeCredentialsPoolErrorsExitTwoNamingTheAccount(t *testing.T) {
	dir := storeWithItems(t, 1)
	good := validKey(t)
	incomplete := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(incomplete, []byte(`{"type":"service_account"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(hikoutei.EnvCredentials, "")
	t.Setenv(hikoutei.EnvSheetsEndpoint, "")
	t.Setenv(hikoutei.EnvCredentialsPool, "")
	base := []string{"serve", "--dir", dir, "--spreadsheet", testSpreadsheetID}
	code, _, stderr := runSplit(append(base, "--credentials", good, "--credentials", incomplete)...)
	if code != exitUsage || !strings.Contains(stderr, `flag "--credentials"`) || !strings.Contains(stderr, "pool account 1") ||
		!strings.Contains(stderr, "credentials_incomplete") {
		t.Fatalf("a bad pool key by flag: exit %d:\n%s", code, stderr)
	}
	t.Setenv(hikoutei.EnvCredentials, good)
	t.Setenv(hikoutei.EnvCredentialsPool, validKey(t)+string(os.PathListSeparator)+incomplete)
	code, _, stderr = runSplit(base...)
	if code != exitUsage || !strings.Contains(stderr, hikoutei.EnvCredentialsPool) || !strings.Contains(stderr, "pool account 2") {
		t.Fatalf("a bad pool key by variable: exit %d:\n%s", code, stderr)
	}
	t.Setenv(hikoutei.EnvCredentialsPool, validKey(t)+string(os.PathListSeparator)+filepath.Join(t.TempDir(), "gone.json"))
	code, _, stderr = runSplit(base...)
	if code != exitUsage || !strings.Contains(stderr, hikoutei.EnvCredentialsPool) || !strings.Contains(stderr, "pool account 2") {
		t.Fatalf("a missing pool key by variable: exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "lease.toml")); err == nil {
		t.Fatal("a configuration error took the lease")
	}
}
