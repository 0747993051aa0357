package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// I26: a log.db removed under a running store is not lost while the
// process runs: it holds the log open, and the commands that can go
// through its administrative channel (ping, status, backup) do so; the
// backup is a full copy of the open log, verified, holding every
// acknowledged commit, and the other commands' store_log_missing says to
// take it before stopping the process.
func TestI26_ALogRemovedUnderARunningStoreIsRescuedThroughItsChannel(t *testing.T) {
	t.Parallel()
	dir := storeWithItems(t, 10)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Operation: "rescue-test"}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 15 { // acknowledged while it runs: in the open log only
		u := s.Begin()
		if err := u.Persist(&item{ID: fmt.Sprintf("live%04d", i), Name: "acknowledged"}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	head, err := s.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, events.LogFileName)); err != nil {
		t.Fatal(err)
	}

	if code, out := runCLIWithin(t, "audit", "--dir", dir); code != exitFailure || !strings.Contains(out, "store_log_missing") ||
		!strings.Contains(out, "a process still holds the log") || !strings.Contains(out, "hikoutei backup --dir "+dir+" --out FILE") {
		t.Fatalf("audit with log.db removed under a running store: exit %d\n%s", code, out)
	}
	if code, out := runCLIWithin(t, "ping", "--dir", dir); code != exitOK || !strings.Contains(out, "operation rescue-test") ||
		!strings.Contains(out, "log.db is missing") {
		t.Fatalf("ping: exit %d\n%s", code, out)
	}
	if code, out := runCLIWithin(t, "status", "--dir", dir); code != exitOK || !strings.Contains(out, "LOG.DB MISSING") ||
		!strings.Contains(out, "hikoutei backup --dir "+dir) {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	out := filepath.Join(t.TempDir(), "rescue.db")
	code, text := runCLIWithin(t, "backup", "--dir", dir, "--out", out)
	if code != exitOK || !strings.Contains(text, "written by the running store") || !strings.Contains(text, "verified") {
		t.Fatalf("backup with log.db removed: exit %d\n%s", code, text)
	}
	printed := printedHead(t, text)
	if printed < head.LogHead {
		t.Fatalf("the rescue copy is at head %d, the store acknowledged up to %d", printed, head.LogHead)
	}
	v, err := events.VerifyLogFile(out)
	if err != nil || !v.Healthy() || v.Head != printed {
		t.Fatalf("the rescue copy does not verify: %+v %v", v, err)
	}
	if err := s.Close(); err != nil && !errors.Is(err, hikoutei.ErrLogFileReplaced) {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if code, text := runCLIWithin(t, "restore", "--from", out, "--to", restored); code != exitOK {
		t.Fatalf("restore of the rescue copy: exit %d\n%s", code, text)
	}
	r, err := hikoutei.Open(t.Context(), restored, hikoutei.Options{HeartbeatInterval: -1}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, id := range append(ids("i%04d", 10), ids("live%04d", 15)...) {
		if _, err := hikoutei.Get[item](t.Context(), r, id); err != nil {
			t.Errorf("acknowledged item %s is not in the rescue copy: %v", id, err)
		}
	}
}

func ids(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

// I26: serve stopping after its log.db was removed under it does not end
// as a clean stop: it exits 6 and logs at ERROR that the log file was
// replaced or removed, and where the rescue is described.
func TestI26_ServeStoppingWithItsLogRemovedExitsSixAndSaysSoAtError(t *testing.T) {
	dir := closedItemStore(t)
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready, done := make(chan string, 1), make(chan error, 1)
	var logs bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetErr(&logs)
	f := serveFlags{dir: dir, spreadsheet: "1ServeTestSheetId", endpoint: srv.URL}
	go func() { done <- serve(ctx, cmd, f, func(a string) { ready <- a }) }()
	<-ready
	if err := os.Remove(filepath.Join(dir, events.LogFileName)); err != nil {
		t.Fatal(err)
	}
	cancel()
	err := <-done
	if !errors.Is(err, errServeLogReplaced) || !errors.Is(err, hikoutei.ErrLogFileReplaced) {
		t.Fatalf("serve stopped with log.db removed: %v", err)
	}
	if code := exitCode(cmd, err, io.Discard); code != exitLogReplaced || exitLogReplaced != 6 {
		t.Fatalf("exit code %d", code)
	}
	if l := logs.String(); !strings.Contains(l, `"level":"ERROR","msg":"stopped with log.db replaced or removed`) ||
		!strings.Contains(l, "docs/production.md") {
		t.Fatalf("serve's log:\n%s", l)
	}
}
