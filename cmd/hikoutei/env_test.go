package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// closedStore is a store another run opened and closed: its log head.
func closedStore(t *testing.T) (string, uint64) {
	t.Helper()
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Operation: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, logHead(t, dir)
}

func logHead(t *testing.T, dir string) uint64 {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	head, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// untouchedStore requires that nothing took the store's lease: no
// lease.toml, no lease event appended.
func untouchedStore(t *testing.T, dir string, head uint64) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, events.LeaseFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lease.toml: %v", err)
	}
	if got := logHead(t, dir); got != head {
		t.Fatalf("log head moved from %d to %d: a lease was taken", head, got)
	}
}

// failpointRefusal is the code a spec naming an unknown failpoint gets
// in this build.
func failpointRefusal() error {
	if failpoint.Compiled {
		return hikoutei.ErrFailpointUnknown
	}
	return hikoutei.ErrFailpointsNotCompiled
}

// TestRepro12_CommandsRefuseAMalformedEnvironmentBeforeTheLease: a
// garbage HIKOUTEI_NATS_URL, a failpoint spec this build cannot arm, or a
// malformed endpoint stops every command with exit 2, naming the variable
// and its code, before any lease is taken.
func TestRepro12_CommandsRefuseAMalformedEnvironmentBeforeTheLease(t *testing.T) {
	dir, head := closedStore(t)
	for _, c := range []struct {
		env, val, code string
	}{
		{config.EnvNATSURL, "garbage", "invalid_nats_url"},
		{config.EnvNATSURL, "nats://a b:4222", "invalid_nats_url"},
		{config.EnvFailpoints, "log.afer_commit=crash", failpointRefusal().Error()},
		{config.EnvSheetsEndpoint, "http://a b/", "invalid_sheets_endpoint"},
	} {
		t.Setenv(c.env, c.val)
		for _, args := range [][]string{
			{"serve", "--dir", dir, "--spreadsheet", "1AbCdEfGhIjKlMnOp", "--sheets-endpoint", "http://127.0.0.1:1/"},
			{"status", "--dir", dir}, {"doctor", "--dir", dir}, {"version"},
		} {
			code, out := runCLI(t, args...)
			if code != exitUsage || !strings.Contains(out, c.env) || !strings.Contains(out, c.code) || strings.Contains(out, c.val) {
				t.Errorf("%s=%q hikoutei %s: exit %d, want %d naming %s and %s without the value:\n%s",
					c.env, c.val, args[0], code, exitUsage, c.env, c.code, out)
			}
		}
		untouchedStore(t, dir, head)
		os.Unsetenv(c.env)
	}
	if code, out := runCLI(t, "poll", "--store", "x", "--nats", "http://127.0.0.1:4222"); code != exitUsage || !strings.Contains(out, "invalid_nats_url") {
		t.Errorf("poll --nats http://…: exit %d:\n%s", code, out)
	}
}

// TestRepro12_OpenRefusesAMalformedEnvironmentBeforeTheLease: an
// application embedding the store gets the same typed errors from Open,
// before the lease is taken, whether or not the store uses NATS.
func TestRepro12_OpenRefusesAMalformedEnvironmentBeforeTheLease(t *testing.T) {
	dir, head := closedStore(t)
	for _, c := range []struct {
		env, val string
		want     error
	}{
		{hikoutei.EnvNATSURL, "garbage", hikoutei.ErrInvalidNATSURL},
		{hikoutei.EnvNATSURL, "http://127.0.0.1:4222", hikoutei.ErrInvalidNATSURL},
		{config.EnvFailpoints, "log.afer_commit=crash", failpointRefusal()},
	} {
		t.Setenv(c.env, c.val)
		for _, opts := range []hikoutei.Options{{}, {NATS: &hikoutei.NATSOptions{}}} {
			s, err := hikoutei.Open(t.Context(), dir, opts)
			var ee *hikoutei.EnvError
			if !errors.Is(err, c.want) || !errors.As(err, &ee) || ee.Var != c.env {
				if s != nil {
					s.Close()
				}
				t.Fatalf("%s=%q (NATS %v): Open = %v, want %v", c.env, c.val, opts.NATS != nil, err, c.want)
			}
		}
		untouchedStore(t, dir, head)
		os.Unsetenv(c.env)
	}
}

// TestRepro6_ServeWithAMalformedEndpointStopsBeforeTheLease: serve with
// HIKOUTEI_SHEETS_ENDPOINT='http://a b/' exits 2 naming the variable, never
// says "serving", and leaves the store free (no lease taken), so the next
// open does not wait.
func TestRepro6_ServeWithAMalformedEndpointStopsBeforeTheLease(t *testing.T) {
	dir, head := closedStore(t)
	t.Setenv(config.EnvSheetsEndpoint, "http://a b/")
	code, out := runCLI(t, "serve", "--dir", dir, "--spreadsheet", "1AbCdEfGhIjKlMnOp")
	if code != exitUsage || !strings.Contains(out, "invalid_sheets_endpoint") || strings.Contains(out, "serving") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	untouchedStore(t, dir, head)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{AcquireWait: -1})
	if err != nil {
		t.Fatalf("the store is not free after the refused serve: %v", err)
	}
	s.Close()
}
