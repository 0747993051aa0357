package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String() + errOut.String()
}

func newStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w, err := events.OpenWriter(dir, events.WriterOptions{Operation: "test", HeartbeatInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestI22_DoctorReportsMalformedLeaseFile(t *testing.T) {
	dir := newStore(t)
	bad := "schema = 1\nowner = \"me\"\nacquired_at = 2026-11-30T02:05:24\n[holder]\nhost = \"h\"\npid = \"12\"\n"
	if err := os.WriteFile(filepath.Join(dir, events.LeaseFileName), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "doctor", "--dir", dir)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d:\n%s", code, exitFailure, out)
	}
	for _, want := range []string{`unknown key "owner"`, `missing key "operation"`, `missing key "holder.writer_id"`,
		`key "pid" must be a positive integer`, `"acquired_at" must be an offset date-time`, "lease_file_invalid", "problems found"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// doctor on a closed store with records and a read model leaves the
// directory as it found it: its read-only looks at read.sqlite create no
// -wal or -shm.
func TestDoctorLeavesAClosedStoreDirectoryAsItFoundIt(t *testing.T) {
	dir := itemStore(t)
	before := dirNames(t, dir)
	if code, out := runCLI(t, "doctor", "--dir", dir); code != exitOK {
		t.Fatalf("doctor: exit %d:\n%s", code, out)
	}
	if after := dirNames(t, dir); !slices.Equal(before, after) {
		t.Fatalf("doctor changed the store directory: %v, then %v", before, after)
	}
}

func TestDoctorHealthyStoreExitsZero(t *testing.T) {
	dir := newStore(t)
	code, out := runCLI(t, "doctor", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "all checksums valid") || !strings.Contains(out, "doctor: healthy") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "doctor", "--dir", dir, "--json")
	if code != exitOK || !strings.Contains(out, `"healthy":true`) {
		t.Fatalf("json exit %d:\n%s", code, out)
	}
}

func TestDoctorFlagsCorruptLog(t *testing.T) {
	dir := newStore(t)
	path := filepath.Join(dir, events.LogFileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(data, []byte(events.TypeLeaseAcquired)) == 0 {
		t.Fatal("record not found in file")
	}
	// A bit flip inside the stored record (every copy bbolt left in the file).
	data = bytes.ReplaceAll(data, []byte(events.TypeLeaseAcquired), []byte("L"+events.TypeLeaseAcquired[1:]))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "doctor", "--dir", dir)
	if code != exitDamage || !strings.Contains(out, "log_record_corrupt: 1 records fail their checksum or shape: seq 1") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"doctor"}, {"bogus"}, {"doctor", "--dir", "x", "--nope"}, {"version", "extra"}} {
		if code, out := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d:\n%s", args, code, exitUsage, out)
		}
	}
}

// A closed store whose read.sqlite-wal outlived its -shm (a run killed,
// then the -shm removed or not copied) is still a readable read model:
// doctor and status read it through the WAL (opened read-only as before,
// which makes a -shm) instead of calling it read_model_invalid.
func TestDoctorAndStatusReadAReadModelWhoseWALHasNoSHM(t *testing.T) {
	dir := itemStore(t)
	path := filepath.Join(dir, hikoutei.ReadModelFile)
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{ // two commits that leave the file as it was
		"UPDATE hk_meta SET value = value || 'x' WHERE key = 'checkpoint'",
		"UPDATE hk_meta SET value = rtrim(value, 'x') WHERE key = 'checkpoint'",
	} {
		if err := sqlitex.ExecuteTransient(conn, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	wal, err := os.ReadFile(path + "-wal") // its frames: what the page holds once checkpointed
	if err != nil || len(wal) == 0 {
		t.Fatalf("no WAL while the connection is open: %d bytes, %v", len(wal), err)
	}
	mustNil(t, conn.Close())
	mustNil(t, os.WriteFile(path+"-wal", wal, 0o600))
	_ = os.Remove(path + "-shm")
	if code, out := runCLI(t, "doctor", "--dir", dir); code != exitOK {
		t.Fatalf("doctor: exit %d:\n%s", code, out)
	}
	_ = os.Remove(path + "-shm")
	code, out, errOut := runSplit("status", "--dir", dir, "--json")
	var st storeStatus
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || st.Checkpoint == nil || st.LogHead == nil || *st.Checkpoint != *st.LogHead {
		t.Fatalf("status --json: exit %d:\n%s%s", code, out, errOut)
	}
}
