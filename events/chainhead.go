package events

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// chainTail is the chain value after the last record of the log.
type chainTail struct {
	seq  uint64 // the last record's sequence (0: no record)
	hash ChainHash
}

// tail returns the chain value after the log's last record in tx: from
// the cache when it is of that record, else from the record itself when it
// carries a link (c(n) = SHA-256(link ‖ form)), else by walking the whole
// log from the genesis value (a log written before the chain: its first
// chained record's link covers every record before it, or its last record
// is torn). Errors: *LogCorruptError for a key that is not a sequence.
func (l *Log) tail(tx *bolt.Tx) (chainTail, error) {
	b := tx.Bucket(bucketEvents)
	k, v := b.Cursor().Last()
	if k == nil {
		return chainTail{hash: Genesis(l.storeID)}, nil
	}
	if len(k) != 8 {
		return chainTail{}, corrupt(CheckSequence, 0, "record key of %d bytes", len(k))
	}
	seq := binary.BigEndian.Uint64(k)
	if t := l.chainCache.Load(); t != nil && t.seq == seq {
		return *t, nil
	}
	r, err := parseRaw(seq, v)
	if err == nil && !r.h.Link.IsZero() {
		return chainTail{seq: seq, hash: r.chainValue(r.h.Link)}, nil
	}
	return l.walkTail(tx)
}

// walkTail derives the chain value after the last record by walking every
// record (leniently: a salvage hole or a mismatched link takes up the
// chain from the stored link, as verification reports it).
func (l *Log) walkTail(tx *bolt.Tx) (chainTail, error) {
	w := newChainWalker(l.storeID, nil, true)
	lost, err := salvageLost(tx.Bucket(bucketMeta))
	if err != nil {
		return chainTail{}, err
	}
	w.lost = lost
	for {
		n, err := w.chunk(tx.Bucket(bucketEvents), verifyChunk)
		if err != nil {
			return chainTail{}, err
		}
		if n == 0 {
			return chainTail{seq: w.rep.Head, hash: w.rep.HeadHash}, nil
		}
	}
}

// ChainHead returns the log's head for a third party to pin: the last
// record's sequence and the chain value after it, c(seq) (Genesis of the
// store id and 0 for an empty log). It reads the last record only, except
// on a log whose last record was written before the chain or is torn
// (then it walks the log). Errors: ErrLogClosed; *LogCorruptError;
// *CorruptRecordError when the last record is torn (the chain value after
// it cannot be computed, and the one before it is no head to pin).
func (l *Log) ChainHead() (ChainPin, error) {
	var t chainTail
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		if t, err = l.tail(tx); err != nil || t.seq == 0 {
			return err
		}
		_, err = parseRaw(t.seq, tx.Bucket(bucketEvents).Get(u64(t.seq)))
		return err
	})
	if err != nil {
		return ChainPin{}, err
	}
	return ChainPin{Seq: t.seq, Hash: t.hash}, nil
}
