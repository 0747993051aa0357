package events

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// The stream index (bucketIndex) holds an entry for the records in
// log.db only: a seal removes the entries of the records it moves, in
// its transaction, so the hot log does not grow with what is sealed
// (I38). A stream's versions below its first indexed one are sealed;
// readers find them in the segments (sealedStream). A log sealed by an
// earlier build, which kept the entries of sealed records, has them
// removed a chunk at a time by its next seals (pruneSealedIndex); until
// then its entries still lead to the segments by sequence.

// metaIndexPruned is the meta key of the pruning of the entries an
// earlier build kept for sealed records: "next:" and the next index key
// to visit while it goes on, indexPruneDone once the index holds no
// entry of a sealed record.
var metaIndexPruned = []byte("stream_index_pruned")

var (
	indexPruneNext = []byte("next:")
	indexPruneDone = []byte("done")
)

// indexPruneChunk is how many index entries one seal visits while it
// prunes what an earlier build kept (bounded, so that a seal's
// transaction stays small on a long log).
var indexPruneChunk = 100_000

// indexRef is one sealed record's stream index entry.
type indexRef struct {
	key []byte // indexKey(stream, version)
	seq uint64
}

// dropIndex removes the links and the index entries of the records the
// seal moves (an index entry only while it still names the record).
func (p *sealPlan) dropIndex(tx *bolt.Tx) error {
	if err := p.dropLinks(tx); err != nil {
		return err
	}
	b := tx.Bucket(bucketIndex)
	for _, r := range p.refs {
		if v := b.Get(r.key); len(v) == 8 && binary.BigEndian.Uint64(v) == r.seq {
			if err := b.Delete(r.key); err != nil {
				return err
			}
		}
	}
	return nil
}

// pruneSealedIndex removes, up to indexPruneChunk entries visited, the
// index entries of records no longer in log.db below below (the first
// sequence after the segments), which a build before this one kept; it
// records where it got to in meta.
func pruneSealedIndex(tx *bolt.Tx, below uint64) error {
	meta := tx.Bucket(bucketMeta)
	mark := meta.Get(metaIndexPruned)
	if bytes.Equal(mark, indexPruneDone) {
		return nil
	}
	from := bytes.TrimPrefix(mark, indexPruneNext)
	stale, next := staleIndexEntries(tx, from, below)
	b := tx.Bucket(bucketIndex)
	for _, k := range stale {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	if next == nil {
		return meta.Put(metaIndexPruned, indexPruneDone)
	}
	return meta.Put(metaIndexPruned, append(slices.Clip(indexPruneNext), next...))
}

// staleIndexEntries lists the index keys from from (at most
// indexPruneChunk visited) whose record is sealed: its sequence is below
// below and log.db does not hold it. next is the key to go on from (nil:
// the end of the index).
func staleIndexEntries(tx *bolt.Tx, from []byte, below uint64) (stale [][]byte, next []byte) {
	events := tx.Bucket(bucketEvents)
	c := tx.Bucket(bucketIndex).Cursor()
	n := 0
	k, v := c.Seek(from)
	for ; k != nil && n < indexPruneChunk; k, v = c.Next() {
		n++
		if len(v) == 8 && binary.BigEndian.Uint64(v) < below && events.Get(v) == nil {
			stale = append(stale, slices.Clone(k))
		}
	}
	if k == nil {
		return stale, nil
	}
	return stale, slices.Clone(k)
}

// indexedStream is what the links and the stream index hold of a stream
// from a version: the events log.db holds, decoded, and the sequences of
// those it does not (sealed, indexed by an earlier build) as events
// holding only their Seq, at the indexes pending. first is the first
// version held (the stream's version + 1 when none is); the versions
// below it are sealed, in segments starting before firstSeq (0: any).
type indexedStream struct {
	out             []Event
	pending         []int
	first, firstSeq uint64
}

// indexedSince reads the versions of stream from from in tx: through the
// links, then, below the first version linked, the stream index.
func (l *Log) indexedSince(tx *bolt.Tx, stream string, from uint64) (indexedStream, error) {
	version, last := streamHead(tx.Bucket(bucketStreams), stream)
	w, err := walkLinks(tx, from, version, last)
	if err != nil {
		return indexedStream{}, err
	}
	r := indexedStream{first: w.next + 1}
	switch {
	case w.next < from:
	case w.seq != 0: // sealed from version next down
		r.firstSeq = w.seq + 1
	default:
		if r, err = l.indexedOld(tx, stream, from, w.next); err != nil {
			return r, err
		}
	}
	for i := len(w.recs) - 1; i >= 0; i-- {
		e, err := l.decode(u64(w.recs[i].seq), w.recs[i].raw, nil)
		if err != nil {
			return r, err
		}
		if len(r.out) == 0 && r.firstSeq == 0 {
			r.first, r.firstSeq = e.Version, e.Seq
		}
		r.out = append(r.out, e)
	}
	return r, nil
}

// indexedOld reads the versions from from to upTo of stream from the
// stream index (where a log appended before format 4 has them).
func (l *Log) indexedOld(tx *bolt.Tx, stream string, from, upTo uint64) (indexedStream, error) {
	r := indexedStream{first: upTo + 1}
	prefix := append([]byte(stream), 0)
	events := tx.Bucket(bucketEvents)
	c := tx.Bucket(bucketIndex).Cursor()
	for k, v := c.Seek(indexKey(stream, from)); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8; k, v = c.Next() {
		if binary.BigEndian.Uint64(k[len(prefix):]) > upTo {
			break
		}
		if len(r.out) == 0 && len(v) == 8 {
			r.first, r.firstSeq = binary.BigEndian.Uint64(k[len(prefix):]), binary.BigEndian.Uint64(v)
		}
		raw := events.Get(v)
		if raw == nil && len(v) == 8 { // sealed: read from its segment after this transaction
			r.pending = append(r.pending, len(r.out))
			r.out = append(r.out, Event{Seq: binary.BigEndian.Uint64(v)})
			continue
		}
		e, err := l.decode(v, raw, nil)
		if err != nil {
			return r, err
		}
		r.out = append(r.out, e)
	}
	return r, nil
}

// sealedStream reads the events of stream with from <= version < to from
// the sealed segments, newest segment first, skipping the segments
// starting at or after sequence before (0: none skipped) and stopping at
// the one holding version from. It reads only the segments the segment
// streams index names (and those it does not index), and every segment
// when what those hold is not the whole run asked for (segmentstreams.go).
// It returns them in version order. Errors: *SegmentError;
// ErrSegmentStoreUnavailable.
func (l *Log) sealedStream(stream string, from, to, before uint64) ([]Event, error) {
	segs, err := l.segments()
	if err != nil || from >= to {
		return nil, err
	}
	var idx *streamSegments
	if err := l.view(func(tx *bolt.Tx) error { idx = l.readStreamSegments(tx, stream, from, to); return nil }); err != nil {
		return nil, err
	}
	if idx != nil {
		out, err := l.scanSealedStream(segs, idx, stream, from, to, before)
		if err != nil || wholeRun(out, from, to) {
			return out, err
		}
		l.segReads.fallbacks.Add(1)
	}
	return l.scanSealedStream(segs, nil, stream, from, to, before)
}

// scanSealedStream is sealedStream over segs, leaving out the segments
// idx skips (nil: none).
func (l *Log) scanSealedStream(segs []SegmentSealed, idx *streamSegments, stream string, from, to, before uint64) ([]Event, error) {
	var out []Event
	for i := len(segs) - 1; i >= 0; i-- {
		if before != 0 && segs[i].First >= before || idx.skips(segs[i].First) {
			continue
		}
		done, err := l.sealedStreamIn(segs[i], stream, from, to, &out)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	slices.Reverse(out)
	return out, nil
}

// sealedStreamIn appends the events of stream with from <= version < to
// in segment s to out, newest first; done is true once version from (or
// an older one) was found.
func (l *Log) sealedStreamIn(s SegmentSealed, stream string, from, to uint64, out *[]Event) (done bool, err error) {
	recs, err := l.loadSegment(s)
	if err != nil {
		return false, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		rec, err := parseRaw(recs[i].seq, recs[i].raw)
		if err != nil {
			return false, err
		}
		if rec.h.Stream != stream || rec.h.Version >= to {
			continue
		}
		if rec.h.Version < from {
			return true, nil
		}
		e, err := decodeRecord(recs[i].seq, recs[i].raw, nil)
		if err != nil {
			return false, err
		}
		*out = append(*out, e)
		if rec.h.Version == from {
			return true, nil
		}
	}
	return false, nil
}

// pruneIndex removes every index entry an earlier build kept for a
// sealed record, a chunk a transaction (Compact, with the file lock).
func (l *Log) pruneIndex(ctx context.Context) error {
	var done bool
	err := l.view(func(tx *bolt.Tx) error {
		done = bytes.Equal(tx.Bucket(bucketMeta).Get(metaIndexPruned), indexPruneDone)
		return nil
	})
	for ; !done && err == nil; err = ctx.Err() {
		err := l.update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			below := uint64(1)
			last, ok, err := lastSegment(tx)
			if ok {
				below = last.Last + 1
			}
			if err == nil {
				err = pruneSealedIndex(tx, below)
			}
			done = bytes.Equal(meta.Get(metaIndexPruned), indexPruneDone)
			return err
		})
		if err != nil {
			return err
		}
	}
	return err
}
