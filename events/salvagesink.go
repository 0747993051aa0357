package events

import (
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// salvageSink writes the new log of a salvage, in batches of salvageBatch
// records per transaction, and keeps what the streams, index and lease
// buckets need.
type salvageSink struct {
	db       *bolt.DB
	tx       *bolt.Tx
	n        int
	streams  map[string]uint64 // stream → highest version copied
	maxEpoch uint64
	lastAt   time.Time
}

// newSalvageSink creates path (it must not exist) as a new bbolt file with
// the log's buckets.
func newSalvageSink(path string) (*salvageSink, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: DefaultOpenTimeout, NoSync: true})
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range newBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		os.Remove(path)
		return nil, err
	}
	return &salvageSink{db: db, streams: map[string]uint64{}}, nil
}

// put stores a record under its sequence, with its stream index entry.
func (s *salvageSink) put(seq uint64, rec []byte, h header) error {
	if s.tx == nil {
		tx, err := s.db.Begin(true)
		if err != nil {
			return err
		}
		s.tx = tx
	}
	if err := appendBucket(s.tx).Put(u64(seq), rec); err != nil {
		return err
	}
	if err := s.tx.Bucket(bucketIndex).Put(indexKey(h.Stream, h.Version), u64(seq)); err != nil {
		return err
	}
	s.streams[h.Stream] = max(s.streams[h.Stream], h.Version)
	s.maxEpoch = max(s.maxEpoch, h.Epoch)
	if h.At.After(s.lastAt) {
		s.lastAt = h.At
	}
	if s.n++; s.n%salvageBatch == 0 {
		return s.commit()
	}
	return nil
}

// remove deletes a record put earlier and its stream index entry (the
// stream versions keep what was copied: a removed record is a lost one).
func (s *salvageSink) remove(seq uint64, at refKey) error {
	if err := s.commit(); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketEvents).Delete(u64(seq)); err != nil {
			return err
		}
		return tx.Bucket(bucketIndex).Delete(indexKey(at.stream, at.version))
	})
}

func (s *salvageSink) commit() error {
	if s.tx == nil {
		return nil
	}
	err := s.tx.Commit()
	s.tx = nil
	return err
}

// finish writes meta, the stream versions (never below the source's
// readable ones) and the leases, released, at an epoch no lower than any
// copied record's; then syncs the file.
func (s *salvageSink) finish(meta map[string][]byte, oldStreams map[string]uint64, leases []Lease) error {
	if err := s.commit(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		for k, v := range meta {
			if err := tx.Bucket(bucketMeta).Put([]byte(k), v); err != nil {
				return err
			}
		}
		for st, v := range oldStreams {
			s.streams[st] = max(s.streams[st], v)
		}
		for st, v := range s.streams {
			if err := tx.Bucket(bucketStreams).Put([]byte(st), u64(v)); err != nil {
				return err
			}
		}
		for _, l := range s.leases(leases) {
			if err := putLease(tx, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.db.Sync()
}

// leases returns the leases to write: each released, and the writer role's
// at the highest epoch seen (a lease is made up when none was readable but
// records carry an epoch), so the next writer's epoch is above every
// earlier one and the spreadsheet authority accepts it.
func (s *salvageSink) leases(old []Lease) []Lease {
	found := false
	for i := range old {
		if old[i].State == LeaseStateHeld {
			old[i].State = LeaseStateReleased
		}
		if old[i].Role == DefaultRole {
			old[i].Epoch = max(old[i].Epoch, s.maxEpoch)
			found = true
		}
	}
	if !found && s.maxEpoch > 0 {
		old = append(old, Lease{Role: DefaultRole, WriterID: "salvage", Epoch: s.maxEpoch, Token: newToken(),
			LeaseUntil: s.lastAt, State: LeaseStateReleased, Operation: "salvage"})
	}
	return old
}

func (s *salvageSink) close() error {
	if s.tx != nil {
		_ = s.tx.Rollback()
	}
	return s.db.Close()
}
