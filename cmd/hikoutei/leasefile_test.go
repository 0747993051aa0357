package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// runCLIWithin runs the CLI on another goroutine and fails the test when
// it has not returned within 10 s (a blocked read of lease.toml).
func runCLIWithin(t *testing.T, args ...string) (int, string) {
	t.Helper()
	type res struct {
		code int
		out  string
	}
	done := make(chan res, 1)
	go func() {
		code, out := runCLI(t, args...)
		done <- res{code, out}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case r := <-done:
		return r.code, r.out
	case <-ctx.Done():
		t.Fatalf("hikoutei %s did not return within 10 s: it blocked on a file it read", strings.Join(args, " "))
		return 0, ""
	}
}

// TestRepro7_StatusAndDoctorNeverReadAFIFOOrALinkedDevice plants a FIFO,
// then a link to /dev/zero, as lease.toml: status and doctor answer at
// once, doctor reporting lease_file_invalid, and neither moves or reads it.
func TestRepro7_StatusAndDoctorNeverReadAFIFOOrALinkedDevice(t *testing.T) {
	plant := map[string]func(string) error{
		"FIFO":           func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"symbolic link":  func(p string) error { return os.Symlink("/dev/zero", p) },
		"larger than 65": func(p string) error { return os.WriteFile(p, make([]byte, events.MaxLeaseFileSize+1), 0o600) },
	}
	for kind, mk := range plant {
		dir := t.TempDir()
		s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Operation: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, events.LeaseFileName)
		if err := mk(path); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Lstat(path)
		code, out := runCLIWithin(t, "doctor", "--dir", dir)
		if code == exitOK || !strings.Contains(out, "lease_file_invalid") || !strings.Contains(out, kind) {
			t.Errorf("%s: doctor exit %d:\n%s", kind, code, out)
		}
		code, out = runCLIWithin(t, "status", "--dir", dir, "--json")
		if code != exitOK || !strings.Contains(out, "lease.toml invalid") {
			t.Errorf("%s: status exit %d:\n%s", kind, code, out)
		}
		if after, err := os.Lstat(path); err != nil || !os.SameFile(before, after) {
			t.Errorf("%s: a read-only command moved lease.toml: %v", kind, err)
		}
	}
}
