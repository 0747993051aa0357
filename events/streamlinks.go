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
// From log format 6 a stream's first record (version 1) gets no entry
// (nothing precedes it, so its entry would say only "version 1"; most
// streams, an entity's or a row's outbox, have one record or few), and
// the streams bucket's values are varints (headValue).
//
// A reader walks a stream from its last record back through the links.
// The walk ends where the versions below are elsewhere:
//   - a link naming sequence 0 above version 1: the versions below were
//     appended before the log was format 4, and the stream index holds
//     them (a log upgraded in place keeps its index and reads both);
//   - a sequence without an entry: a seal moved that record (and with it
//     every older one of the stream) to a segment, removing its entry;
//     except version 1 while log.db holds its record (format 6, above).
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
// bucket: 8 bytes (version), 16 (version ‖ sequence, format 4) or, from
// format 6, the compact form (headValue).
func streamHead(b *bolt.Bucket, stream string) (version, last uint64) {
	version, last, _ = parseHead(b.Get([]byte(stream)))
	return version, last
}

// parseHead parses a streams bucket value; ok is false for one of no
// known form (shorter than any, or compact varints that do not fill it).
func parseHead(v []byte) (version, last uint64, ok bool) {
	switch len(v) {
	case 0:
		return 0, 0, false
	case 8:
		return binary.BigEndian.Uint64(v), 0, true
	case 16:
		return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), true
	}
	version, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, 0, false
	}
	last, m := binary.Uvarint(v[n:])
	if m <= 0 || n+m != len(v) {
		return 0, 0, false
	}
	return version, last, true
}

// headValue is a streams bucket value of format 6: the version and the
// sequence of the last record as uvarints (3 to 5 bytes for most
// streams), or the 16-byte form of format 4 when the varints would take
// 8 or 16 bytes (the lengths of the fixed forms).
func headValue(version, last uint64) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 2*binary.MaxVarintLen64), version)
	b = binary.AppendUvarint(b, last)
	if len(b) != 8 && len(b) != 16 {
		return b
	}
	b = binary.BigEndian.AppendUint64(b[:0], version)
	return binary.BigEndian.AppendUint64(b, last)
}

// linksBucket is the stream links bucket of tx, for appending at its end.
func linksBucket(tx *bolt.Tx) *bolt.Bucket {
	b := tx.Bucket(bucketLinks)
	b.FillPercent = appendFill
	return b
}

// putLink records that seq is version of its stream, whose previous
// record is prev (0: none, or in the stream index). From format 6 the
// first record of a stream (version 1, prev 0) has no entry: walkLinks
// knows it from the record's presence (impliedFirst).
func putLink(tx *bolt.Tx, seq, prev, version uint64) error {
	if version == 1 && prev == 0 {
		return nil
	}
	var v [16]byte
	binary.BigEndian.PutUint64(v[:], prev)
	binary.BigEndian.PutUint64(v[8:], version)
	return linksBucket(tx).Put(u64(seq), v[:])
}

// impliedFirst is the link of a stream's first record, which a log of
// format 6 does not store: no previous record, version 1.
var impliedFirst = func() []byte {
	var v [16]byte
	binary.BigEndian.PutUint64(v[8:], 1)
	return v[:]
}()

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
		v, raw := links.Get(u64(w.seq)), events.Get(u64(w.seq))
		if v == nil && w.next == 1 && raw != nil {
			v = impliedFirst
		}
		if v == nil {
			return w, nil // sealed
		}
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
