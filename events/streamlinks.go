package events

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// The stream links (bucketLinks, log format 4) index a stream's records
// in the order the log grows: each record appended has an entry under
// its sequence naming the sequence of its stream's previous record and
// its version, and the streams bucket holds each stream's version and
// the sequence of its last record. A commit adds its entries at the end
// of the bucket, so it writes a page or two of it however long the log
// (the stream index of formats 1 to 3, keyed by stream and version,
// takes an entry inside each stream's range: a page per stream once the
// index spans more pages than a commit has streams).
//
// A reader walks a stream from its last record back through the links.
// The walk ends where the versions below are elsewhere:
//   - a link naming sequence 0 above version 1: the versions below were
//     appended before the log was format 4, and the stream index holds
//     them (a log upgraded in place keeps its index and reads both);
//   - a sequence without an entry: a seal moved that record (and with it
//     every older one of the stream) to a segment, removing its entry.
//
// A salvage writes the records it copies into the stream index, so the
// same two layouts read a salvaged log.

// bucketLinks is the stream links bucket: seq (BE) → the seq of the
// stream's previous record (BE, 0: none linked) ‖ version (BE).
var bucketLinks = []byte("stream_links")

// linksFormat is the first log format that has the stream links.
const linksFormat = 4

// streamHead reads a stream's version and the sequence of its last
// record (0 when it was appended before the links) from the streams
// bucket: 8 bytes (version) or 16 (version ‖ sequence).
func streamHead(b *bolt.Bucket, stream string) (version, last uint64) {
	v := b.Get([]byte(stream))
	if len(v) < 8 {
		return 0, 0
	}
	version = binary.BigEndian.Uint64(v)
	if len(v) == 16 {
		last = binary.BigEndian.Uint64(v[8:])
	}
	return version, last
}

// headValue is a streams bucket value of format 4.
func headValue(version, last uint64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], version)
	binary.BigEndian.PutUint64(b[8:], last)
	return b[:]
}

// linksBucket is the stream links bucket of tx, for appending at its end.
func linksBucket(tx *bolt.Tx) *bolt.Bucket {
	b := tx.Bucket(bucketLinks)
	b.FillPercent = appendFill
	return b
}

// putLink records that seq is version of its stream, whose previous
// record is prev (0: none, or in the stream index).
func putLink(tx *bolt.Tx, seq, prev, version uint64) error {
	var v [16]byte
	binary.BigEndian.PutUint64(v[:], prev)
	binary.BigEndian.PutUint64(v[8:], version)
	return linksBucket(tx).Put(u64(seq), v[:])
}

// linkedRecord is a record found through the links.
type linkedRecord struct {
	seq uint64
	raw []byte
}

// linkWalk is what the links hold of a stream down to a version: the
// records, newest first, and where the walk ended. next is the version
// below the records walked (0: none below); seq its sequence when a link
// named it and it has no entry (sealed), 0 when the stream index holds
// it (or next is 0).
type linkWalk struct {
	recs      []linkedRecord
	next, seq uint64
}

// walkLinks walks the links of the stream whose version is version and
// last record last, newest first, down to version from.
// Errors: *LogCorruptError for a link that does not fit its stream.
func walkLinks(tx *bolt.Tx, from, version, last uint64) (linkWalk, error) {
	w := linkWalk{next: version, seq: last}
	links, events := tx.Bucket(bucketLinks), tx.Bucket(bucketEvents)
	for w.seq != 0 && w.next >= from && links != nil {
		v := links.Get(u64(w.seq))
		if v == nil {
			return w, nil // sealed
		}
		raw := events.Get(u64(w.seq))
		if len(v) != 16 || binary.BigEndian.Uint64(v[8:]) != w.next || raw == nil {
			return w, corrupt(CheckBucket, w.seq, "stream link %x does not name the record's version %d", v, w.next)
		}
		w.recs = append(w.recs, linkedRecord{seq: w.seq, raw: raw})
		w.next, w.seq = w.next-1, binary.BigEndian.Uint64(v)
	}
	if w.next == 0 {
		w.seq = 0
	}
	return w, nil
}

// dropLinks removes the links of the records a seal moves.
func (p *sealPlan) dropLinks(tx *bolt.Tx) error {
	b := tx.Bucket(bucketLinks)
	if b == nil {
		return nil
	}
	for _, r := range p.refs {
		if err := b.Delete(u64(r.seq)); err != nil {
			return err
		}
	}
	return nil
}
