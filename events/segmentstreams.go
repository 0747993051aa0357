package events

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// The segment streams index (bucketSegStreams) says which sealed
// segments hold a stream's versions, so that reading a stream's sealed
// history (ReadStream, eventAt) reads only those segments rather than
// every one back to its first version. A seal writes it in its
// transaction, next to its manifest entry (remove):
//   - per stream of the segment, key 's' ‖ stream ‖ 0 ‖ its lowest
//     version there (BE) → the segment's first sequence (BE) ‖ its
//     highest version there (BE): a segment holds a contiguous run of
//     each stream's versions, since versions grow with sequences;
//   - per segment, key 'g' ‖ its first sequence (BE) → the number of its
//     streams (BE): the segment is indexed.
//
// A segment without its 'g' key (sealed by an earlier build, copied by a
// salvage, which leaves the bucket behind, or holding too many streams
// for its records to be worth indexing: indexWorth) is read as before. The
// index is not vouched for by the chain, so a read trusts it only as far
// as it checks: the segments it names must give every version asked for,
// each once (segments are vouched for by their digests; a stream has one
// record per version). Anything short of that — an entry damaged or
// missing — and the read scans every segment, as without the index, and
// counts a fallback (SegmentReadStats).
var bucketSegStreams = []byte("segment_streams")

const (
	segStreamsEntry  = 's'
	segStreamsMarker = 'g'
)

// segStreamsFew is how many streams a segment may hold and be indexed
// whatever its records: past it, only a segment holding at least
// segStreamsPer records a stream on average is (indexWorth).
const (
	segStreamsFew = 64
	segStreamsPer = 4
)

// useSegStreams turns the index off for readers (benchmarks compare).
var useSegStreams = true

// streamRuns are a seal's runs of versions by stream: [lowest, highest].
type streamRuns map[string][2]uint64

// note adds version of stream to the runs.
func (r streamRuns) note(stream string, version uint64) {
	run, ok := r[stream]
	if !ok {
		run[0] = version
	}
	run[0], run[1] = min(run[0], version), max(run[1], version)
	r[stream] = run
}

// indexWorth reports whether a segment of records records holding the
// streams of r is worth indexing: the index takes an entry (some 50
// bytes) a stream, and helps a read only when a stream is absent from
// some segments. A segment where nearly every record has its own stream
// (or every stream of a busy store has a record or two) is read in full
// instead, so that the index stays a small share of what a seal frees.
func (r streamRuns) indexWorth(records int) bool {
	return len(r) <= segStreamsFew || len(r)*segStreamsPer <= records
}

// segStreamKey is the index key of stream's run from version low.
func segStreamKey(stream string, low uint64) []byte {
	k := make([]byte, 0, len(stream)+10)
	k = append(k, segStreamsEntry)
	k = append(k, stream...)
	k = append(k, 0)
	return append(k, u64(low)...)
}

// segMarkerKey is the key marking the segment starting at first indexed.
func segMarkerKey(first uint64) []byte {
	return append([]byte{segStreamsMarker}, u64(first)...)
}

// indexSegmentStreams records in tx which streams the segment starting
// at first (of records records) holds and their runs of versions, and
// marks it indexed, when it is worth it.
func indexSegmentStreams(tx *bolt.Tx, first uint64, runs streamRuns, records int) error {
	if !runs.indexWorth(records) {
		return nil
	}
	b, err := tx.CreateBucketIfNotExists(bucketSegStreams)
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketSegStreams, err)
	}
	streams := make([]string, 0, len(runs))
	for s := range runs {
		streams = append(streams, s)
	}
	sort.Strings(streams)
	for _, s := range streams {
		v := append(u64(first), u64(runs[s][1])...)
		if err := b.Put(segStreamKey(s, runs[s][0]), v); err != nil {
			return err
		}
	}
	return b.Put(segMarkerKey(first), u64(uint64(len(runs))))
}

// streamSegments is what the index says of a stream's versions: the
// segments (by first sequence) it names for them and the segments it
// indexes at all; nil when it indexes none.
type streamSegments struct {
	named, indexed map[uint64]bool
}

// skips reports whether a read of the stream may leave out the segment
// starting at first: indexed, and not named.
func (s *streamSegments) skips(first uint64) bool {
	return s != nil && s.indexed[first] && !s.named[first]
}

// readStreamSegments reads in tx the segments the index names for the
// versions from..to-1 of stream (nil: no segment indexed). A malformed
// entry leaves its segment out: the read checks what it found.
func (l *Log) readStreamSegments(tx *bolt.Tx, stream string, from, to uint64) *streamSegments {
	b := tx.Bucket(bucketSegStreams)
	if b == nil || !useSegStreams {
		return nil
	}
	indexed := l.indexedSegments(tx, b)
	if len(indexed) == 0 {
		return nil
	}
	return &streamSegments{named: namedSegments(b, stream, from, to), indexed: indexed}
}

// indexedCache is the set of indexed segments read at a meta sequence:
// a seal marks its segment in the transaction that raises it
// (bumpManifest), so one sequence names one set.
type indexedCache struct {
	key uint64
	set map[uint64]bool
}

// indexedSegments are the first sequences of the segments b marks
// indexed, read again only when a seal changed the manifest since; the
// set is shared, read only.
func (l *Log) indexedSegments(tx *bolt.Tx, b *bolt.Bucket) map[uint64]bool {
	key := tx.Bucket(bucketMeta).Sequence()
	if c := l.segIndexed.Load(); c != nil && c.key == key && !tx.Writable() {
		return c.set
	}
	out := map[uint64]bool{}
	c := b.Cursor()
	for k, _ := c.Seek([]byte{segStreamsMarker}); len(k) == 9 && k[0] == segStreamsMarker; k, _ = c.Next() {
		out[binary.BigEndian.Uint64(k[1:])] = true
	}
	if !tx.Writable() {
		l.segIndexed.Store(&indexedCache{key: key, set: out})
	}
	return out
}

// namedSegments are the first sequences of the segments whose runs of
// stream in b hold a version of from..to-1: from the run starting at or
// below from (the one before from's key) to the last starting below to.
func namedSegments(b *bolt.Bucket, stream string, from, to uint64) map[uint64]bool {
	out := map[uint64]bool{}
	prefix := segStreamKey(stream, 0)[:len(stream)+2]
	c := b.Cursor()
	k, v := c.Seek(segStreamKey(stream, from))
	if !bytes.Equal(k, segStreamKey(stream, from)) {
		k, v = c.Prev()
	}
	if !bytes.HasPrefix(k, prefix) {
		k, v = c.Seek(prefix)
	}
	for ; bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+8 || len(v) != 16 {
			continue
		}
		if binary.BigEndian.Uint64(k[len(prefix):]) >= to {
			break
		}
		if binary.BigEndian.Uint64(v[8:]) >= from {
			out[binary.BigEndian.Uint64(v)] = true
		}
	}
	return out
}

// wholeRun reports whether evs (in version order) are the versions
// from..to-1, each once.
func wholeRun(evs []Event, from, to uint64) bool {
	if uint64(len(evs)) != to-from {
		return false
	}
	for i, e := range evs {
		if e.Version != from+uint64(i) {
			return false
		}
	}
	return true
}

// segReadCounters are a log's counts of segment reads.
type segReadCounters struct {
	loaded, fallbacks atomic.Uint64
}

// SegmentReadStats counts, since the log opened, the sealed segments it
// read (each read of a file: a segment read twice counts twice) and the
// reads of a stream's sealed versions that the segment streams index
// could not serve (an index entry damaged or missing), which read every
// segment instead.
type SegmentReadStats struct {
	Loaded         uint64
	IndexFallbacks uint64
}

// SegmentReadStats returns the log's counts of segment reads.
func (l *Log) SegmentReadStats() SegmentReadStats {
	return SegmentReadStats{Loaded: l.segReads.loaded.Load(), IndexFallbacks: l.segReads.fallbacks.Load()}
}
