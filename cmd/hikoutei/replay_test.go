package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

var itemDef = hikoutei.Entity[item]("Item")

// storeWithItems returns a closed store holding n acknowledged items.
func storeWithItems(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		u := s.Begin()
		if err := u.Persist(&item{ID: fmt.Sprintf("i%04d", i), Name: "n"}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// countItems opens the store and counts the items it reads.
func countItems(t *testing.T, dir string) int {
	t.Helper()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := hikoutei.Find[item](context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

func TestRepro2_ReplayOutNeverWritesInsideAStore(t *testing.T) {
	t.Parallel()
	dir := storeWithItems(t, 800)
	logPath := filepath.Join(dir, events.LogFileName)
	before := fileHash(t, logPath)
	for _, out := range []string{logPath, filepath.Join(dir, "other.sqlite"), filepath.Join(dir, "snapshots", "x.sqlite")} {
		for _, force := range []bool{false, true} {
			args := []string{"replay", "--dir", dir, "--out", out}
			if force {
				args = append(args, "--force")
			}
			code, text := runCLI(t, args...)
			if code != exitFailure || !strings.Contains(text, "replay_target_inside_store") {
				t.Fatalf("%v: exit %d:\n%s", args, code, text)
			}
		}
	}
	if fileHash(t, logPath) != before {
		t.Fatal("log.db changed")
	}
	if n := countItems(t, dir); n != 800 {
		t.Fatalf("%d of 800 acknowledged items left", n)
	}
}

func TestRepro2_ReplayOutRefusesExistingFileUnlessForced(t *testing.T) {
	dir := storeWithItems(t, 10)
	out := filepath.Join(t.TempDir(), "mine.txt")
	if err := os.WriteFile(out, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, text := runCLI(t, "replay", "--dir", dir, "--out", out)
	if code != exitFailure || !strings.Contains(text, "replay_target_not_empty") {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	if data, _ := os.ReadFile(out); string(data) != "precious" {
		t.Fatal("the existing file was touched")
	}
	if code, text = runCLI(t, "replay", "--dir", dir, "--out", out, "--force"); code != exitOK {
		t.Fatalf("forced: exit %d:\n%s", code, text)
	}
	if data, _ := os.ReadFile(out); !strings.HasPrefix(string(data), "SQLite format 3") {
		t.Fatal("forced replay did not replace the file with a read model")
	}
}

func TestRepro2_ReplayRefusedWhileTheStoreIsOpen(t *testing.T) {
	dir := storeWithItems(t, 10)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// the read model's content, not its file's bytes: the store's
	// background checkpoint may copy its log into the file at any time
	rm := filepath.Join(dir, hikoutei.ReadModelFile)
	before, err := projector.Digest(rm)
	mustNil(t, err)
	for _, args := range [][]string{{"replay", "--dir", dir}, {"replay", "--dir", dir, "--out", filepath.Join(t.TempDir(), "x.sqlite")}} {
		if code, text := runCLI(t, args...); code != exitFailure || !strings.Contains(text, "store_locked") {
			t.Fatalf("%v: exit %d:\n%s", args, code, text)
		}
	}
	if after, err := projector.Digest(rm); err != nil || after != before {
		t.Fatalf("read model changed under the running store (%v)", err)
	}
}

func TestReplayInPlaceKeepsThePreviousReadModel(t *testing.T) {
	dir := storeWithItems(t, 10)
	rm := filepath.Join(dir, hikoutei.ReadModelFile)
	before := fileHash(t, rm)
	code, text := runCLI(t, "replay", "--dir", dir)
	if code != exitOK || !strings.Contains(text, "kept as") {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	aside, _ := filepath.Glob(rm + ".before-rebuild-*")
	if len(aside) != 1 || fileHash(t, aside[0]) != before {
		t.Fatalf("previous read model not kept: %v", aside)
	}
	if n := countItems(t, dir); n != 10 {
		t.Fatalf("%d items after the rebuild", n)
	}
}

func TestReplayTargetErrorsAreTyped(t *testing.T) {
	dir := storeWithItems(t, 1)
	_, err := hikoutei.Replay(t.Context(), dir, filepath.Join(dir, "x.sqlite"), hikoutei.ReplayOptions{Force: true})
	if !errors.Is(err, hikoutei.ErrReplayTargetInStore) {
		t.Fatalf("inside the store: %v", err)
	}
	out := filepath.Join(t.TempDir(), "rm.sqlite")
	if err := os.WriteFile(out+"-wal", []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := hikoutei.Replay(t.Context(), dir, out, hikoutei.ReplayOptions{}); !errors.Is(err, hikoutei.ErrReplayTarget) {
		t.Fatalf("stale -wal beside the target: %v", err)
	}
}

// replay's progress off a terminal (stderr is a file here) is plain
// lines, never a carriage return, and ends with the whole log replayed.
func TestReplayProgressOffATerminalIsPlainLinesThatReachTheEnd(t *testing.T) {
	dir := storeWithItems(t, 40)
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var stdout bytes.Buffer
	out := filepath.Join(t.TempDir(), "replayed.sqlite")
	if code := run([]string{"replay", "--dir", dir, "--out", out}, &stdout, stderr); code != exitOK {
		t.Fatalf("replay: exit %d\n%s", code, stdout.String())
	}
	progress, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	head := logHead(t, dir)
	if strings.Contains(string(progress), "\r") || !strings.Contains(string(progress), fmt.Sprintf("replaying: done (%d)", head)) {
		t.Fatalf("progress %q, want plain lines ending at the head %d", progress, head)
	}
}
