package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// serve --http makes DIR/wake.key (0600) and serves POST /wake outside
// the bearer token: a wake signed with the key is accepted without the
// token, a forged one is refused with its code; the token still guards
// the rest, /metrics counts both by result, and the log names the key
// file, never the key.
func TestServeWakeHookIsSignedWithTheKeyFileNotTheBearerToken(t *testing.T) {
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
	key := filepath.Join(dir, wakeKeyFile)
	st, err := os.Stat(key)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("wake.key: %v, %v", st, err)
	}
	secret, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	secret = bytes.TrimSpace(secret)
	now := time.Now().Unix()
	for hdr, want := range map[string]string{
		wakehook.Sign(secret, now, "serve-test-nonce-0001"):                              `{"result":"polled"}`,
		wakehook.Sign([]byte(testHTTPToken+testHTTPToken), now, "serve-test-nonce-0002"): `{"error":"wake_signature_invalid"}`,
	} {
		if got := postWake(t, base, hdr); got != want {
			t.Errorf("POST /wake: %s, want %s", got, want)
		}
	}
	if got := status(t, base+"/metrics", ""); got != 401 {
		t.Errorf("/metrics without the token: %d", got)
	}
	metrics := getWithToken(t, base+"/metrics")
	for _, series := range []string{`hikoutei_wake_requests_total{result="polled"} 1`,
		`hikoutei_wake_requests_total{result="wake_signature_invalid"} 1`} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"key_file":"`+key+`"`) || strings.Contains(logs.String(), string(secret)) {
		t.Fatalf("logs: %s", logs.String())
	}
}

func postWake(t *testing.T, base, hdr string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/wake", nil)
	req.Header.Set(wakehook.Header, hdr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

func getWithToken(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+testHTTPToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// A wake key file others can read stops serve before it serves: the
// secret may have leaked.
func TestServeRefusesAWakeKeyFileOthersCanRead(t *testing.T) {
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, wakeKeyFile), bytes.Repeat([]byte("k"), 40), 0o644); err != nil {
		t.Fatal(err)
	}
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	cmd := &cobra.Command{}
	cmd.SetErr(io.Discard)
	f := serveFlags{dir: dir, spreadsheet: "1ServeTestSheetId", endpoint: srv.URL, httpAddr: "127.0.0.1:0"}
	err = serve(context.Background(), cmd, f, func(string) { t.Error("serve served with a readable wake key") })
	if err == nil || !strings.Contains(err.Error(), "wake_key_file_invalid") {
		t.Fatalf("serve: %v", err)
	}
}
