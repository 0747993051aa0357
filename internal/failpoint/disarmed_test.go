//go:build !failpoints

package failpoint

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRepro12_ReleaseBuildHasNoFailpoints: without the failpoints tag,
// Enable refuses, and a process started with HIKOUTEI_FAILPOINTS arming a
// crash runs straight through the failpoint.
func TestRepro12_ReleaseBuildHasNoFailpoints(t *testing.T) {
	if os.Getenv("FAILPOINT_TEST_CHILD") == "release" {
		Inject(SnapshotBeforeManifest)
		os.Stdout.WriteString("survived\n")
		os.Exit(0)
	}
	if err := Enable(LogAfterCommit + "=panic"); !errors.Is(err, ErrNotCompiled) {
		t.Fatalf("Enable: %v", err)
	}
	Inject(LogAfterCommit) // must not panic
	if Compiled || Hits(LogAfterCommit) != 0 {
		t.Fatal("failpoints are compiled in")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRepro12_ReleaseBuildHasNoFailpoints$")
	cmd.Env = append(os.Environ(), "FAILPOINT_TEST_CHILD=release", EnvVar+"="+SnapshotBeforeManifest+"=crash")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "survived" {
		t.Fatalf("child: %v, out %q", err, out)
	}
}
