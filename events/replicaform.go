package events

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// ReplicaForm returns a stored record in replica form: the fencing token
// left out and everything else as stored (the chain link, the payload at
// its stored schema), so a log built from replica forms has this log's
// hash chain (the chain leaves the token out too). Errors:
// *CorruptRecordError when rec is torn.
func ReplicaForm(rec []byte) ([]byte, error) {
	r, err := parseRaw(0, rec)
	if err != nil {
		return nil, err
	}
	r.h.Token = ""
	return encodeHeader(&r.h, r.payload), nil
}

// RecordSeq returns the sequence a stored or replicated record claims.
// Errors: *CorruptRecordError when rec is torn.
func RecordSeq(rec []byte) (uint64, error) {
	r, err := parseRaw(0, rec)
	return r.h.Seq, err
}

// ReadRecords calls fn with every stored record with seq >= from, in
// order, as stored (checksum included; rec is a copy fn may keep). The
// records are not decoded: their checksums are checked by whoever reads
// them (ReplicaForm, DecodeRecord). It stops at fn's first error and
// returns it. Errors: *LogCorruptError for a sequence hole; ErrLogClosed.
func (l *Log) ReadRecords(from uint64, fn func(seq uint64, rec []byte) error) error {
	from = max(from, 1)
	for {
		var seqs []uint64
		var recs [][]byte
		err := l.view(func(tx *bolt.Tx) error {
			follow, err := newSeqFollower(tx, from)
			if err != nil {
				return err
			}
			c := tx.Bucket(bucketEvents).Cursor()
			for k, v := c.Seek(u64(from)); k != nil && len(recs) < readChunk; k, v = c.Next() {
				if err := follow.next(k); err != nil {
					return err
				}
				seqs, recs = append(seqs, binary.BigEndian.Uint64(k)), append(recs, bytes.Clone(v))
			}
			if len(recs) < readChunk {
				return follow.end()
			}
			return nil
		})
		for i := range recs {
			if ferr := fn(seqs[i], recs[i]); ferr != nil {
				return ferr
			}
		}
		if err != nil || len(recs) < readChunk {
			return err
		}
		from = seqs[len(seqs)-1] + 1
	}
}
