package main

import (
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// closedItemStore creates a store of items and closes it.
func closedItemStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ackMissing runs `conflicts ack` for a conflict that does not exist: the
// answer conflict_not_found can only come from a store that ran the command.
func ackMissing(t *testing.T, dir string) (int, string) {
	t.Helper()
	return runCLIWithin(t, "conflicts", "ack", "--dir", dir, "nope", "1", "xxh64:0000000000000000", "0")
}

func TestConflictsAckAndPingReachARunningServeThroughItsSocketThenWorkLocallyOnceItStopped(t *testing.T) {
	t.Parallel()
	dir := closedItemStore(t)
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	cmd := &cobra.Command{}
	cmd.SetErr(&bytes.Buffer{})
	f := serveFlags{dir: dir, spreadsheet: "1ServeTestSheetId", endpoint: srv.URL, httpAddr: "127.0.0.1:0"}
	go func() { done <- serve(ctx, cmd, f, func(a string) { ready <- a }) }()
	<-ready
	if code, out := runCLIWithin(t, "ping", "--dir", dir); code != exitOK || !strings.Contains(out, "operation serve") {
		t.Fatalf("ping: %d %s", code, out)
	}
	if code, out := ackMissing(t, dir); code != exitFailure || !strings.Contains(out, "conflict_not_found") {
		t.Fatalf("ack while serve runs: %d %s", code, out)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, hikoutei.AdminSocketName)); !os.IsNotExist(err) {
		t.Fatalf("admin.sock after serve stopped: %v", err)
	}
	if code, out := ackMissing(t, dir); code != exitFailure || !strings.Contains(out, "conflict_not_found") {
		t.Fatalf("ack with the store closed: %d %s", code, out)
	}
	if code, out := runCLIWithin(t, "ping", "--dir", dir); code != exitFailure || !strings.Contains(out, "admin_unavailable") {
		t.Fatalf("ping with the store closed: %d %s", code, out)
	}
}

func TestConflictsAckReachesAStoreOpenInProcessWithoutSpreadsheetFlags(t *testing.T) {
	dir := closedItemStore(t)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Operation: "embed-test"}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, err := os.Lstat(filepath.Join(dir, hikoutei.AdminSocketName))
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("admin.sock %v %v", fi, err)
	}
	if code, out := ackMissing(t, dir); code != exitFailure || !strings.Contains(out, "conflict_not_found") {
		t.Fatalf("ack: %d %s", code, out)
	}
	if code, out := runCLIWithin(t, "ping", "--dir", dir); code != exitOK || !strings.Contains(out, "operation embed-test") {
		t.Fatalf("ping: %d %s", code, out)
	}
}

func TestConflictsAckNamesTheHolderOfAStoreThatServesNoChannel(t *testing.T) {
	dir := closedItemStore(t)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Operation: "old-serve", NoAdmin: true}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, out := ackMissing(t, dir)
	if code != exitFailure || !strings.Contains(out, "admin_channel_absent") || !strings.Contains(out, `operation "old-serve"`) {
		t.Fatalf("ack against a store without a channel: %d %s", code, out)
	}
}

func TestConflictsAckWorksLocallyBesideAStaleSocketAndTheNextOpenReplacesIt(t *testing.T) {
	dir := closedItemStore(t)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, hikoutei.AdminSocketName), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // left by a killed process
	if code, out := ackMissing(t, dir); code != exitFailure || !strings.Contains(out, "conflict_not_found") {
		t.Fatalf("ack beside a stale socket: %d %s", code, out)
	}
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatalf("open beside a stale socket: %v", err)
	}
	defer s.Close()
	if code, out := runCLIWithin(t, "ping", "--dir", dir); code != exitOK {
		t.Fatalf("ping the replaced socket: %d %s", code, out)
	}
}

// conflicts resolve reaches the store a process holds through its
// channel, and opens the store itself once nobody holds it; either way an
// unknown conflict is conflict_not_found, and the flags are checked first.
func TestConflictsResolveReachesAnOpenStoreThenWorksLocally(t *testing.T) {
	dir := closedItemStore(t)
	resolve := func(args ...string) (int, string) {
		t.Helper()
		return runCLIWithin(t, append([]string{"conflicts", "resolve", "--dir", dir, "nope"}, args...)...)
	}
	for _, bad := range [][]string{{}, {"--use-sheet", "--keep-system"}} {
		if code, _ := resolve(bad...); code != exitUsage {
			t.Fatalf("resolve %v: exit %d, want usage", bad, code)
		}
	}
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Operation: "embed-test"}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	if code, out := resolve("--use-sheet"); code != exitFailure || !strings.Contains(out, "conflict_not_found") {
		t.Fatalf("resolve while the store is open: %d %s", code, out)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out := resolve("--keep-system", "--command-id", "c1"); code != exitFailure || !strings.Contains(out, "conflict_not_found") {
		t.Fatalf("resolve with the store closed: %d %s", code, out)
	}
}
