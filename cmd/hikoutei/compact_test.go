package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compact refuses a running store; on a closed, sealed one it shrinks
// log.db, keeps 0600, and audit verify still walks from the first record.
func TestCompactCommandShrinksAClosedSealedStoreAndRefusesARunningOne(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 400)
	dir := s.Dir()
	if code, out := runCLI(t, "compact", "--dir", dir); code == exitOK || !strings.Contains(out, "store_locked") {
		t.Fatalf("compact of a running store: exit %d:\n%s", code, out)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, "seal", "--dir", dir, "--keep", "5", "--min-batch", "1"); code != exitOK {
		t.Fatalf("seal: exit %d:\n%s", code, out)
	}
	code, out, errOut := runSplit("compact", "--dir", dir, "--json")
	var rep compactJSON
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.BytesAfter <= 0 || rep.BytesAfter > rep.BytesBefore || rep.Head == 0 {
		t.Fatalf("compact --json: exit %d:\n%s%s", code, out, errOut)
	}
	fi, err := os.Stat(filepath.Join(dir, "log.db"))
	if err != nil || fi.Size() != rep.BytesAfter || fi.Mode().Perm() != 0o600 {
		t.Fatalf("log.db after compact: %v %v", fi, err)
	}
	if code, out = runCLI(t, "audit", "verify", "--dir", dir); code != exitOK {
		t.Fatalf("audit verify after compact: exit %d:\n%s", code, out)
	}
	if code, out = runCLI(t, "compact", "--dir", dir); code != exitOK || !strings.Contains(out, "compacted log.db") {
		t.Fatalf("compact again: exit %d:\n%s", code, out)
	}
}

// serve refuses retention flags that cannot work, before it touches the
// store (exit 2, naming the flag).
func TestServeRetentionFlagsThatCannotWorkAreUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--retain-below-snapshot"}, "--retain-below-snapshot"},
		{[]string{"--retain-min-batch", "5"}, "--retain-min-batch"},
		{[]string{"--retain-max-age", "-1h"}, "--retain-max-age"},
	} {
		code, out := runCLI(t, append([]string{"serve", "--dir", dir}, c.args...)...)
		if code != exitUsage || !strings.Contains(out, c.flag) {
			t.Errorf("serve %v: exit %d:\n%s", c.args, code, out)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused serve wrote %d files", len(entries))
	}
}
