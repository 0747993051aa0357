package events

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// Unit is one atomic unit of work in an append: all its events commit or
// none do. Commit is its id ("" = "c<first seq>").
type Unit struct {
	Commit  string
	Streams []StreamAppend
}

// UnitResult reports the outcome of one Unit of an Append call.
type UnitResult struct {
	First, Last uint64 // sequences assigned (0,0 when Err != nil or no events)
	Commit      string
	// Err is a *VersionConflictError (ErrVersionConflict) or ErrInvalidEvent
	// for this unit only; other units of the same call are unaffected.
	Err error
}

// Append commits units in ONE bbolt transaction (one fsync), after checking
// inside that transaction that f is the live lease for its role (I01) at the
// log clock's now. A unit whose expected versions do not match, or whose
// events are invalid, is skipped and reported in its UnitResult; the others
// commit. Events are stamped with seq, version, epoch, token, commit and, when
// At is zero, now.
// Errors (whole call, nothing committed): ErrStaleWriterFence,
// ErrLeaseExpired, ErrLogClosed, *LogCorruptError (bbolt panicked on a
// damaged page, now or earlier), bbolt I/O errors.
func (l *Log) Append(f Fence, units ...Unit) ([]UnitResult, error) {
	results, wait, err := l.AppendAsync(f, units...)
	if err == nil {
		err = wait()
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

// AppendAsync is Append with the transaction's commit (its writes and
// fsync) running on another goroutine, so the caller can prepare work that
// depends on the stamped events meanwhile. It returns once every event of
// units is stamped and the results are known, with wait, which returns the
// commit's outcome: nothing is durable, and results mean nothing, until
// wait returns nil. Call wait exactly once; appends by others block until
// the commit ends. Errors (nothing committed) as Append; wait: bbolt I/O
// errors.
func (l *Log) AppendAsync(f Fence, units ...Unit) ([]UnitResult, func() error, error) {
	return l.appendAsync(f, units, nil)
}

// appendAsync is AppendAsync; extra, when set, runs in the transaction
// after the units are staged (a seal's removals), and fails it with its
// error.
func (l *Log) appendAsync(f Fence, units []Unit, extra func(*bolt.Tx) error) ([]UnitResult, func() error, error) {
	if l.closed.Load() {
		return nil, nil, ErrLogClosed
	}
	if d := l.damage.Load(); d != nil {
		return nil, nil, d
	}
	if err := l.CheckFile(); err != nil {
		return nil, nil, err
	}
	bp := encodeBufs.Get().(*[]byte)
	enc, buf := encodeUnits(units, (*bp)[:0])
	defer releaseEncodeBuf(bp, buf) // stage copies the payloads into the records
	size := encodedSize(enc)
	var tx *bolt.Tx
	err := l.guarded("append", func() (err error) { tx, err = l.db.Begin(true); return err })
	if err != nil {
		return nil, nil, err
	}
	committing := false
	defer func() {
		if !committing {
			_ = guard("rollback", tx.Rollback) // a failed or panicking stage
		}
	}()
	var results []UnitResult
	var a *appender
	err = l.guarded("append", func() (err error) {
		if a, results, err = l.stage(tx, f, units, enc); err == nil && extra != nil {
			err = extra(tx)
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	committing = true
	done := make(chan error, 1)
	tail := a.tail()
	go func() {
		err := l.commit(tx)
		if err == nil {
			l.chainCache.Store(&tail)
		}
		done <- err
	}()
	return results, func() error { return l.committed(<-done, size) }, nil
}

// commit commits tx; when bbolt panics inside the commit (a damaged page
// or freelist) the transaction is rolled back and the error is
// *LogCorruptError: nothing was committed.
func (l *Log) commit(tx *bolt.Tx) error {
	err := l.guarded("commit", tx.Commit)
	if errors.Is(err, ErrLogCorrupt) {
		_ = guard("rollback", tx.Rollback)
	}
	return err
}

// stage checks the fence and stamps, links and puts every unit inside tx.
func (l *Log) stage(tx *bolt.Tx, f Fence, units []Unit, enc []encodedUnit) (*appender, []UnitResult, error) {
	results := make([]UnitResult, len(units))
	now := l.clock.Now()
	if err := fenceTx(tx, f, now); err != nil {
		return nil, nil, err
	}
	a := newAppender(tx, f, now, l.repl != nil)
	if err := a.startChain(l); err != nil {
		return nil, nil, err
	}
	for i := range units {
		var err error
		if results[i], err = a.unit(&units[i], enc[i]); err != nil {
			return nil, nil, err
		}
	}
	if err := failpoint.Err(failpoint.LogBeforeCommit); err != nil {
		return nil, nil, err
	}
	if err := l.replicate(a); err != nil {
		return nil, nil, err
	}
	return a, results, a.finish()
}

// committed finishes an append whose commit returned err.
func (l *Log) committed(err error, size int) error {
	if err != nil {
		return err
	}
	if err := failpoint.Err(failpoint.LogAfterCommit); err != nil {
		return err // the commit is in the file, the caller is told it failed: an uncertain commit
	}
	_ = l.noteAppended(size) // best effort: a failed release only leaves pages resident
	return nil
}

// encodedUnit holds a unit's canonical payloads, or why it cannot commit.
type encodedUnit struct {
	payloads [][]byte
	err      error
}

// encodeBufs holds the buffers appends encode their payloads into.
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooledEncodeBuf bounds the buffers kept for reuse (a huge unit's
// buffer is left to the collector).
const maxPooledEncodeBuf = 4 << 20

func releaseEncodeBuf(bp *[]byte, buf []byte) {
	if cap(buf) <= maxPooledEncodeBuf {
		*bp = buf[:0]
		encodeBufs.Put(bp)
	}
}

// encodeUnits canonical-encodes every payload outside the transaction, all
// into buf, grown as needed (each payload is a capped slice of it, valid
// until buf is reused). It returns the payloads and buf.
func encodeUnits(units []Unit, buf []byte) ([]encodedUnit, []byte) {
	out := make([]encodedUnit, len(units))
	for i, u := range units {
		out[i], buf = encodeUnit(u, buf)
	}
	return out, buf
}

func encodeUnit(u Unit, buf []byte) (encodedUnit, []byte) {
	var eu encodedUnit
	for _, s := range u.Streams {
		for j := range s.Events {
			start := len(buf)
			b, err := encodeEvent(buf, s.Stream, versionOf(s, j), &s.Events[j])
			if err != nil {
				return encodedUnit{err: err}, buf[:start]
			}
			buf = b
			eu.payloads = append(eu.payloads, buf[start:len(buf):len(buf)])
		}
	}
	return eu, buf
}

// versionOf is the stream version event j of s gets when its unit
// commits, or 0 when the append does not check s's version (unknown).
func versionOf(s StreamAppend, j int) uint64 {
	if s.ExpectedVersion == AnyVersion {
		return 0
	}
	return s.ExpectedVersion + uint64(j) + 1
}

// encodeEvent appends the canonical payload of e, the event at version of
// stream (0 = not known yet), to dst.
func encodeEvent(dst []byte, stream string, version uint64, e *Event) ([]byte, error) {
	if stream == "" || strings.IndexByte(stream, 0) >= 0 {
		return nil, fmt.Errorf("%w: a stream is required and has no NUL byte", ErrInvalidEvent)
	}
	if p, ok := e.Payload.(EntityPersisted); ok {
		return appendPersisted(dst, stream, version, p)
	}
	if _, ok := e.Payload.(compactor); ok {
		return encodeCompacted(dst, stream, version, e)
	}
	b, encErr, valErr := appendPayload(dst, e.Payload)
	if encErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidEvent, encErr)
	}
	if valErr != nil {
		return nil, fmt.Errorf("%w: %s payload: %w", ErrInvalidEvent, e.Type(), valErr)
	}
	return b, nil
}

// encodeCompacted encodes a payload whose record leaves out the keys its
// stream and version give (see compactRecord) through its canonical map.
func encodeCompacted(dst []byte, stream string, version uint64, e *Event) ([]byte, error) {
	m, err := EncodePayload(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	compactRecord(e.Payload, stream, version, m)
	b, err := AppendCanonical(dst, m)
	if err != nil {
		return nil, fmt.Errorf("%w: %s payload: %w", ErrInvalidEvent, e.Type(), err)
	}
	return b, nil
}

// appendPersisted appends the record payload of an entity.persisted
// straight from its struct, leaving out what its stream and version give:
// byte for byte what encodeCompacted gives (every commit encodes one per
// entity; the map, its sort and its boxed values were most of the cost).
func appendPersisted(dst []byte, stream string, version uint64, p EntityPersisted) ([]byte, error) {
	b, err := catalogue[TypeEntityPersisted].plan.appendCanonicalSkip(dst, reflect.ValueOf(p), p.leftOut(stream, version).skips)
	if err != nil {
		return nil, fmt.Errorf("%w: %s payload: %w", ErrInvalidEvent, p.EventType(), err)
	}
	return b, nil
}

// fenceTx is the I01 guard, evaluated inside the appending transaction.
func fenceTx(tx *bolt.Tx, f Fence, now time.Time) error {
	l, ok, err := getLease(tx, f.Role)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: role %q has no lease", ErrStaleWriterFence, f.Role)
	}
	return l.checkFence(f, now)
}

// appender stamps and stores events inside one write transaction. Stream
// versions are cached and written once per stream in finish.
type appender struct {
	tx       *bolt.Tx
	f        Fence
	now      time.Time
	head     uint64
	versions map[string]uint64 // stream → version as of this transaction
	stored   map[string]uint64 // stream → version in the file (streams read)
	lasts    map[string]uint64 // stream → seq of its last linked record as of this transaction (0: none)
	// replicate: collect each record's replica form in replica.
	replicate bool
	replica   [][]byte
	// chain is the chain value after the last record put (c(last)).
	chain     ChainHash
	chainLast uint64
	unchained bool // see Log.unchained
}

// startChain reads the chain value after the log's last record.
func (a *appender) startChain(l *Log) error {
	if a.unchained = l.unchained; a.unchained {
		return nil
	}
	t, err := l.tail(a.tx)
	a.chain, a.chainLast = t.hash, t.seq
	return err
}

// tail is the chain value after the last record put.
func (a *appender) tail() chainTail { return chainTail{seq: a.chainLast, hash: a.chain} }

func newAppender(tx *bolt.Tx, f Fence, now time.Time, replicate bool) *appender {
	return &appender{tx: tx, f: f, now: now, head: getU64(tx.Bucket(bucketMeta), metaHead), versions: map[string]uint64{},
		stored: map[string]uint64{}, lasts: map[string]uint64{}, replicate: replicate}
}

func (a *appender) version(stream string) uint64 {
	v, ok := a.versions[stream]
	if !ok {
		v, a.lasts[stream] = streamHead(a.tx.Bucket(bucketStreams), stream)
		a.versions[stream], a.stored[stream] = v, v
	}
	return v
}

// finish writes the stream versions that moved and the head (a stream
// only checked, e.g. an effect's under a batch settle, is left as it is).
func (a *appender) finish() error {
	streams := a.tx.Bucket(bucketStreams)
	for s, v := range a.versions {
		if stored, ok := a.stored[s]; ok && stored == v {
			continue
		}
		if err := streams.Put([]byte(s), headValue(v, a.lasts[s])); err != nil {
			return err
		}
	}
	return a.tx.Bucket(bucketMeta).Put(metaHead, u64(a.head))
}

// unit appends one unit. A unit-level failure is reported in the result; a
// returned error is fatal to the whole transaction.
func (a *appender) unit(u *Unit, enc encodedUnit) (UnitResult, error) {
	if enc.err != nil {
		return UnitResult{Err: enc.err}, nil
	}
	if err := a.checkVersions(u); err != nil {
		return UnitResult{Err: err}, nil
	}
	res := UnitResult{Commit: u.Commit}
	if res.Commit == "" {
		res.Commit = "c" + strconv.FormatUint(a.head+1, 10)
	}
	i := 0
	for _, s := range u.Streams {
		for j := range s.Events {
			if err := a.put(s.Stream, &s.Events[j], res.Commit, enc.payloads[i]); err != nil {
				return UnitResult{}, err
			}
			i++
			res.Last = a.head
			if res.First == 0 {
				res.First = a.head
			}
		}
	}
	return res, nil
}

// checkVersions compares every stream's expected version with the version
// current in this transaction (including earlier units of the same call).
func (a *appender) checkVersions(u *Unit) error {
	seen := map[string]uint64{}
	for _, s := range u.Streams {
		cur, ok := seen[s.Stream]
		if !ok {
			cur = a.version(s.Stream)
		}
		if s.ExpectedVersion != AnyVersion && s.ExpectedVersion != cur {
			return &VersionConflictError{Stream: s.Stream, Expected: s.ExpectedVersion, Actual: cur}
		}
		seen[s.Stream] = cur + uint64(len(s.Events))
	}
	return nil
}

func (a *appender) put(stream string, e *Event, commit string, payload []byte) error {
	a.head++
	e.Seq, e.Stream, e.Commit = a.head, stream, commit
	e.Version = a.version(stream) + 1
	a.versions[stream] = e.Version
	e.Epoch, e.Token = a.f.Epoch, a.f.Token
	if e.At.IsZero() {
		e.At = a.now
	}
	e.Link = a.chain
	rec := encodeRecord(e, payload)
	if err := appendBucket(a.tx).Put(u64(e.Seq), rec); err != nil {
		return err
	}
	if err := a.link(e.Seq, rec); err != nil {
		return err
	}
	if a.replicate {
		bare := *e
		bare.Token = ""
		a.replica = append(a.replica, encodeRecord(&bare, payload))
	}
	return a.linkStream(stream, e)
}

// linkStream records e, just put, as its stream's last record.
func (a *appender) linkStream(stream string, e *Event) error {
	prev := a.lasts[stream]
	a.lasts[stream] = e.Seq
	return putLink(a.tx, e.Seq, prev, e.Version)
}

// link advances the chain over record seq, just put (stored bytes rec).
func (a *appender) link(seq uint64, rec []byte) error {
	if a.unchained {
		return nil
	}
	next, err := chainNext(a.chain, rec[2+linkLen:len(rec)-checksumLen])
	a.chain, a.chainLast = next, seq
	return err
}
