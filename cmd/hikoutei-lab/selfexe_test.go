package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// selfExeRole is the role the test binary plays when the test re-runs it:
// "supervisor" or "child".
const selfExeRole = "HIKOUTEI_TEST_SELFEXE_ROLE"

const testSelfExe = "^TestI38_CrashChildRunsTheSupervisorsBuild$"

// TestI38_CrashChildRunsTheSupervisorsBuild: a campaign's children run the
// supervisor's own build even after another build replaced the file at
// its path (make builds every lab target into one shared LAB_DIR). A
// child of a build without --segments bucket sealed into the store's
// folder while the checks read the bucket: a false I38 finding
// ("rebuild: segment_missing: …: not in file://….bucket").
func TestI38_CrashChildRunsTheSupervisorsBuild(t *testing.T) {
	switch os.Getenv(selfExeRole) {
	case "child":
		fmt.Println("child: the supervisor's build")
		return
	case "supervisor":
		superviseReplaced(t)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("the running image is pinned through /proc/self/exe (Linux)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lab := filepath.Join(t.TempDir(), "hikoutei-lab-failpoints")
	copyExecutable(t, self, lab)
	cmd := exec.Command(lab, "-test.run="+testSelfExe)
	cmd.Env = append(os.Environ(), selfExeRole+"=supervisor")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("supervisor: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "child: the supervisor's build") || strings.Contains(string(out), "another build") {
		t.Fatalf("the child did not run the supervisor's build:\n%s", out)
	}
}

// superviseReplaced replaces the file this process was started from by
// another program, as a concurrent make does, then starts a child the way
// the campaigns do and prints what the child printed.
func superviseReplaced(t *testing.T) {
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	other := path + ".new"
	if err := os.WriteFile(other, []byte("#!/bin/sh\necho child: another build\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	exe, err := selfExe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run="+testSelfExe)
	cmd.Env = append(os.Environ(), selfExeRole+"=child")
	out, err := cmd.CombinedOutput()
	fmt.Printf("%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
