//go:build unix

package process

import (
	"os"
	"os/exec"
	"testing"
)

// This process runs; one started and killed does not; a pid of 0 or less
// is no process's (kill(0) would signal this process's group).
func TestRuns(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !Runs(cmd.Process.Pid) {
		t.Fatal("a started process does not run")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if Runs(cmd.Process.Pid) || !Runs(os.Getpid()) || Runs(0) || Runs(-1) {
		t.Fatalf("Runs(killed) = %v, Runs(self) = %v, Runs(0) = %v, Runs(-1) = %v",
			Runs(cmd.Process.Pid), Runs(os.Getpid()), Runs(0), Runs(-1))
	}
}
