package events

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// readChunk is how many events one read transaction collects before the
// callback runs outside it, so a slow consumer never pins a bbolt read
// transaction (which would stall file growth for the writer).
const readChunk = 512

// ReadFrom calls fn for every event with seq >= from, in order, typed and
// upcast to their newest schema. It stops at the first error fn returns
// and returns it. Errors: *CorruptRecordError naming the bad sequence;
// *PayloadError for an event this build's catalogue cannot decode.
func (l *Log) ReadFrom(from uint64, fn func(Event) error) error {
	if from == 0 {
		from = 1
	}
	in, values := newInterner(), NewValueResolver()
	for {
		next, err := l.readSealed(from, in, values, fn)
		if err != nil {
			return err
		}
		from, err = l.readLive(next, in, values, fn)
		if !errors.Is(err, errSealedMeanwhile) {
			return err
		}
	}
}

// errSealedMeanwhile: a seal moved records a read was about to read out
// of log.db; the read goes on from the segments.
var errSealedMeanwhile = errors.New("sealed meanwhile")

// readLive delivers the events of log.db with seq >= from (see ReadFrom);
// with errSealedMeanwhile it returns where to go on from.
func (l *Log) readLive(from uint64, in *interner, values *ValueResolver, fn func(Event) error) (uint64, error) {
	for {
		batch, err := l.readChunk(from, in)
		for _, e := range batch { // the events before a bad record are delivered first
			if rerr := values.resolve(&e, l.eventAt); rerr != nil {
				return from, rerr
			}
			if ferr := fn(e); ferr != nil {
				return from, ferr
			}
		}
		if len(batch) > 0 {
			from = batch[len(batch)-1].Seq + 1
		}
		if err != nil || len(batch) < readChunk {
			return from, err
		}
	}
}

// readChunk decodes up to readChunk events from from, stopping at the first
// record that fails to decode: it returns the events before it and its error.
// Sequences must follow each other from from (to the head when the chunk
// ends the log), except where a salvage recorded them lost: a hole, or a
// key that is not a sequence, is *LogCorruptError (a damaged page can make
// bbolt return garbage rather than panic).
func (l *Log) readChunk(from uint64, in *interner) ([]Event, error) {
	var out []Event
	err := l.view(func(tx *bolt.Tx) error {
		seqs, err := newSeqFollower(tx, from)
		if err != nil {
			return err
		}
		if segs, err := l.manifestIn(tx); err != nil || sealedBelow(segs) > from {
			return cmp.Or(err, errSealedMeanwhile)
		}
		c := tx.Bucket(bucketEvents).Cursor()
		for k, v := c.Seek(u64(from)); k != nil && len(out) < readChunk; k, v = c.Next() {
			if err := seqs.next(k); err != nil {
				return err
			}
			e, err := l.decode(k, v, in)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		if len(out) < readChunk {
			return seqs.end()
		}
		return nil
	})
	return out, err
}

// seqFollower checks that record keys follow each other up to the head.
type seqFollower struct {
	want, head uint64
	lost       SeqRanges
}

func newSeqFollower(tx *bolt.Tx, from uint64) (*seqFollower, error) {
	meta := tx.Bucket(bucketMeta)
	lost, err := salvageLost(meta)
	return &seqFollower{want: from, head: getU64(meta, metaHead), lost: lost}, err
}

func (f *seqFollower) next(k []byte) error {
	if len(k) != 8 {
		return &LogCorruptError{Check: CheckSequence, Seq: f.want, Detail: fmt.Sprintf("a key of %d bytes where seq %d belongs", len(k), f.want)}
	}
	seq := binary.BigEndian.Uint64(k)
	if seq < f.want || seq > f.head || seq > f.want && !f.lost.ContainsAll(f.want, seq-1) {
		return &LogCorruptError{Check: CheckSequence, Seq: f.want, Detail: fmt.Sprintf("seq %d found where seq %d belongs (head %d)", seq, f.want, f.head)}
	}
	f.want = seq + 1
	return nil
}

// end checks that no record is missing between the last one read and the head.
func (f *seqFollower) end() error {
	if f.want <= f.head && !f.lost.ContainsAll(f.want, f.head) {
		return &LogCorruptError{Check: CheckSequence, Seq: f.want, Detail: fmt.Sprintf("no record for seq %d (head %d)", f.want, f.head)}
	}
	return nil
}

func (l *Log) decode(k, v []byte, in *interner) (Event, error) {
	return decodeRecord(binary.BigEndian.Uint64(k), v, in)
}

// ReadStream calls fn for the events of stream with version >= from, in
// version order: the versions log.db holds through the stream index, the
// sealed ones (below the first indexed version) from the segments,
// newest segment first, only those the segment streams index names for
// the stream where it indexes them (segmentstreams.go). Errors as
// ReadFrom; *SegmentError for a segment it needed and could not read.
func (l *Log) ReadStream(stream string, from uint64, fn func(Event) error) error {
	from = max(from, 1)
	var ix indexedStream
	err := l.view(func(tx *bolt.Tx) (err error) {
		ix, err = l.indexedSince(tx, stream, from)
		return err
	})
	if err == nil {
		err = (&sealedLookup{l: l}).fill(ix.out, ix.pending)
	}
	var sealed []Event
	if err == nil && from < ix.first { // below the first indexed version: sealed
		sealed, err = l.sealedStream(stream, from, ix.first, ix.firstSeq)
	}
	if err != nil {
		return err
	}
	values := NewValueResolver()
	for _, e := range append(sealed, ix.out...) {
		if err := values.resolve(&e, l.eventAt); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// VerifyChecksums reads every record and checks its checksum and shape.
// It returns how many records were verified and the first corruption found
// (*CorruptRecordError, or *LogCorruptError when bbolt panics), continuing
// past none. VerifyLogFile checks the whole file and goes on past damage.
func (l *Log) VerifyChecksums() (uint64, error) {
	var n uint64
	err := l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEvents).ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return &CorruptRecordError{Reason: "bad key length"}
			}
			if _, err := DecodeRecord(binary.BigEndian.Uint64(k), v); err != nil {
				return err
			}
			n++
			return nil
		})
	})
	return n, err
}
