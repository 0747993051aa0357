package hikoutei

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// flipRecordByte flips one byte in the middle of the stored record seq of
// the closed store in dir, leaving its checksum as it was.
func flipRecordByte(t *testing.T, dir string, seq uint64) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "log.db"), 0o600, nil)
	mustT(t, err)
	defer db.Close()
	mustT(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		key := binary.BigEndian.AppendUint64(nil, seq)
		rec := append([]byte(nil), b.Get(key)...)
		rec[len(rec)/2] ^= 0x40
		return b.Put(key, rec)
	}))
}

// A store whose log holds a damaged record opens for reads, says why in
// Health, and refuses every commit: nothing is appended to a damaged log.
func TestOpenOfADamagedLogRefusesCommitsAndSaysWhy(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.Context(), dir, Options{HeartbeatInterval: -1}, Entity[Airport]("Airport"))
	mustT(t, err)
	for _, code := range []string{"LAX", "NRT"} {
		u := s.Begin()
		mustT(t, u.Persist(&Airport{ID: code, Name: code}))
		_, err := u.Commit(t.Context())
		mustT(t, err)
	}
	mustT(t, s.Close())
	flipRecordByte(t, dir, 3)

	s, err = Open(t.Context(), dir, Options{HeartbeatInterval: -1}, Entity[Airport]("Airport"))
	mustT(t, err)
	defer s.Close()
	if h := s.Health(); !errors.Is(h.Local, ErrLogDamaged) {
		t.Fatalf("Health().Local = %v, want log_damaged", h.Local)
	}
	before, err := s.e.Log().Head()
	mustT(t, err)
	u := s.Begin()
	mustT(t, u.Persist(&Airport{ID: "CDG", Name: "CDG"}))
	if _, err := u.Commit(t.Context()); !errors.Is(err, ErrLogDamaged) {
		t.Fatalf("commit on a damaged log: %v, want log_damaged", err)
	}
	if after, err := s.e.Log().Head(); err != nil || after != before {
		t.Fatalf("head %d → %d (%v): something was appended to the damaged log", before, after, err)
	}
	if _, err := Get[Airport](t.Context(), s, "LAX"); err != nil {
		t.Fatalf("reads of a damaged store: %v", err)
	}
}
