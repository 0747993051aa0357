package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/events"
)

var chainHeadLine = regexp.MustCompile(`head (\d+):([0-9a-f]{64})`)

// audit verify of a running store verifies a copy and prints its head; a
// later verify of the closed store extends that head as a pin; after a
// record is rewritten it exits 3 naming the sequence and the pin fails.
func TestI33_AuditVerifyPrintsTheHeadAPinHoldsAndARewriteExits3(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 12)
	dir := s.Dir()
	code, text := runCLIWithin(t, "audit", "verify", "--dir", dir)
	m := chainHeadLine.FindStringSubmatch(text)
	if code != exitOK || m == nil || !strings.Contains(text, "verified a copy of its log") {
		t.Fatalf("verify of a running store: exit %d:\n%s", code, text)
	}
	pin := m[1] + ":" + m[2]
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runSplit("audit", "verify", "--dir", dir, "--pin", pin, "--json")
	var rep verifyJSON
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || !rep.Pinned {
		t.Fatalf("verify --pin %s: exit %d:\n%s%s", pin, code, out, errOut)
	}
	editRecord(t, dir, 5)
	code, out = runCLI(t, "audit", "verify", "--dir", dir)
	if code != exitDamage || !strings.Contains(out, "chain_broken: seq 5:") {
		t.Fatalf("a rewritten record: exit %d:\n%s", code, out)
	}
	if code, out = runCLI(t, "audit", "verify", "--dir", dir, "--pin", "1:"+strings.Repeat("0", 64)); code != exitDamage || !strings.Contains(out, "chain") {
		t.Fatalf("a pin on a broken log: exit %d:\n%s", code, out)
	}
	if code, out = runCLI(t, "audit", "verify", "--dir", dir, "--pin", "x"); code != exitUsage {
		t.Fatalf("a malformed pin: exit %d:\n%s", code, out)
	}
}

// editRecord re-encodes record seq with a changed envelope and recomputes
// its checksum, as someone editing the log would: its time moves by 1 ns.
func editRecord(t *testing.T, dir string, seq uint64) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, events.LogFileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		key := []byte{0, 0, 0, 0, 0, 0, 0, byte(seq)}
		e, err := events.DecodeRecord(seq, b.Get(key))
		if err != nil {
			return err
		}
		e.At = e.At.Add(1)
		rec, err := events.MarshalRecord(e)
		if err != nil {
			return fmt.Errorf("re-encode: %w", err)
		}
		return b.Put(key, rec)
	})
	if err != nil {
		t.Fatal(err)
	}
}
