package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The store `hikoutei demo` points at when it ends ("where to look",
// "store: …") is still there after the process exited: by default it is
// made in the temporary directory the process was started with, never
// in the process's scratch directory, which is removed at exit. The
// report says how much space it takes and the command that removes it.
func TestDemoStoreOutlivesTheCommand(t *testing.T) {
	bin := buildHikoutei(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	code, out := runBinary(t, bin, "demo", "--rows", "20", "--no-latency")
	if code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out)
	}
	m := regexp.MustCompile(`(?m)^\s*store: (\S+) \(hikoutei status`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("demo printed no store path:\n%s", out)
	}
	if filepath.Dir(m[1]) != tmp {
		t.Fatalf("the demo's store %s is not in TMPDIR %s", m[1], tmp)
	}
	for _, f := range []string{"log.db", "read.sqlite"} {
		if _, err := os.Stat(filepath.Join(m[1], f)); err != nil {
			t.Fatalf("the store the demo printed is gone after it exited: %v", err)
		}
	}
	if !regexp.MustCompile(`(?m)^  the store takes [0-9.]+ MB; remove it when done: rm -r ` + regexp.QuoteMeta(m[1]) + `$`).MatchString(out) {
		t.Fatalf("the demo did not say how to remove the store it made:\n%s", out)
	}
	if code, out := runBinary(t, bin, "status", "--dir", m[1]); code != 0 {
		t.Fatalf("status of the demo's store exited %d:\n%s", code, out)
	}
}
