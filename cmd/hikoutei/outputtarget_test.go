package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// F1: a store directory is never the target of another command's output.
// backup (of a closed store, and of a running one, whose process writes
// the copy through op store.backup), replay --out, restore --to and
// salvage --to refuse every path inside a store directory — a running
// store's, a closed one's, one holding only lease.toml or read.sqlite —
// with or without --force, with a typed code, and write nothing there.
func TestF1_EveryOutputRefusesAPathInsideAnyStoreDirectory(t *testing.T) {
	closed := storeWithItems(t, 3)
	running := openItemStore(t, 4)
	runDir := running.Dir()
	leaseOnly := t.TempDir()
	if err := os.WriteFile(filepath.Join(leaseOnly, events.LeaseFileName), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if code, out := runCLI(t, "backup", "--dir", closed, "--out", backup); code != exitOK {
		t.Fatalf("backup: %d %s", code, out)
	}
	before := fileBytes(t, filepath.Join(runDir, events.LogFileName))

	targets := []string{filepath.Join(runDir, events.LogFileName), filepath.Join(runDir, "x.db"), filepath.Join(runDir, "snapshots", "x.db"),
		filepath.Join(closed, events.LogFileName), filepath.Join(closed, "sub", "x.db"), filepath.Join(leaseOnly, "x.db")}
	for _, target := range targets {
		for _, c := range []struct {
			args []string
			code string
		}{
			{[]string{"backup", "--dir", closed, "--out", target}, "backup_target_invalid"},
			{[]string{"backup", "--dir", closed, "--out", target, "--force"}, "backup_target_invalid"},
			{[]string{"backup", "--dir", runDir, "--out", target, "--force"}, "backup_target_invalid"},
			{[]string{"replay", "--dir", closed, "--out", target, "--force"}, "replay_target_inside_store"},
			{[]string{"restore", "--from", backup, "--to", filepath.Join(target, "new")}, "target_inside_store"},
			{[]string{"salvage", "--from", closed, "--to", filepath.Join(target, "new")}, "salvage_target_invalid"},
			{[]string{"demo", "--rows", "11", "--no-latency", "--dir", filepath.Join(target, "new")}, "target_inside_store"},
			{[]string{"fake-sheets", "--state", target}, "target_inside_store"},
		} {
			code, out := runCLI(t, c.args...)
			if code != exitFailure || !strings.Contains(out, c.code) || !strings.Contains(out, "target_inside_store") {
				t.Errorf("%s: exit %d %s, want %s and target_inside_store", strings.Join(c.args, " "), code, out, c.code)
			}
		}
	}
	if string(fileBytes(t, filepath.Join(runDir, events.LogFileName))) != string(before) {
		t.Fatal("the running store's log changed")
	}
	for _, dir := range []string{runDir, closed, leaseOnly} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if n := e.Name(); n == "x.db" || n == "sub" || n == "new" || strings.HasPrefix(n, ".x.db") || strings.HasPrefix(n, ".log.db") {
				t.Errorf("%s was written into %s", n, dir)
			}
		}
	}
	u := running.Begin()
	if err := u.Persist(&item{ID: "after", Name: "n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatalf("the running store no longer commits: %v", err)
	}
	if h := running.Health(); h.Local != nil {
		t.Fatalf("Health().Local = %v", h.Local)
	}
	_ = hikoutei.ErrTargetInsideStore
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// F1: once a running store's log.db was replaced under it, ping and
// status name the fault (log_file_replaced) the store refuses commits
// with.
func TestF1_PingAndStatusOfAStoreWhoseLogWasReplacedNameTheFault(t *testing.T) {
	s := openItemStore(t, 2)
	other := storeWithItems(t, 1)
	if err := os.Rename(filepath.Join(other, events.LogFileName), filepath.Join(s.Dir(), events.LogFileName)); err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	if err := u.Persist(&item{ID: "x", Name: "n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); !strings.Contains(fmt.Sprint(err), "log_file_replaced") {
		t.Fatalf("commit: %v", err)
	}
	code, out := runCLI(t, "ping", "--dir", s.Dir())
	if code != exitOK || !strings.Contains(out, "commits refused: log_file_replaced") {
		t.Fatalf("ping: %d %s", code, out)
	}
	code, out = runCLI(t, "status", "--dir", s.Dir(), "--json")
	if code != exitOK || !strings.Contains(out, `"commits_refused_code":"log_file_replaced"`) {
		t.Fatalf("status: %d %s", code, out)
	}
	code, out = runCLI(t, "status", "--dir", s.Dir())
	if code != exitOK || !strings.Contains(out, "COMMITS REFUSED") {
		t.Fatalf("status: %d %s", code, out)
	}
}
