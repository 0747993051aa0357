package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// After a restore killed while it rebuilt the read model (a log, no
// read.sqlite, the rebuild's temporary file), status names the state
// (read_model_missing, the file left: rebuild_interrupted) and the next
// step; the replay it names builds the read model and removes the file,
// saying so, and status is whole again.
func TestStatusNamesAMissingReadModelAndTheRebuildLeftOver(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 5)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(filepath.Join(dir, hikoutei.ReadModelFile+suffix))
	}
	left := filepath.Join(dir, ".read.sqlite.rebuild")
	if err := os.WriteFile(left, []byte("half a read model"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "READ MODEL MISSING") || !strings.Contains(out, "read_model_missing") ||
		!strings.Contains(out, "hikoutei replay --dir") || !strings.Contains(out, "LEFTOVER") || !strings.Contains(out, "rebuild_interrupted") {
		t.Fatalf("status after an interrupted restore: exit %d:\n%s", code, out)
	}
	code, jsonOut, errOut := runSplit("status", "--dir", dir, "--json")
	var st storeStatus
	if code != exitOK || json.Unmarshal([]byte(jsonOut), &st) != nil || st.ReadModelCode != "read_model_missing" ||
		st.NextStep != "hikoutei replay --dir "+shellWord(dir) || len(st.Leftovers) != 1 || st.Leftovers[0].Code != "rebuild_interrupted" ||
		st.LogHead == nil || st.SyncHealth == nil {
		t.Fatalf("status --json after an interrupted restore: exit %d:\n%s%s", code, jsonOut, errOut)
	}
	code, out, errOut = runSplit("replay", "--dir", dir)
	if code != exitOK || !strings.Contains(errOut, "removed "+left) {
		t.Fatalf("replay --dir: exit %d:\n%s%s", code, out, errOut)
	}
	code, out = runCLI(t, "status", "--dir", dir)
	if code != exitOK || strings.Contains(out, "READ MODEL MISSING") || strings.Contains(out, "LEFTOVER") {
		t.Fatalf("status after the replay: exit %d:\n%s", code, out)
	}
}

// A compact killed before its rename leaves log.db.compact: status names
// it (compact_interrupted) while no process has the log open, and
// opening the store removes it.
func TestStatusNamesACompactLeftOverAndOpenRemovesIt(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 5)
	left := filepath.Join(dir, events.LogFileName+events.CompactSuffix)
	if err := os.WriteFile(left, []byte("a copy of the log"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, "status", "--dir", dir); code != exitOK || !strings.Contains(out, "compact_interrupted") {
		t.Fatalf("status with log.db.compact left: exit %d:\n%s", code, out)
	}
	s, err := hikoutei.OpenDeclared(t.Context(), dir, hikoutei.Options{NoAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("log.db.compact after an open: %v", err)
	}
}

// A directory a restore was killed in before it named log.db is named
// restore_incomplete by status (exit 1), with the next step, and a
// restore into it is refused saying the same.
func TestStatusAndRestoreNameAnInterruptedRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".log.db.tmp-42"), []byte("half a log"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "status", "--dir", dir)
	if code != exitFailure || !strings.Contains(out, "restore_incomplete") || !strings.Contains(out, "run hikoutei restore again") {
		t.Fatalf("status of an interrupted restore: exit %d:\n%s", code, out)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if code, out := runCLI(t, "backup", "--dir", closedStoreOf(t, 3), "--out", backup); code != exitOK {
		t.Fatalf("backup: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "restore", "--from", backup, "--to", dir)
	if code != exitFailure || !strings.Contains(out, "restore_target_not_empty") || !strings.Contains(out, "restore_incomplete") {
		t.Fatalf("restore into an interrupted restore: exit %d:\n%s", code, out)
	}
}

// A restore from the stream killed while it read the stream leaves its
// scratch folder beside the target; the next one removes the folders
// whose process no longer runs and keeps a running one's and an earlier
// build's (no process id).
func TestARestoreFromTheStreamRemovesTheScratchOfKilledOnes(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	killed := exec.Command("sleep", "60")
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	_ = killed.Process.Kill()
	_ = killed.Wait()
	dead := fmt.Sprintf(".hikoutei-restore-%d-1", killed.Process.Pid)
	kept := []string{fmt.Sprintf(".hikoutei-restore-%d-2", os.Getpid()), ".hikoutei-restore-3"}
	for _, name := range append([]string{dead}, kept...) {
		if err := os.MkdirAll(filepath.Join(parent, name, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sweepRestoreScratch(filepath.Join(parent, "restored"))
	if _, err := os.Stat(filepath.Join(parent, dead)); !os.IsNotExist(err) {
		t.Fatalf("a killed restore's scratch folder is still there: %v", err)
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(parent, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
