package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// leftInTemp lists what a command left in the temporary directory tmp.
func leftInTemp(t *testing.T, tmp string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != tmp {
			out = append(out, strings.TrimPrefix(path, tmp+"/"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cliIn is the CLI with args, its temporary directory tmp.
func cliIn(tmp string, args ...string) *exec.Cmd {
	cmd := cliCommand(args...)
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	return cmd
}

// readOneLineAndHangUp runs cmd with stdout a pipe, reads one line and
// closes the pipe (as `| head -1` does), then waits for cmd.
func readOneLineAndHangUp(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line == "" {
		t.Fatalf("%v printed nothing", cmd.Args)
	}
	out.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%v did not end after its reader went away", cmd.Args)
		return nil
	}
}

// diedOf reports whether err is a process's death by sig.
func diedOf(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// F14 / R3: `audit | head` and `audit --at … | head` — of a running store
// (audit reads a copy of its log that the store writes into the CLI's
// temporary directory) and of a closed one (audit --at builds a read
// model there) — never leave a copy of the log or of the read model in
// TMPDIR: the broken pipe ends the command, its copies are removed, then
// the process dies of SIGPIPE as `yes | head` does.
func TestF14_AuditIntoABrokenPipeLeavesNoCopyInTMPDIR(t *testing.T) {
	t.Parallel()
	closed := storeWithItems(t, 150)
	running := storeWithItems(t, 150)
	holdStoreProcess(t, running)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"audit of a running store", []string{"audit", "--dir", running}},
		{"audit --json of a running store", []string{"audit", "--dir", running, "--json"}},
		{"audit --at of a running store", []string{"audit", "--dir", running, "--entity", "Item", "--id", "i0001", "--at", "100"}},
		{"audit --at of a closed store", []string{"audit", "--dir", closed, "--entity", "Item", "--id", "i0001", "--at", "100"}},
		{"audit verify of a running store", []string{"audit", "verify", "--dir", running}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			err := readOneLineAndHangUp(t, cliIn(tmp, c.args...))
			if err != nil && !diedOf(err, syscall.SIGPIPE) {
				t.Fatalf("ended with %v, want success or SIGPIPE", err)
			}
			if left := leftInTemp(t, tmp); len(left) > 0 {
				t.Fatalf("left in TMPDIR: %v", left)
			}
		})
	}
}

// F14 / R3: SIGINT and SIGTERM while audit copies a running store's log
// or builds a read model, and kill -9 (which no process can catch: the
// next hikoutei command removes what the dead one left), leave no copy
// in TMPDIR.
func TestF14_InterruptedOrKilledAuditLeavesNoCopyInTMPDIR(t *testing.T) {
	t.Parallel()
	running := storeWithItems(t, 150)
	holdStoreProcess(t, running)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		for _, delay := range []time.Duration{20 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond} {
			t.Run(sig.String()+"/"+delay.String(), func(t *testing.T) {
				tmp := t.TempDir()
				cmd := cliIn(tmp, "audit", "--dir", running, "--entity", "Item", "--id", "i0001", "--at", "100")
				cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(delay)
				_ = cmd.Process.Signal(sig)
				_ = cmd.Wait()
				if sig == syscall.SIGKILL {
					if out, err := cliIn(tmp, "version").CombinedOutput(); err != nil {
						t.Fatalf("version: %v %s", err, out)
					}
				}
				if left := leftInTemp(t, tmp); len(left) > 0 {
					t.Fatalf("left in TMPDIR: %v", left)
				}
			})
		}
	}
}

// F1 / F14: a TMPDIR inside a store directory never receives a copy: the
// command refuses (target_inside_store) and writes nothing there.
func TestF14_TMPDIRInsideAStoreDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	running := storeWithItems(t, 5)
	holdStoreProcess(t, running)
	before, _ := os.ReadDir(running)
	out, err := cliIn(running, "audit", "--dir", running).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "target_inside_store") {
		t.Fatalf("audit with TMPDIR in the store: %v\n%s", err, out)
	}
	after, _ := os.ReadDir(running)
	if len(after) != len(before) {
		t.Fatalf("entries in the store: %d before, %d after", len(before), len(after))
	}
}
