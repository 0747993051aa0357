package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// storeFiles is a store directory's listing: each entry's name, size and
// modification time.
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", e.Name(), info.Size(), info.ModTime().Format("15:04:05.000000000")))
	}
	return out
}

// readOnlyCommands are the commands that read a store without changing
// it, on dir.
func readOnlyCommands(dir string) [][]string {
	return [][]string{
		{"status", "--dir", dir}, {"status", "--dir", dir, "--json"},
		{"outbox", "list", "--dir", dir}, {"quarantine", "list", "--dir", dir}, {"conflicts", "list", "--dir", dir}, {"subscriptions", "--dir", dir},
	}
}

// runReadOnly runs the read-only commands on dir and fails when one fails
// or the directory's listing (names, sizes, modification times) changed.
func runReadOnly(t *testing.T, dir string) {
	t.Helper()
	before := storeFiles(t, dir)
	for _, args := range readOnlyCommands(dir) {
		if code, out := runCLI(t, args...); code != exitOK {
			t.Fatalf("%s: exit %d:\n%s", strings.Join(args[:len(args)-2], " "), code, out)
		}
		if after := storeFiles(t, dir); !slices.Equal(before, after) {
			t.Fatalf("%s changed the store directory:\nbefore %q\nafter  %q", args[0], before, after)
		}
	}
}

// TestReadOnlyCommandsLeaveAClosedStoreAsTheyFoundIt: status and the
// inspection commands on a closed store create no file (SQLite's
// read.sqlite-wal and -shm among them) and change none.
func TestReadOnlyCommandsLeaveAClosedStoreAsTheyFoundIt(t *testing.T) {
	t.Parallel()
	runReadOnly(t, closedStoreOf(t, 5))
}

// TestReadOnlyCommandsLeaveAHeldStoreAsTheyFoundIt: the same while
// another process holds the store (reading through its WAL).
func TestReadOnlyCommandsLeaveAHeldStoreAsTheyFoundIt(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 5)
	holdQuietStoreProcess(t, dir)
	runReadOnly(t, dir)
}
