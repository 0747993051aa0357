package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Bucket names inside log.db.
var (
	bucketEvents  = []byte("events")       // seq (8-byte BE) → record
	bucketStreams = []byte("streams")      // stream → version (8-byte BE)
	bucketIndex   = []byte("stream_index") // stream 0x00 version (BE) → seq (BE)
	bucketLease   = []byte("lease")        // role → canonical lease map
	bucketMeta    = []byte("meta")         // "head", "store_id", "format"
)

var (
	metaHead    = []byte("head")
	metaStoreID = []byte("store_id")
	metaFormat  = []byte("format")
)

// LogFormat is the on-disk format version of log.db written in meta.
const LogFormat = 1

// DefaultOpenTimeout bounds how long opening waits for another process's
// file lock before failing with ErrStoreLocked.
const DefaultOpenTimeout = time.Second

// Options configures a Log.
type Options struct {
	Clock       Clock         // default SystemClock
	OpenTimeout time.Duration // file-lock wait; default DefaultOpenTimeout
	// NoSync skips fsync on commit. Only for benchmarks of the non-durable
	// path; never for stores whose data matters.
	NoSync   bool
	ReadOnly bool // open with a shared lock; appends fail
}

// Log is the append-only event log in a bbolt file (log.db). Appends are
// fenced by the writer lease stored in the same file (I01). Safe for
// concurrent use; bbolt serialises write transactions.
type Log struct {
	db      *bolt.DB
	clock   Clock
	storeID string
	closed  atomic.Bool
	res     residency
}

// OpenLog opens or creates the log file at path (mode 0600).
// Errors: bbolt's ErrTimeout wrapped as ErrStoreLocked when another process
// holds the file lock past opts.OpenTimeout; ErrCorruptRecord-free open
// errors from bbolt are returned wrapped.
func OpenLog(path string, opts Options) (*Log, error) {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.OpenTimeout <= 0 {
		opts.OpenTimeout = DefaultOpenTimeout
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.OpenTimeout, NoSync: opts.NoSync, ReadOnly: opts.ReadOnly})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, &StoreLockedError{Dir: filepath.Dir(path), Holder: "another process", Operation: "unknown"}
	}
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", filepath.Base(path), err)
	}
	l := &Log{db: db, clock: opts.Clock}
	if err := l.init(opts.ReadOnly); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

func (l *Log) init(readOnly bool) error {
	if readOnly {
		return l.db.View(func(tx *bolt.Tx) error {
			if m := tx.Bucket(bucketMeta); m != nil {
				l.storeID = string(m.Get(metaStoreID))
			}
			return nil
		})
	}
	return l.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketEvents, bucketStreams, bucketIndex, bucketLease, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		if id := meta.Get(metaStoreID); id != nil {
			l.storeID = string(id)
			return checkFormat(meta)
		}
		l.storeID = newToken()[:12]
		if err := meta.Put(metaFormat, []byte(strconv.Itoa(LogFormat))); err != nil {
			return err
		}
		return meta.Put(metaStoreID, []byte(l.storeID))
	})
}

func checkFormat(meta *bolt.Bucket) error {
	if f := string(meta.Get(metaFormat)); f != strconv.Itoa(LogFormat) {
		return fmt.Errorf("%w: log format %q, this build reads %d", ErrCorruptRecord, f, LogFormat)
	}
	return nil
}

// StoreID is the random id minted when the log was created (12 hex digits).
func (l *Log) StoreID() string { return l.storeID }

// Path is the file path of log.db.
func (l *Log) Path() string { return l.db.Path() }

// Clock returns the clock the log fences appends with.
func (l *Log) Clock() Clock { return l.clock }

// Close closes the file. Further calls return ErrLogClosed.
func (l *Log) Close() error {
	if l.closed.Swap(true) {
		return ErrLogClosed
	}
	return l.db.Close()
}

func (l *Log) update(fn func(*bolt.Tx) error) error {
	if l.closed.Load() {
		return ErrLogClosed
	}
	return l.db.Update(fn)
}

func (l *Log) view(fn func(*bolt.Tx) error) error {
	if l.closed.Load() {
		return ErrLogClosed
	}
	return l.db.View(fn)
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func getU64(b *bolt.Bucket, key []byte) uint64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func indexKey(stream string, version uint64) []byte {
	k := make([]byte, 0, len(stream)+9)
	k = append(k, stream...)
	k = append(k, 0)
	return append(k, u64(version)...)
}

// Head returns the highest sequence appended (0 for an empty log).
func (l *Log) Head() (uint64, error) {
	var head uint64
	err := l.view(func(tx *bolt.Tx) error {
		head = getU64(tx.Bucket(bucketMeta), metaHead)
		return nil
	})
	return head, err
}

// StreamVersions is StreamVersion of every stream, read in one transaction
// (same order as streams). Errors: ErrLogClosed.
func (l *Log) StreamVersions(streams []string) ([]uint64, error) {
	out := make([]uint64, len(streams))
	err := l.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketStreams)
		for i, s := range streams {
			out[i] = getU64(b, []byte(s))
		}
		return nil
	})
	return out, err
}

// StreamVersion returns the current version of stream (0 if it has no events).
func (l *Log) StreamVersion(stream string) (uint64, error) {
	var v uint64
	err := l.view(func(tx *bolt.Tx) error {
		v = getU64(tx.Bucket(bucketStreams), []byte(stream))
		return nil
	})
	return v, err
}
