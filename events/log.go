package events

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// Bucket names inside log.db.
var (
	bucketEvents  = []byte("events")       // seq (8-byte BE) → record
	bucketStreams = []byte("streams")      // stream → version ‖ seq of its last record (streamlinks.go: headValue)
	bucketIndex   = []byte("stream_index") // stream 0x00 version (BE) → seq (BE), records in log.db appended before format 4 (streamindex.go)
	bucketLease   = []byte("lease")        // role → canonical lease map
	bucketMeta    = []byte("meta")         // "head", "store_id", "format"
)

var (
	metaHead    = []byte("head")
	metaStoreID = []byte("store_id")
	metaFormat  = []byte("format")
)

// LogFormat is the on-disk format version of log.db written in meta.
// Format 2 may hold records of record format 2 (a packed fencing token)
// and the compact payload schemas; a format-1 log opened for writing is
// marked 2 before this build appends to it, so an older build refuses the
// whole file by its format instead of meeting records it cannot read.
// Format 3 may hold chained records (record format 3, see ChainHash); a
// format-1 or -2 log opened for writing is marked 3 the same way, and its
// first record appended links to the chain value over every record before
// it, from the genesis value of its store id.
// Format 4 indexes the records appended from then on in the stream links
// (streamlinks.go), whose keys grow with the log, and may hold 16-byte
// values in the streams bucket; a log of formats 1 to 3 opened for
// writing gets the links bucket and is marked 4 in one transaction, and
// keeps its stream index for the records appended before.
// Format 5 may keep the manifest of sealed segments in its own bucket,
// one entry per seal (manifest.go), beside the meta array of earlier
// builds; an older log opened for writing is marked 5 (its array stays
// and is read first).
// Format 6 stores no stream link for a stream's first record and may hold
// compact (varint) values in the streams bucket (streamlinks.go); an
// older log opened for writing is marked 6, and its entries of the
// earlier forms stay and read as before.
const LogFormat = 6

// oldestLogFormat is the oldest format this build reads.
const oldestLogFormat = 1

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
	// Replicator, when set, stores every commit's records before the
	// local commit (replicated mode).
	Replicator Replicator
	// StoreID, when set, is the store id a new log is created with, and
	// the one an existing log must have (ErrStoreIDMismatch otherwise):
	// in replicated mode every host's log of one store has the replicated
	// store's name as its id, so its spreadsheet authority, NATS subjects
	// and mirror are the same store's after a takeover.
	StoreID string
	// Segments is where the log's sealed segments live (nil: the folder
	// SegmentsDir beside log.db, segstore.Dir). The Log does not close
	// it: its opener does, after the Log.
	Segments segstore.Store
}

// Log is the append-only event log in a bbolt file (log.db). Appends are
// fenced by the writer lease stored in the same file (I01). Safe for
// concurrent use; bbolt serialises write transactions.
type Log struct {
	db      *bolt.DB
	clock   Clock
	repl    Replicator
	storeID string
	wantID  string // Options.StoreID
	closed  atomic.Bool
	res     residency
	// damage is the first damage found in the file (a bbolt panic, a
	// failed sequence check): from then on appends fail with it.
	damage atomic.Pointer[LogCorruptError]
	// chainCache is the chain value after the last record this process
	// committed (tail checks its sequence against the file's last record).
	chainCache atomic.Pointer[chainTail]
	// unchained makes appends write records without a link (format 1 or
	// 2), as the build before the chain did: set only by this package's
	// benchmarks, to measure what the chain costs.
	unchained bool
	// opened is the file opened (its identity: CheckFile compares the
	// path with it); replaced is set once the path named another file or
	// none (ErrLogFileReplaced): appends fail with it from then on.
	opened   os.FileInfo
	replaced atomic.Pointer[error]
	readOnly bool
	// segs is where the sealed segments live; segErr the last failure to
	// reach it (nil once an operation succeeds after it).
	segs   segstore.Store
	segErr atomic.Pointer[error]
	// manifest is the segment manifest last parsed (segmentread.go).
	manifest atomic.Pointer[manifestCache]
	// segReads counts the segments read and the stream reads the segment
	// streams index could not serve (segmentstreams.go).
	segReads   segReadCounters
	segIndexed atomic.Pointer[indexedCache]
}

// OpenLog opens or creates the log file at path (mode 0600). Before bbolt
// reads the file, under the file lock, OpenLog checks what bbolt trusts:
// both meta pages, the file size against the high-water mark, the freelist
// and the root page of every bucket; then that the log's buckets exist and
// that the head agrees with the last record. Opening an existing log
// writes nothing to it. A read-only open never writes.
// Errors: *StoreLockedError (ErrStoreLocked) when another process holds
// the file lock past opts.OpenTimeout; *LogCorruptError (ErrLogCorrupt)
// naming what is damaged; ErrCorruptRecord for a log format this build
// does not read; I/O errors wrapped.
func OpenLog(path string, opts Options) (*Log, error) {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.OpenTimeout <= 0 {
		opts.OpenTimeout = DefaultOpenTimeout
	}
	var opened os.FileInfo
	db, err := openBolt(path, opts, &opened)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, &StoreLockedError{Dir: filepath.Dir(path), Holder: "another process", Operation: "unknown"}
	}
	if errors.Is(err, ErrLogCorrupt) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", filepath.Base(path), err)
	}
	l := &Log{db: db, clock: opts.Clock, repl: opts.Replicator, wantID: opts.StoreID, opened: opened, readOnly: opts.ReadOnly,
		segs: opts.Segments}
	if l.segs == nil {
		l.segs = segstore.NewDir(filepath.Join(filepath.Dir(path), SegmentsDir))
	}
	if err := l.init(opts.ReadOnly); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// logBuckets are the buckets every log has.
var logBuckets = [][]byte{bucketEvents, bucketStreams, bucketIndex, bucketLease, bucketMeta}

// newBuckets are the buckets of a log this build creates: logBuckets and
// the links (which a log older than format 4 has not).
var newBuckets = append(slices.Clip(logBuckets), bucketLinks)

// init reads the store id and checks the log's shape; a new file (no
// bucket at all) opened for writing gets its buckets and a store id.
func (l *Log) init(readOnly bool) error {
	fresh := false
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		if fresh, err = checkBuckets(tx); err != nil || fresh {
			return err
		}
		l.storeID, err = checkShape(tx)
		return err
	})
	switch {
	case err != nil:
		return err
	case !fresh && l.wantID != "" && l.storeID != l.wantID:
		return fmt.Errorf("%w: the log belongs to store %s, not %s", ErrStoreIDMismatch, l.storeID, l.wantID)
	case !fresh && readOnly:
		return nil
	case !fresh:
		return l.markFormat()
	case readOnly:
		return corrupt(CheckBucket, 0, "the log has no buckets: it was never initialised")
	}
	return l.create()
}

// checkShape checks an existing log's meta and head; it returns the store id.
func checkShape(tx *bolt.Tx) (string, error) {
	meta := tx.Bucket(bucketMeta)
	id := string(meta.Get(metaStoreID))
	if id == "" {
		return "", corrupt(CheckBucket, 0, "meta has no store id")
	}
	if err := checkFormat(tx); err != nil {
		return "", err
	}
	return id, checkHead(tx)
}

// create gives a new file the log's buckets and a new store id.
func (l *Log) create() error {
	return l.update(func(tx *bolt.Tx) error {
		for _, name := range newBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		l.storeID = cmp.Or(l.wantID, newToken()[:12])
		if err := meta.Put(metaFormat, []byte(strconv.Itoa(LogFormat))); err != nil {
			return err
		}
		if err := meta.Put(metaIndexPruned, indexPruneDone); err != nil { // nothing sealed to prune
			return err
		}
		return meta.Put(metaStoreID, []byte(l.storeID))
	})
}

// checkBuckets reports whether the file has none of the log's buckets (a
// new file); a file with only some of them is damaged.
func checkBuckets(tx *bolt.Tx) (fresh bool, err error) {
	var missing []string
	for _, name := range logBuckets {
		if tx.Bucket(name) == nil {
			missing = append(missing, string(name))
		}
	}
	switch len(missing) {
	case 0:
		return false, nil
	case len(logBuckets):
		return true, nil
	}
	return false, corrupt(CheckBucket, 0, "bucket %v missing", missing)
}

// checkHead compares the head in meta with the last record's key: they are
// written in the same transaction, so they agree, except where a salvage
// recorded the last sequences as lost.
func checkHead(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	raw := meta.Get(metaHead)
	if raw != nil && len(raw) != 8 {
		return corrupt(CheckHead, 0, "head value of %d bytes", len(raw))
	}
	head := getU64(meta, metaHead)
	k, _ := tx.Bucket(bucketEvents).Cursor().Last()
	if k != nil && len(k) != 8 {
		return corrupt(CheckSequence, 0, "record key of %d bytes", len(k))
	}
	var last uint64
	if k != nil {
		last = binary.BigEndian.Uint64(k)
	}
	lost, err := salvageLost(meta)
	switch {
	case err != nil:
		return err
	case last > head:
		return &LogCorruptError{Check: CheckHead, Seq: last, Detail: fmt.Sprintf("record past the head %d", head)}
	case last < head && !lost.ContainsAll(last+1, head):
		return &LogCorruptError{Check: CheckHead, Seq: last + 1, Detail: fmt.Sprintf("the head is %d but the last record is %d", head, last)}
	}
	return nil
}

// checkFormat checks that this build reads the log's format, and that a
// log of format 4 or later has its links.
func checkFormat(tx *bolt.Tx) error {
	f := string(tx.Bucket(bucketMeta).Get(metaFormat))
	if err := knownFormat(f); err != nil {
		return err
	}
	if n, _ := strconv.Atoi(f); n >= linksFormat && tx.Bucket(bucketLinks) == nil {
		return corrupt(CheckBucket, 0, "bucket %s missing from a log of format %d", bucketLinks, n)
	}
	return nil
}

// knownFormat reports whether this build reads log format f.
func knownFormat(f string) error {
	n, err := strconv.Atoi(f)
	if err != nil || n < oldestLogFormat || n > LogFormat {
		return fmt.Errorf("%w: log format %q, this build reads formats %d to %d (a newer build wrote it?)", ErrCorruptRecord, f, oldestLogFormat, LogFormat)
	}
	return nil
}

// markFormat records this build's format in an older log it opened for
// writing, with the links bucket, in one transaction (once; a log already
// at LogFormat is not written).
func (l *Log) markFormat() error {
	var current string
	if err := l.view(func(tx *bolt.Tx) error {
		current = string(tx.Bucket(bucketMeta).Get(metaFormat))
		return nil
	}); err != nil || current == strconv.Itoa(LogFormat) {
		return err
	}
	return l.update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketLinks); err != nil {
			return fmt.Errorf("create bucket %s: %w", bucketLinks, err)
		}
		return tx.Bucket(bucketMeta).Put(metaFormat, []byte(strconv.Itoa(LogFormat)))
	})
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

// update runs fn in a write transaction, guarded (see guard). Errors:
// ErrLogClosed; the log's damage once some was found.
func (l *Log) update(fn func(*bolt.Tx) error) error {
	if l.closed.Load() {
		return ErrLogClosed
	}
	if d := l.damage.Load(); d != nil {
		return d
	}
	return l.guarded("write", func() error { return l.db.Update(fn) })
}

// view runs fn in a read transaction, guarded (see guard).
func (l *Log) view(fn func(*bolt.Tx) error) error {
	if l.closed.Load() {
		return ErrLogClosed
	}
	return l.guarded("read", func() error { return l.db.View(fn) })
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
			out[i], _ = streamHead(b, s)
		}
		return nil
	})
	return out, err
}

// StreamVersion returns the current version of stream (0 if it has no events).
func (l *Log) StreamVersion(stream string) (uint64, error) {
	var v uint64
	err := l.view(func(tx *bolt.Tx) error {
		v, _ = streamHead(tx.Bucket(bucketStreams), stream)
		return nil
	})
	return v, err
}

// metaSalvageLost is the meta key where a salvage records the sequences it
// could not recover (SeqRanges string form); they are never reused.
var metaSalvageLost = []byte("salvage_lost")

// salvageLost reads the sequences a salvage recorded as lost.
func salvageLost(meta *bolt.Bucket) (SeqRanges, error) {
	v := meta.Get(metaSalvageLost)
	if v == nil {
		return nil, nil
	}
	r, err := parseSeqRanges(string(v))
	if err != nil {
		return nil, corrupt(CheckBucket, 0, "meta %s: %v", metaSalvageLost, err)
	}
	return r, nil
}

// appendFill is the fill percent of the events bucket's write handles: its
// keys (8-byte big-endian sequences) only ever grow, so a page split at
// bbolt's default 0.5 would leave every full page half empty for good.
const appendFill = 1.0

// appendBucket is the events bucket of write transaction tx, set to fill
// its pages (bbolt's fill percent is per bucket handle, per transaction).
func appendBucket(tx *bolt.Tx) *bolt.Bucket {
	b := tx.Bucket(bucketEvents)
	b.FillPercent = appendFill
	return b
}
