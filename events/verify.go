package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// maxProblems caps the structural problems a Verification lists.
const maxProblems = 100

// Verification is the result of VerifyLogFile: every problem found in
// log.db, not only the first.
type Verification struct {
	PageSize int    // bytes (0 when no meta page is valid)
	Pages    uint64 // high-water mark of the meta in use
	TxID     uint64 // transaction id of the meta in use
	// StaleMeta, when set, says that one meta page is invalid, so bbolt
	// uses the previous commit's meta. After a crash during a commit this
	// is expected (that commit was never acknowledged); otherwise the
	// newest commit was lost.
	StaleMeta string
	StoreID   string
	Head      uint64 // the head recorded in meta
	Records   uint64 // records that are intact and decode
	// Problems are the structural findings (first maxProblems;
	// MoreProblems counts the rest).
	Problems     []*LogCorruptError
	MoreProblems int
	Corrupt      SeqRanges // records that fail their checksum or do not parse
	Undecodable  SeqRanges // intact records this build cannot decode (type, schema, payload)
	Missing      SeqRanges // sequences up to the head with no record in the tree
	SalvageLost  SeqRanges // sequences a salvage recorded as lost (never reused)
	// Sealed are the sequences the log's sealed segments cover (meta
	// segments): their records are in the segments (or kept in the tree),
	// not missing.
	Sealed SeqRanges
}

// Healthy reports whether nothing is damaged or missing.
func (v *Verification) Healthy() bool {
	return len(v.Problems) == 0 && len(v.Corrupt) == 0 && len(v.Undecodable) == 0 && len(v.Missing) == 0
}

// Err is the first finding as a typed error (*LogCorruptError,
// *CorruptRecordError), or nil when Healthy.
func (v *Verification) Err() error {
	switch {
	case len(v.Problems) > 0:
		return v.Problems[0]
	case len(v.Corrupt) > 0:
		return &CorruptRecordError{Seq: v.Corrupt[0].First, Reason: "checksum or shape (also: " + v.Corrupt.String() + ")"}
	case len(v.Undecodable) > 0:
		return &CorruptRecordError{Seq: v.Undecodable[0].First, Reason: "payload not decodable by this build"}
	case len(v.Missing) > 0:
		return &LogCorruptError{Check: CheckSequence, Seq: v.Missing[0].First, Detail: "missing: " + v.Missing.String()}
	}
	return nil
}

func (v *Verification) problem(err error) {
	var ce *LogCorruptError
	if !errors.As(err, &ce) {
		ce = &LogCorruptError{Check: CheckFile, Detail: err.Error()}
	}
	if len(v.Problems) < maxProblems {
		v.Problems = append(v.Problems, ce)
	} else {
		v.MoreProblems++
	}
}

// VerifyLogFile checks the log file at path fully without bbolt trusting
// it and without writing: the meta pages and the file size, every page of
// the tree (ids, types, element counts and bounds, key order, single
// reference, depth), the freelist, the log's buckets, then bbolt's own
// consistency check (tx.Check: reachability, freed pages, key order across
// pages) when the pages are sound, every record's checksum and shape, and
// that sequences run from 1 to the head without a hole. It keeps going
// past damage, so the result names every bad sequence it can still read.
// Errors (nothing verified): *StoreLockedError while a writer holds the
// file; I/O errors opening it. Damage is in the Verification, never a
// panic.
func VerifyLogFile(path string) (*Verification, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := lockFile(f, false, DefaultOpenTimeout); err != nil {
		return nil, lockedError(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	v := &Verification{}
	bf, err := openBoltFile(f, st.Size())
	if bf != nil {
		v.PageSize, v.Pages, v.TxID = bf.ps, bf.meta.hwm, bf.meta.txid
		v.StaleMeta = bf.staleMeta()
	}
	if err != nil {
		v.problem(err)
		return v, nil
	}
	v.walk(bf)
	if len(v.Problems) == 0 {
		v.bboltCheck(path)
	}
	return v, nil
}

// lockedError maps bolt's timeout to *StoreLockedError.
func lockedError(path string, err error) error {
	if errors.Is(err, bolterrors.ErrTimeout) {
		return DescribeLocked(filepath.Dir(path), &StoreLockedError{Holder: "another process", Operation: "unknown"})
	}
	return err
}

// metaHeader checks the page header of meta page id as bbolt's check
// asserts it (FastCheck): it names itself and has a known type.
func (f *boltFile) metaHeader(id uint64) error {
	hb, err := f.readAt(int64(id)*int64(f.ps), pageHeaderSize)
	if err != nil {
		return err
	}
	p := pageHeader(hb)
	if p.id != id || p.flags != 0x04 {
		return corrupt(CheckMeta, id, "meta page header names page %d of type %s", p.id, p.typ())
	}
	return nil
}

// staleMeta describes an invalid meta page ("" when both are valid).
func (f *boltFile) staleMeta() string {
	for i, m := range f.metas {
		if m.err != "" {
			return fmt.Sprintf("meta page %d is invalid (%s); the log is at the commit of meta page %d (txid %d)", i, m.err, f.inUse, f.meta.txid)
		}
	}
	return ""
}

// walk verifies the meta page headers, the freelist and the whole tree,
// and the records.
func (v *Verification) walk(bf *boltFile) {
	for id := range uint64(2) {
		if err := bf.metaHeader(id); err != nil {
			v.problem(err)
		}
	}
	if _, err := bf.freelistIDs(); err != nil {
		v.problem(err)
	}
	w := newTreeWalk(bf, bf.meta, v.problem)
	buckets := w.rootBuckets()
	for _, name := range logBuckets {
		if buckets[string(name)] == nil {
			v.problem(corrupt(CheckBucket, bf.meta.root, "bucket %s missing", name))
		}
	}
	meta := w.keyValues(buckets[string(bucketMeta)])
	v.readMeta(meta, w.keyValues(buckets[string(bucketManifest)]))
	for name, b := range buckets {
		// events is walked below; meta and the manifest were walked above
		// (a second walk would find their pages "reached twice").
		if name != string(bucketEvents) && name != string(bucketMeta) && name != string(bucketManifest) {
			w.walk(b, w.nested)
		}
	}
	if b := buckets[string(bucketEvents)]; b != nil {
		c := seqCheck{v: v, w: w}
		w.walk(b, c.record)
		c.end()
	}
}

// readMeta reads head, store id and recorded salvage losses from the
// meta bucket's key/values.
func (v *Verification) readMeta(meta, manifest map[string][]byte) {
	v.StoreID = string(meta[string(metaStoreID)])
	if h := meta[string(metaHead)]; len(h) == 8 {
		v.Head = binary.BigEndian.Uint64(h)
	} else if h != nil {
		v.problem(corrupt(CheckHead, 0, "head value of %d bytes", len(h)))
	}
	if f := string(meta[string(metaFormat)]); f != "" {
		if err := knownFormat(f); err != nil {
			v.problem(corrupt(CheckBucket, 0, "%s", strings.TrimPrefix(err.Error(), ErrCorruptRecord.Error()+": ")))
		}
	}
	if s, ok := meta[string(metaSalvageLost)]; ok {
		lost, err := parseSeqRanges(string(s))
		if err != nil {
			v.problem(corrupt(CheckBucket, 0, "meta %s: %v", metaSalvageLost, err))
		}
		v.SalvageLost = lost
	}
	segs, err := manifestOf(meta[string(metaSegments)], manifest)
	if err != nil {
		v.problem(err)
	}
	for _, g := range segs {
		v.Sealed.AddRange(g.First, g.Last)
	}
}

// seqCheck follows the records of the events bucket in key order.
type seqCheck struct {
	v    *Verification
	w    *treeWalk
	last uint64
	gaps SeqRanges
}

func (c *seqCheck) record(page uint64, e pageElem) {
	v := c.v
	if e.flags&bucketLeafFlag != 0 || len(e.key) != 8 {
		v.problem(corrupt(CheckSequence, page, "element %x of the events bucket is not a record", e.key))
		c.w.nested(page, e)
		return
	}
	seq := binary.BigEndian.Uint64(e.key)
	switch {
	case seq <= c.last:
		v.problem(&LogCorruptError{Check: CheckSequence, Page: page, Seq: seq, Detail: fmt.Sprintf("after seq %d", c.last)})
		return
	case seq > c.last+1:
		c.gaps.AddRange(c.last+1, seq-1)
	}
	c.last = seq
	if seq > v.Head {
		v.problem(&LogCorruptError{Check: CheckSequence, Page: page, Seq: seq, Detail: fmt.Sprintf("record past the head %d", v.Head)})
	}
	_, err := DecodeRecord(seq, e.value)
	var pe *PayloadError
	switch {
	case errors.As(err, &pe):
		v.Undecodable.Add(seq)
	case err != nil:
		v.Corrupt.Add(seq)
	default:
		v.Records++
	}
}

func (c *seqCheck) end() {
	c.gaps.AddRange(c.last+1, c.v.Head)
	c.v.Missing = c.gaps.Minus(c.v.SalvageLost).Minus(c.v.Sealed)
}

// bboltCheck runs bbolt's tx.Check. It runs on bbolt's own goroutine,
// where a panic could not be recovered, so only after walk found every
// page it reads sound.
func (v *Verification) bboltCheck(path string) {
	err := guard("check", func() error {
		db, err := openBolt(path, Options{ReadOnly: true, OpenTimeout: DefaultOpenTimeout})
		if err != nil {
			return err
		}
		defer db.Close()
		return db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				v.problem(corrupt(CheckBbolt, 0, "%v", err))
			}
			return nil
		})
	})
	if err != nil {
		v.problem(err)
	}
}
