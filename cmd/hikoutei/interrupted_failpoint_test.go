//go:build failpoints

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// killedAt runs the CLI with args in a process of its own, killed
// (SIGKILL) at the failpoint point, and checks that it died so.
func killedAt(t *testing.T, point string, args ...string) {
	t.Helper()
	cmd := cliCommand(args...)
	cmd.Env = append(cmd.Env, failpoint.EnvVar+"="+point+"=crash")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("%v at %s: %v\n%s", args, point, err, out)
	}
}

// A `replay --out` killed before it renamed its read model onto the
// target leaves its temporary file beside it; the next replay into that
// folder removes it (the process that wrote it no longer runs) and says
// so, and the target is built.
func TestAReplayKilledMidwayLeavesAFileTheNextReplayRemoves(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 5)
	out := filepath.Join(t.TempDir(), "replayed.sqlite")
	killedAt(t, failpoint.ReplayBeforeInstall, "replay", "--dir", dir, "--out", out)
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".replayed.sqlite.replay-*"))
	if len(left) == 0 {
		t.Fatal("the killed replay left no temporary file")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the killed replay installed its target: %v", err)
	}
	code, stdout, errOut := runSplit("replay", "--dir", dir, "--out", out)
	if code != exitOK || !strings.Contains(errOut, "removed "+left[0]) || !strings.Contains(errOut, "no longer runs") {
		t.Fatalf("the next replay: exit %d:\n%s%s", code, stdout, errOut)
	}
	if still, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".replayed.sqlite.replay-*")); len(still) != 0 {
		t.Fatalf("left after the next replay: %v", still)
	}
}

// A restore killed before it named log.db: status names it
// restore_incomplete with the next step. A restore killed while it
// rebuilt the read model: status names read_model_missing and the
// rebuild's file, and the replay it names makes the store whole.
func TestARestoreKilledMidwayIsNamedByStatus(t *testing.T) {
	t.Parallel()
	backup := filepath.Join(t.TempDir(), "backup.db")
	if code, out := runCLI(t, "backup", "--dir", closedStoreOf(t, 5), "--out", backup); code != exitOK {
		t.Fatalf("backup: exit %d:\n%s", code, out)
	}
	early := filepath.Join(t.TempDir(), "early")
	killedAt(t, failpoint.RestoreBeforeInstall, "restore", "--from", backup, "--to", early)
	if code, out := runCLI(t, "status", "--dir", early); code != exitFailure || !strings.Contains(out, "restore_incomplete") ||
		!strings.Contains(out, "run hikoutei restore again") {
		t.Fatalf("status after a restore killed before log.db: exit %d:\n%s", code, out)
	}
	late := filepath.Join(t.TempDir(), "late")
	killedAt(t, failpoint.ReplayBeforeInstall, "restore", "--from", backup, "--to", late)
	code, out := runCLI(t, "status", "--dir", late)
	if code != exitOK || !strings.Contains(out, "read_model_missing") || !strings.Contains(out, "rebuild_interrupted") {
		t.Fatalf("status after a restore killed while rebuilding: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "replay", "--dir", late); code != exitOK {
		t.Fatalf("replay --dir: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "status", "--dir", late); code != exitOK || strings.Contains(out, "read_model_missing") || strings.Contains(out, "LEFTOVER") {
		t.Fatalf("status after the replay: exit %d:\n%s", code, out)
	}
}

// A compact killed after its copy: status names log.db.compact
// (compact_interrupted) and the next compact replaces it.
func TestACompactKilledMidwayIsNamedByStatus(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 5)
	killedAt(t, failpoint.CompactAfterCopy, "compact", "--dir", dir)
	if code, out := runCLI(t, "status", "--dir", dir); code != exitOK || !strings.Contains(out, "compact_interrupted") {
		t.Fatalf("status after a killed compact: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "compact", "--dir", dir); code != exitOK {
		t.Fatalf("compact again: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "status", "--dir", dir); code != exitOK || strings.Contains(out, "LEFTOVER") {
		t.Fatalf("status after the compact: exit %d:\n%s", code, out)
	}
}
