package hikoutei

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/events"
)

// checkpointKey is the meta key of log.db holding the chain checkpoint.
var checkpointKey = []byte("chain_verified")

// editClosedLog runs fn on the events and meta buckets of the closed
// store in dir.
func editClosedLog(t *testing.T, dir string, fn func(ev, meta *bolt.Bucket) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "log.db"), 0o600, nil)
	mustT(t, err)
	defer db.Close()
	mustT(t, db.Update(func(tx *bolt.Tx) error { return fn(tx.Bucket([]byte("events")), tx.Bucket([]byte("meta"))) }))
}

// storedCheckpointSeq is the sequence of the chain checkpoint in the
// closed store in dir (0: none).
func storedCheckpointSeq(t *testing.T, dir string) uint64 {
	t.Helper()
	var seq uint64
	editClosedLog(t, dir, func(_, meta *bolt.Bucket) error {
		if v := meta.Get(checkpointKey); len(v) > 9 {
			seq = binary.BigEndian.Uint64(v[1:9])
		}
		return nil
	})
	return seq
}

// airportStore makes a closed store in dir holding one airport per code,
// each in its own commit, and returns the commits' first sequences.
func airportStore(t *testing.T, dir string, codes ...string) []uint64 {
	t.Helper()
	s, err := Open(t.Context(), dir, Options{HeartbeatInterval: -1}, Entity[Airport]("Airport"))
	mustT(t, err)
	var seqs []uint64
	for _, code := range codes {
		seqs = append(seqs, commit(t, s, &Airport{ID: code, Name: code}).FirstSeq)
	}
	mustT(t, s.Close())
	return seqs
}

// reopen opens the store in dir and fails the test unless it opened
// without a fault; the caller closes it.
func reopenHealthy(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(t.Context(), dir, Options{HeartbeatInterval: -1}, Entity[Airport]("Airport"))
	mustT(t, err)
	if h := s.Health(); h.Local != nil {
		t.Fatalf("Health().Local = %v after open", h.Local)
	}
	return s
}

// A record damaged below the chain checkpoint is not read by Open, which
// verifies only what was appended since: the store opens and commits.
// A whole walk still finds it at its sequence: Verify, VerifyDir (audit
// verify) and doctor keep walking from the genesis value.
func TestI33_DamageBelowTheChainCheckpointIsFoundByVerifyNotByOpen(t *testing.T) {
	dir := t.TempDir()
	seqs := airportStore(t, dir, "LAX", "NRT")
	mustT(t, reopenHealthy(t, dir).Close()) // records the checkpoint at its head
	if cp := storedCheckpointSeq(t, dir); cp <= seqs[1] {
		t.Fatalf("checkpoint at %d, want past the commits (%v)", cp, seqs)
	}
	flipRecordByte(t, dir, seqs[0])

	s := reopenHealthy(t, dir)
	commit(t, s, &Airport{ID: "CDG", Name: "CDG"})
	_, err := s.Verify(t.Context(), VerifyOptions{})
	wantChainBrokenAt(t, "Verify", err, seqs[0])
	mustT(t, s.Close())
	_, err = VerifyDir(t.Context(), dir, VerifyOptions{})
	wantChainBrokenAt(t, "VerifyDir", err, seqs[0])
}

func wantChainBrokenAt(t *testing.T, what string, err error, seq uint64) {
	t.Helper()
	var be *events.ChainBrokenError
	if !errors.As(err, &be) || !errors.Is(err, ErrChainBroken) || be.Seq != seq {
		t.Fatalf("%s: %v, want the chain broken at seq %d", what, err, seq)
	}
}

// A store an earlier build made has no chain checkpoint: its first open
// walks the whole chain (and so finds old damage, refusing commits);
// once a walk passes, the checkpoint is recorded at its end.
func TestOpenOfAStoreWithoutAChainCheckpointWalksTheWholeChainThenRecordsIt(t *testing.T) {
	t.Run("damaged", func(t *testing.T) {
		dir := t.TempDir()
		seqs := airportStore(t, dir, "LAX", "NRT")
		mustT(t, reopenHealthy(t, dir).Close())
		editClosedLog(t, dir, func(_, meta *bolt.Bucket) error { return meta.Delete(checkpointKey) })
		flipRecordByte(t, dir, seqs[0])
		s, err := Open(t.Context(), dir, Options{HeartbeatInterval: -1}, Entity[Airport]("Airport"))
		mustT(t, err)
		defer s.Close()
		if h := s.Health(); !errors.Is(h.Local, ErrLogDamaged) || !strings.Contains(h.Local.Error(), "chain_broken") {
			t.Fatalf("Health().Local = %v, want log_damaged naming the broken chain", h.Local)
		}
	})
	t.Run("intact", func(t *testing.T) {
		dir := t.TempDir()
		airportStore(t, dir, "LAX", "NRT")
		editClosedLog(t, dir, func(_, meta *bolt.Bucket) error { return meta.Delete(checkpointKey) })
		s := reopenHealthy(t, dir)
		head, err := s.e.Log().Head()
		mustT(t, err)
		mustT(t, s.Close())
		if cp := storedCheckpointSeq(t, dir); cp < head {
			t.Fatalf("checkpoint at %d after the open, want at least its head %d", cp, head)
		}
	})
}

// Open never needs to read the events below the chain checkpoint: with
// every entity event below it unreadable (each fails its checksum), the
// store opens without a fault, serves reads and commits.
func TestI38_OpenNeverReadsTheEntityEventsBelowTheChainCheckpoint(t *testing.T) {
	dir := t.TempDir()
	seqs := airportStore(t, dir, "LAX", "NRT", "CDG", "HND")
	mustT(t, reopenHealthy(t, dir).Close())
	for _, seq := range seqs {
		flipRecordByte(t, dir, seq)
	}
	s := reopenHealthy(t, dir)
	defer s.Close()
	if a, err := Get[Airport](t.Context(), s, "CDG"); err != nil || a.Name != "CDG" {
		t.Fatalf("read after open: %+v, %v", a, err)
	}
	commit(t, s, &Airport{ID: "SFO", Name: "SFO"})
}

// A chain checkpoint the log does not vouch for (its hash changed, or
// moved to another record) is not trusted: Open walks the whole chain
// instead, so an intact log opens healthy (no false break from the bad
// checkpoint) and gets a new checkpoint, and damage below it is found.
func TestOpenWalksTheWholeChainWhenTheLogDoesNotVouchForItsCheckpoint(t *testing.T) {
	edits := map[string]func(v []byte){
		"hash changed": func(v []byte) { v[len(v)-1] ^= 1 },
		"moved":        func(v []byte) { binary.BigEndian.PutUint64(v[1:9], binary.BigEndian.Uint64(v[1:9])-1) },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			seqs := airportStore(t, dir, "LAX", "NRT")
			mustT(t, reopenHealthy(t, dir).Close())
			tamper := func() {
				editClosedLog(t, dir, func(_, meta *bolt.Bucket) error {
					v := append([]byte(nil), meta.Get(checkpointKey)...)
					edit(v)
					return meta.Put(checkpointKey, v)
				})
			}
			tamper()
			s := reopenHealthy(t, dir)
			head, err := s.e.Log().Head()
			mustT(t, err)
			mustT(t, s.Close())
			if cp := storedCheckpointSeq(t, dir); cp < head {
				t.Fatalf("checkpoint at %d after the whole walk, want at least %d", cp, head)
			}
			tamper()
			flipRecordByte(t, dir, seqs[0])
			s, err = Open(t.Context(), dir, Options{HeartbeatInterval: -1}, Entity[Airport]("Airport"))
			mustT(t, err)
			defer s.Close()
			if h := s.Health(); !errors.Is(h.Local, ErrLogDamaged) {
				t.Fatalf("Health().Local = %v, want log_damaged (the whole chain walked)", h.Local)
			}
		})
	}
}
