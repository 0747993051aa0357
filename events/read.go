package events

import (
	"bytes"
	"encoding/binary"

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
	in := newInterner()
	for {
		batch, err := l.readChunk(from, in)
		for _, e := range batch { // the events before a bad record are delivered first
			if ferr := fn(e); ferr != nil {
				return ferr
			}
		}
		if err != nil || len(batch) < readChunk {
			return err
		}
		from = batch[len(batch)-1].Seq + 1
	}
}

// readChunk decodes up to readChunk events from from, stopping at the first
// record that fails to decode: it returns the events before it and its error.
func (l *Log) readChunk(from uint64, in *interner) ([]Event, error) {
	var out []Event
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEvents).Cursor()
		for k, v := c.Seek(u64(from)); k != nil && len(out) < readChunk; k, v = c.Next() {
			e, err := l.decode(k, v, in)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

func (l *Log) decode(k, v []byte, in *interner) (Event, error) {
	return decodeRecord(binary.BigEndian.Uint64(k), v, in)
}

// ReadStream calls fn for the events of stream with version >= from, in
// version order. Errors as ReadFrom.
func (l *Log) ReadStream(stream string, from uint64, fn func(Event) error) error {
	var out []Event
	err := l.view(func(tx *bolt.Tx) error {
		prefix := append([]byte(stream), 0)
		events := tx.Bucket(bucketEvents)
		c := tx.Bucket(bucketIndex).Cursor()
		for k, v := c.Seek(indexKey(stream, max(from, 1))); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8; k, v = c.Next() {
			e, err := l.decode(v, events.Get(v), nil)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range out {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// VerifyChecksums reads every record and checks its checksum and shape.
// It returns how many records were verified and the first corruption found
// (*CorruptRecordError), continuing past none.
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
