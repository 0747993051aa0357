package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// deadPID is the process id of a process that was started and killed
// (SIGKILL) and no longer runs.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	return cmd.Process.Pid
}

// A replay removes, from its target's folder, the temporary files of
// replays whose process no longer runs (a killed one's), with their
// SQLite sidecars, and keeps those of a running process, those whose name
// carries no process id (an earlier build's) and files that only look
// alike; it reports each.
func TestReplaySweepsOnlyTheTemporaryFilesOfReplaysThatNoLongerRun(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.sqlite")
	at := time.Date(2026, 12, 4, 2, 0, 0, 0, time.UTC)
	stale := replayTemp(filepath.Join(dir, "other.sqlite"), at, deadPID(t))
	running := replayTemp(target, at, os.Getpid())
	earlier := filepath.Join(dir, ".out.sqlite.replay-"+at.Format(replayTempTime))
	alike := filepath.Join(dir, ".out.sqlite.replay-notes")
	for _, p := range []string{stale, stale + "-wal", running, earlier, alike} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []ReplayLeftover
	sweepReplayTemps(target, func(l ReplayLeftover) { got = append(got, l) })
	removed := map[string]bool{}
	for _, l := range got {
		removed[l.Path] = l.Removed
		if l.Why == "" {
			t.Errorf("%s reported without why", l.Path)
		}
	}
	want := map[string]bool{stale: true, stale + "-wal": true, running: false, earlier: false}
	if len(removed) != len(want) {
		t.Fatalf("reported %v, want %v", removed, want)
	}
	for p, r := range want {
		if gone := !exists(p); removed[p] != r || gone != r {
			t.Errorf("%s: reported removed %v, gone %v, want %v", filepath.Base(p), removed[p], gone, r)
		}
	}
	if !exists(alike) {
		t.Error("a file that only looks like a replay's was removed")
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Leftovers lists the store's own temporary files by reason code, in a
// fixed order; other files are not listed.
func TestLeftoversNamesTheFilesOfInterruptedCommands(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".read.sqlite.rebuild", ".read.sqlite.rebuild-journal", "log.db.compact", "read.sqlite", "notes"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("xy"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, l := range Leftovers(dir) {
		got = append(got, l.Name+" "+l.Code)
		if l.Bytes != 2 {
			t.Errorf("%s: %d bytes", l.Name, l.Bytes)
		}
	}
	want := []string{".read.sqlite.rebuild " + ReasonRebuildInterrupted, ".read.sqlite.rebuild-journal " + ReasonRebuildInterrupted,
		"log.db.compact " + ReasonCompactInterrupted}
	if !slices.Equal(got, want) {
		t.Fatalf("Leftovers = %s, want %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
}
