package main

import (
	"encoding/binary"
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
