//go:build failpoints

package failpoint

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

func TestDisabledInjectIsANoOp(t *testing.T) {
	Disable()
	for range 3 {
		Inject(LogAfterCommit)
	}
	if Hits(LogAfterCommit) != 0 {
		t.Fatal("a disabled failpoint counted hits")
	}
}

func TestPanicFiresOnTheNthHitOnly(t *testing.T) {
	defer Disable()
	if err := Enable(LogBeforeCommit + "=panic@3"); err != nil {
		t.Fatal(err)
	}
	fired := 0
	for range 5 {
		func() {
			defer func() {
				if r := recover(); r != nil {
					if c, ok := r.(*Crash); !ok || c.Name != LogBeforeCommit {
						t.Fatalf("panicked with %v", r)
					}
					fired++
				}
			}()
			Inject(LogBeforeCommit)
			Inject("some.other.point")
		}()
	}
	if fired != 1 || Hits(LogBeforeCommit) != 3 {
		t.Fatalf("fired %d times, %d hits", fired, Hits(LogBeforeCommit))
	}
}

func TestMalformedSpecsAreRejectedAndChangeNothing(t *testing.T) {
	defer Disable()
	a := LogAfterCommit
	if err := Enable(a + "=crash"); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{a, "=crash", a + "=explode", a + "=crash@0", a + "=crash@x", a + "=crash@-1", a + "=crash," + a + "=panic"} {
		if err := Enable(spec); !errors.Is(err, ErrSpec) {
			t.Fatalf("Enable(%q) = %v", spec, err)
		}
	}
	if err := Enable("a=crash"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown name: %v", err)
	}
	if !enabled.Load() || points[a] == nil {
		t.Fatal("a rejected spec changed the active failpoints")
	}
	if err := Enable(a + "=off, ,"); err != nil || enabled.Load() {
		t.Fatalf("off: %v, enabled %v", err, enabled.Load())
	}
}

// TestCrashKillsTheProcessWithSIGKILL re-executes this test binary with the
// env var set: the child must die of SIGKILL at the failpoint, after
// announcing it on stderr, and never run the code after it.
func TestCrashKillsTheProcessWithSIGKILL(t *testing.T) {
	if os.Getenv("FAILPOINT_TEST_CHILD") == "1" {
		Inject(SnapshotBeforeManifest)
		os.Stdout.WriteString("survived\n")
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKillsTheProcessWithSIGKILL$")
	cmd.Env = append(os.Environ(), "FAILPOINT_TEST_CHILD=1", EnvVar+"="+SnapshotBeforeManifest+"=crash")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, out %q", err, out)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL || strings.Contains(string(out), "survived") {
		t.Fatalf("child status %v, out %q", ee, out)
	}
	if !strings.Contains(stderr.String(), "failpoint: "+SnapshotBeforeManifest+" crash") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

func BenchmarkInjectDisabled(b *testing.B) {
	Disable()
	for b.Loop() {
		Inject(LogAfterCommit)
	}
}

// TestRepro12_UnknownNamesInTheEnvironmentArmNothing re-executes this test
// binary with a spec naming an unknown failpoint beside a real one: the
// child arms nothing (the real one does not fire) and CheckEnv reports
// the unknown name with the known ones.
func TestRepro12_UnknownNamesInTheEnvironmentArmNothing(t *testing.T) {
	if os.Getenv("FAILPOINT_TEST_CHILD") == "unknown" {
		Inject(SnapshotBeforeManifest)
		var ue *UnknownError
		if err := CheckEnv(nil); errors.As(err, &ue) && ue.Name == "log.afer_commit" {
			os.Stdout.WriteString("refused\n")
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRepro12_UnknownNamesInTheEnvironmentArmNothing$")
	cmd.Env = append(os.Environ(), "FAILPOINT_TEST_CHILD=unknown", EnvVar+"="+SnapshotBeforeManifest+"=crash,log.afer_commit=crash")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "refused" {
		t.Fatalf("child: %v, out %q", err, out)
	}
}
