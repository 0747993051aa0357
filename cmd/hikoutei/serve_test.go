package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

type item struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name"`
}

func TestServeSyncsAStoreAndExposesHealthAndMetrics(t *testing.T) {
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	u.Persist(&item{ID: "a", Name: "first"})
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()

	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var logs bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetErr(&logs)
	f := serveFlags{dir: dir, spreadsheet: "1ServeTestSheetId", endpoint: srv.URL, httpAddr: "127.0.0.1:0"}
	go func() { done <- serve(ctx, cmd, f, func(a string) { ready <- a }) }()
	addr := <-ready
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(get(t, "http://"+addr+"/metrics"), `hikoutei_outbox_effects{state="applied"} 1`) {
		if time.Now().After(deadline) {
			t.Fatalf("the service did not apply the store's backlog:\n%s", get(t, "http://"+addr+"/metrics"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h := get(t, "http://"+addr+"/healthz"); !strings.Contains(h, `"local":"ok"`) || !strings.Contains(h, `"sync":"ok"`) {
		t.Fatalf("healthz %s", h)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/" + events.LeaseFileName); !os.IsNotExist(err) {
		t.Fatalf("lease.toml after shutdown: %v", err)
	}
	if strings.Contains(logs.String(), "1ServeTestSheetId") {
		t.Fatal("a log line carries the spreadsheet id")
	}
	if !strings.Contains(logs.String(), `"auth":"loopback-only"`) {
		t.Fatalf("the log does not say the loopback port is open without a token: %s", logs.String())
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestServeStandbyNeedsReplicatedMode(t *testing.T) {
	t.Setenv(hikoutei.EnvReplication, "")
	var stdout, stderr bytes.Buffer
	code := run([]string{"serve", "--standby", "--dir", t.TempDir(), "--spreadsheet", "1ServeTestSheetId", "--sheets-endpoint", "http://127.0.0.1:1"}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), hikoutei.EnvReplication) {
		t.Fatalf("exit %d, stderr %q; want usage naming %s", code, stderr.String(), hikoutei.EnvReplication)
	}
}
