package hikoutei_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// A kill between the key file's creation and its first transaction leaves
// a valid bbolt file with no identity: no key was ever stored in it, so
// the store opens, gives it its identity and seals values with it (seen
// in the crash campaign at log.before_commit of a store's first run).
func TestAKeyFileKilledBeforeItsIdentityIsInitialisedAtOpen(t *testing.T) {
	dir := t.TempDir()
	opts := hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true}
	s, err := hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "keys.db")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, "keys.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatalf("open over a key file killed before its identity: %v", err)
	}
	defer s.Close()
	u := s.Begin()
	if err := u.Persist(&member{ID: "m-1", Email: memberEmail, Team: "blue"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := hikoutei.Get[member](t.Context(), s, "m-1")
	if err != nil || got.Email != memberEmail {
		t.Fatalf("read back: %+v, %v", got, err)
	}
}

// An empty key file (created, then killed before bbolt wrote its first
// pages) is likewise no reason to refuse the store: the read model's mask
// opened it read-only, which made bbolt try to write its pages ("write
// keys.db: bad file descriptor"; the crash campaign with an object store,
// run 1 at log.before_commit).
func TestAnEmptyKeyFileKilledBeforeItsFirstWriteIsInitialisedAtOpen(t *testing.T) {
	dir := t.TempDir()
	opts := hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true}
	s, err := hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "keys.db"), 0); err != nil {
		t.Fatal(err)
	}
	s, err = hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatalf("open over an empty key file: %v", err)
	}
	defer s.Close()
	u := s.Begin()
	if err := u.Persist(&member{ID: "m-1", Email: memberEmail, Team: "blue"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}
