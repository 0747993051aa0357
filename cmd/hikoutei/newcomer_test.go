package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `--dir .` run in the folder that holds the store: not_a_store names the
// store inside it, for status and doctor alike.
func TestNotAStoreNamesTheStoreOneLevelDown(t *testing.T) {
	parent := t.TempDir()
	store := filepath.Join(parent, "mystore")
	if err := os.Rename(newStore(t), store); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"status", "doctor"} {
		code, out := runCLI(t, cmd, "--dir", parent)
		if code == exitOK || !strings.Contains(out, "not_a_store") || !strings.Contains(out, "one level down: "+store) {
			t.Errorf("%s --dir of the store's parent: exit %d:\n%s", cmd, code, out)
		}
	}
}

// A store's path given without --dir gets the command line to type, not
// "unknown command".
func TestStorePathWithoutDirFlagSaysToGiveDir(t *testing.T) {
	dir := newStore(t)
	code, out := runCLI(t, "status", dir)
	if code != exitUsage || strings.Contains(out, "unknown command") || !strings.Contains(out, "hikoutei status --dir "+dir) {
		t.Fatalf("status <dir>: exit %d:\n%s", code, out)
	}
}

// A mistyped flag gets the flag it is close to.
func TestMistypedFlagGetsASuggestion(t *testing.T) {
	code, out := runCLI(t, "status", "--dri", t.TempDir())
	if code != exitUsage || !strings.Contains(out, "unknown flag: --dri") || !strings.Contains(out, "did you mean --dir?") {
		t.Fatalf("status --dri: exit %d:\n%s", code, out)
	}
	if _, out := runCLI(t, "status", "--zzzzzz"); strings.Contains(out, "did you mean") {
		t.Fatalf("a flag close to none got a suggestion:\n%s", out)
	}
}

// doctor on a folder that never was a store says so, and says nothing
// about lease.toml being absent (as if it were a healthy store's).
func TestDoctorOnANonStoreSaysNothingOfTheLeaseFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "doctor", "--dir", dir)
	if code == exitOK || !strings.Contains(out, "not_a_store") || strings.Contains(out, "absent") || strings.Contains(out, "ok ") {
		t.Fatalf("doctor on a non-store: exit %d:\n%s", code, out)
	}
}

// --dir given the store's log.db (the file, not its folder) is still
// not_a_store, and the message says to pass the folder that holds log.db
// and names it; serve then gives no restore line for the file's path.
func TestDirGivenTheLogFileNamesItsFolder(t *testing.T) {
	dir := newStore(t)
	logFile := filepath.Join(dir, "log.db")
	want := "not_a_store: " + logFile + " is a store's log.db, not its directory: pass the folder that holds log.db: --dir " + dir
	for _, args := range [][]string{{"status"}, {"doctor"}, {"audit"}, {"serve", "--spreadsheet", testSpreadsheetID}} {
		code, out := runCLI(t, append(args, "--dir", logFile)...)
		if code != exitFailure || !strings.Contains(out, want) || strings.Contains(out, "restore --from") {
			t.Errorf("%s --dir %s: exit %d:\n%s", args[0], logFile, code, out)
		}
	}
}
