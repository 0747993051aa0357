package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

const testHTTPToken = "s3cret-token-for-tests-0123456789"

// --http addresses: loopback ones are open (and say so); any other needs
// HIKOUTEI_HTTP_TOKEN; a malformed address or a short token is a usage
// error.
func TestHTTPAccessNeedsATokenOffLoopback(t *testing.T) {
	env := func(token string) func(string) (string, bool) {
		return func(k string) (string, bool) { return token, k == config.EnvHTTPToken && token != "" }
	}
	for _, c := range []struct {
		addr, token, mode string // mode "": refused
	}{
		{"127.0.0.1:9090", "", "loopback-only"},
		{"[::1]:0", "", "loopback-only"},
		{"localhost:9090", "", "loopback-only"},
		{"127.0.0.1:9090", testHTTPToken, "bearer-token"},
		{"0.0.0.0:9090", testHTTPToken, "bearer-token"},
		{"0.0.0.0:9090", "", ""},
		{":9090", "", ""},
		{"192.0.2.10:9090", "", ""},
		{"metrics.example:9090", "", ""},
		{"0.0.0.0:9090", "short", ""},
		{"127.0.0.1:notaport", "", ""},
		{"127.0.0.1:70000", "", ""},
		{"127.0.0.1", "", ""},
	} {
		a, err := checkHTTPAccess(c.addr, env(c.token))
		switch {
		case c.mode == "" && (err == nil || !isUsage(err)):
			t.Errorf("%s token %q: %v, want a usage error", c.addr, c.token, err)
		case c.mode != "" && (err != nil || a.mode() != c.mode):
			t.Errorf("%s token %q: %v %q, want %s", c.addr, c.token, err, a.mode(), c.mode)
		}
	}
}

func isUsage(err error) bool { _, ok := err.(usageError); return ok }

// serve --http on a non-loopback address without HIKOUTEI_HTTP_TOKEN
// exits 2 naming the variable, before it opens the store: the log is
// untouched (no lease taken).
func TestServeRefusesAnUnauthenticatedNonLoopbackPortBeforeTheLease(t *testing.T) {
	t.Setenv(config.EnvHTTPToken, "")
	dir := newStore(t)
	before := fileSum(t, filepath.Join(dir, "log.db"))
	code, out := runCLI(t, "serve", "--dir", dir, "--spreadsheet", "1ServeTestSheetId", "--sheets-endpoint", "http://127.0.0.1:1",
		"--http", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(out, config.EnvHTTPToken) {
		t.Fatalf("exit %d: %s", code, out)
	}
	if fileSum(t, filepath.Join(dir, "log.db")) != before {
		t.Fatal("the log changed: the lease was taken before the refusal")
	}
}

// On a non-loopback address with HIKOUTEI_HTTP_TOKEN set, /metrics,
// /healthz and the status page (/) answer 401 without the token or with
// another, and serve them with it; the log says the port is bearer-token
// protected, never the token.
func TestServeHTTPOffLoopbackRequiresTheBearerToken(t *testing.T) {
	t.Setenv(config.EnvHTTPToken, testHTTPToken)
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	var logs bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetErr(&logs)
	f := serveFlags{dir: dir, spreadsheet: "1ServeTestSheetId", endpoint: srv.URL, httpAddr: "0.0.0.0:0"}
	go func() { done <- serve(ctx, cmd, f, func(a string) { ready <- a }) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, logs.String())
	}
	_, port, _ := net.SplitHostPort(addr)
	base := "http://127.0.0.1:" + port
	for _, path := range []string{"/metrics", "/healthz", "/"} {
		for auth, want := range map[string]int{"": 401, "Bearer wrong-token-0123456789abc": 401, "Bearer " + testHTTPToken: 200} {
			if got := status(t, base+path, auth); got != want {
				t.Errorf("%s with %q: %d, want %d", path, auth, got, want)
			}
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"auth":"bearer-token"`) || strings.Contains(logs.String(), testHTTPToken) {
		t.Fatalf("logs: %s", logs.String())
	}
}

func status(t *testing.T, url, auth string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
