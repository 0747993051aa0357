package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// itemStore is a store holding one committed item.
func itemStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	u.Persist(&item{ID: "a", Name: "first"})
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func sheetsEndpoint(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(emulator.New(emulator.Options{AutoCreate: true}).Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// syncBuffer is a log sink the test reads while serve writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logField returns field of the first JSON log line whose msg is msg.
func logField(logs, msg, field string) string {
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
			v, _ := m[field].(string)
			return v
		}
	}
	return ""
}

func TestRepro10_ServeRefusesANonLoopbackNATSListenerWithoutAuth(t *testing.T) {
	dir := itemStore(t)
	code, out := runCLI(t, "serve", "--dir", dir, "--spreadsheet", "1ServeTestSheetId", "--sheets-endpoint", sheetsEndpoint(t),
		"--nats-listen", "0.0.0.0:14222", "--nats-listen-no-auth")
	if code != exitFailure || !strings.Contains(out, "nats_listen_unauthenticated") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, events.LeaseFileName)); !os.IsNotExist(err) {
		t.Fatalf("refused serve left lease.toml: %v", err)
	}
}

// A listening serve is authenticated and says so (log line and /healthz);
// audit --nats needs the credentials and verifies the signed mirror.
func TestRepro10_ServeListensAuthenticatedAndAuditVerifiesTheMirror(t *testing.T) {
	dir := itemStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	logs := &syncBuffer{}
	cmd := &cobra.Command{}
	cmd.SetErr(logs)
	f := serveFlags{dir: dir, spreadsheet: "1ServeTestSheetId", endpoint: sheetsEndpoint(t), httpAddr: "127.0.0.1:0",
		natsListen: "127.0.0.1:0", natsMirror: true}
	go func() { done <- serve(ctx, cmd, f, func(a string) { ready <- a }) }()
	addr := <-ready
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	url, key := logField(logs.String(), "nats", "listen"), logField(logs.String(), "nats mirror", "key")
	seed := filepath.Join(dir, engine.ClientSeedFile)
	if logField(logs.String(), "nats", "auth") != "authenticated" || logField(logs.String(), "nats", "credentials") != seed || url == "" || key == "" {
		t.Fatalf("log lines: %s", logs.String())
	}
	secret, _ := os.ReadFile(seed)
	if len(secret) == 0 || strings.Contains(logs.String(), strings.TrimSpace(string(secret))) {
		t.Fatal("the generated seed is missing or was logged")
	}
	if h := get(t, "http://"+addr+"/healthz"); !strings.Contains(h, `"nats_listen":"authenticated"`) || !strings.Contains(h, `"mirror":"ok"`) {
		t.Fatalf("healthz %s", h)
	}

	stream := "HIKOUTEI_SHOP"
	if code, out := runCLI(t, "audit", "--nats", url, "--stream", stream); code != exitFailure || !strings.Contains(out, "nats_mirror_read_failed") {
		t.Fatalf("audit without credentials: exit %d: %s", code, out)
	}
	var out string
	waitFor(t, "the mirror holds the committed item", func() bool {
		var code int
		code, out = runCLI(t, "audit", "--nats", url, "--stream", stream, "--nats-nkey", seed, "--mirror-key", key)
		return code == exitOK && strings.Contains(out, string(events.TypeEntityPersisted))
	})
	if strings.Contains(out, "not pinned") {
		t.Fatalf("pinned audit: %s", out)
	}
	if code, out := runCLI(t, "audit", "--nats", url, "--stream", stream, "--nats-nkey", seed); code != exitOK || !strings.Contains(out, "not pinned") || !strings.Contains(out, key) {
		t.Fatalf("unpinned audit: exit %d: %s", code, out)
	}
	other, _ := nkeys.CreateServer()
	otherKey, _ := other.PublicKey()
	if code, out := runCLI(t, "audit", "--nats", url, "--stream", stream, "--nats-nkey", seed, "--mirror-key", otherKey); code != exitFailure || !strings.Contains(out, natsbus.ErrMirrorForged.Error()) {
		t.Fatalf("audit pinned to another key: exit %d: %s", code, out)
	}
	if code, out := runCLI(t, "poll", "--dir", dir, "--nats", url); code != exitOK {
		t.Fatalf("poll with the store's credentials: exit %d: %s", code, out)
	}
}

// waitFor polls cond until it holds, failing the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	end := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-end:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
