package main

import (
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/events"
)

// editClosedLog runs fn on the events bucket of the closed store in dir,
// as someone editing log.db with bbolt would; it returns the log's head.
func editClosedLog(t *testing.T, dir string, fn func(ev *bolt.Bucket, head uint64) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, events.LogFileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		head := binary.BigEndian.Uint64(tx.Bucket([]byte("meta")).Get([]byte("head")))
		return fn(tx.Bucket([]byte("events")), head)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A removed last record (the head left as it was) is a removed record
// like any other: audit verify names its sequence as chain_broken and
// exits 3; a log too damaged to open at all (a key that is no sequence)
// exits 3 too, as doctor does.
func TestI33_AuditVerifyNamesARemovedLastRecordAndExits3(t *testing.T) {
	s := openItemStore(t, 12)
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var head uint64
	editClosedLog(t, dir, func(ev *bolt.Bucket, h uint64) error {
		head = h
		key := make([]byte, 8)
		binary.BigEndian.PutUint64(key, h)
		return ev.Delete(key)
	})
	code, out := runCLI(t, "audit", "verify", "--dir", dir)
	want := "chain_broken: seq " + strconv.FormatUint(head, 10) + ":"
	if code != exitDamage || !strings.Contains(out, want) {
		t.Fatalf("a removed last record: exit %d, want %d and %q:\n%s", code, exitDamage, want, out)
	}
	editClosedLog(t, dir, func(ev *bolt.Bucket, _ uint64) error { return ev.Put([]byte("xyz"), []byte("junk")) })
	if code, out = runCLI(t, "audit", "verify", "--dir", dir, "--json"); code != exitDamage || !strings.Contains(out, "log_corrupt") {
		t.Fatalf("a log that does not open: exit %d, want %d and log_corrupt:\n%s", code, exitDamage, out)
	}
}

// R4: audit verify --json prints one JSON object on stdout for every
// failure — a changed record (chain_broken, with its seq), a pin the log
// does not extend (chain_pin_mismatch), a log too damaged to open
// (log_corrupt) — and the human message on stderr.
func TestR4_AuditVerifyJSONPrintsAJSONLineForEveryFailure(t *testing.T) {
	s := openItemStore(t, 12)
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runSplit("audit", "verify", "--dir", dir, "--json")
	var ok verifyJSON
	if code != exitOK || json.Unmarshal([]byte(out), &ok) != nil {
		t.Fatalf("healthy: %d %s", code, out)
	}
	wrongPin := "3:" + strings.Repeat("ab", 32)
	code, out, errOut := runSplit("audit", "verify", "--dir", dir, "--json", "--pin", wrongPin)
	checkFailureLine(t, "pin", code, out, errOut, "chain_pin_mismatch", 0)

	editClosedLog(t, dir, func(ev *bolt.Bucket, _ uint64) error {
		key := binary.BigEndian.AppendUint64(nil, 5)
		rec := append([]byte(nil), ev.Get(key)...)
		rec[len(rec)/2] ^= 0x20
		return ev.Put(key, rec)
	})
	code, out, errOut = runSplit("audit", "verify", "--dir", dir, "--json")
	checkFailureLine(t, "a changed record", code, out, errOut, "", 5)

	editClosedLog(t, dir, func(ev *bolt.Bucket, _ uint64) error { return ev.Put([]byte("xyz"), []byte("junk")) })
	code, out, errOut = runSplit("audit", "verify", "--dir", dir, "--json")
	checkFailureLine(t, "a log that does not open", code, out, errOut, "log_corrupt", 0)
}

// checkFailureLine checks that stdout is exactly one JSON failure object
// with the code (any code of a broken record when "") and seq (when not
// 0), that stderr says it too, and that the exit is 3.
func checkFailureLine(t *testing.T, what string, code int, out, errOut, wantCode string, wantSeq uint64) {
	t.Helper()
	var f verifyFailureJSON
	if code != exitDamage || strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &f) != nil || f.Message == "" || errOut == "" {
		t.Fatalf("%s: exit %d, stdout %q, stderr %q", what, code, out, errOut)
	}
	if wantCode != "" && f.Error != wantCode || wantCode == "" && f.Error != "chain_broken" && f.Error != "log_record_corrupt" {
		t.Fatalf("%s: code %q, want %q: %+v", what, f.Error, wantCode, f)
	}
	if wantSeq != 0 && f.Seq != wantSeq {
		t.Fatalf("%s: seq %d, want %d: %+v", what, f.Seq, wantSeq, f)
	}
}
