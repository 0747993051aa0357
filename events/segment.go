package events

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// SegmentsDir is the folder of a store directory that holds its sealed
// segments unless Options.Segments names another store.
const SegmentsDir = segstore.DefaultFolder

// segmentMagic opens every segment's uncompressed content; the byte after
// it is the format version.
const segmentMagic = "hikoutei-segment\x00"

const segmentVersion = 1

// segRecord is one record of a segment: its sequence and its bytes as
// log.db stored them.
type segRecord struct {
	seq uint64
	raw []byte
}

// segRecords are records in sequence order; Get looks one up by its key
// (a recordGetter for the chain walker).
type segRecords []segRecord

// Get returns the record whose key is k (nil: none).
func (rs segRecords) Get(k []byte) []byte {
	if len(k) != 8 {
		return nil
	}
	seq := binary.BigEndian.Uint64(k)
	i := sort.Search(len(rs), func(i int) bool { return rs[i].seq >= seq })
	if i < len(rs) && rs[i].seq == seq {
		return rs[i].raw
	}
	return nil
}

// mergeRecords merges two sequence-ordered lists without a common sequence.
func mergeRecords(a, b segRecords) segRecords {
	out := make(segRecords, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.SortFunc(out, func(x, y segRecord) int { return cmp.Compare(x.seq, y.seq) })
	return out
}

// segmentSuffix ends every segment's file name.
const segmentSuffix = ".seg.zst"

// segmentName is the file name of the segment covering first..last whose
// chain runs from firstLink to lastHash.
func segmentName(first, last uint64, firstLink, lastHash ChainHash) string {
	return fmt.Sprintf("%020d-%020d-%s-%s"+segmentSuffix, first, last, firstLink.String()[:16], lastHash.String()[:16])
}

// encodeSegment is the compressed content of a segment of store storeID.
func encodeSegment(storeID string, recs segRecords) ([]byte, error) {
	var b []byte
	b = append(b, segmentMagic...)
	b = append(b, segmentVersion)
	b = binary.AppendUvarint(b, uint64(len(storeID)))
	b = append(b, storeID...)
	for _, r := range recs {
		b = binary.AppendUvarint(b, r.seq)
		b = binary.AppendUvarint(b, uint64(len(r.raw)))
		b = append(b, r.raw...)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil), nil
}

// decodeSegment parses a segment's compressed content. Errors: a reason,
// for a *SegmentError.
func decodeSegment(file []byte, storeID string) (segRecords, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	b, err := dec.DecodeAll(file, nil)
	if err != nil {
		return nil, fmt.Errorf("not a compressed segment: %v", err)
	}
	if !bytes.HasPrefix(b, []byte(segmentMagic)) || len(b) == len(segmentMagic) || b[len(segmentMagic)] != segmentVersion {
		return nil, errors.New("not a segment this build reads")
	}
	r := &recordReader{b: b[len(segmentMagic)+1:]}
	if id := string(r.bytes()); r.err != nil || id != storeID {
		return nil, fmt.Errorf("a segment of store %q, not %q", id, storeID)
	}
	var recs segRecords
	for len(r.b) > 0 && r.err == nil {
		seq := r.uvarint()
		raw := r.bytes()
		if r.err == nil && len(recs) > 0 && seq <= recs[len(recs)-1].seq {
			return nil, fmt.Errorf("seq %d out of order", seq)
		}
		recs = append(recs, segRecord{seq: seq, raw: raw})
	}
	if r.err != nil {
		return nil, fmt.Errorf("truncated: %v", r.err)
	}
	return recs, nil
}

// fileDigest is "sha256:" and the hex SHA-256 of b.
func fileDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// loadSegment reads the segment s from store and checks it against s:
// the file's digest, then that its records are First..Last less the kept
// ones, each passing its checksum and claiming its sequence. Errors:
// *SegmentError (ErrSegmentMissing, ErrSegmentDamaged,
// ErrSegmentStoreUnavailable).
func loadSegment(store segstore.Store, storeID string, s SegmentSealed) (segRecords, error) {
	file, err := readVouched(store, s)
	if err != nil {
		return nil, err
	}
	damaged := func(format string, a ...any) error {
		return &SegmentError{Err: ErrSegmentDamaged, Name: s.Name, Reason: fmt.Sprintf(format, a...)}
	}
	recs, err := decodeSegment(file, storeID)
	if err != nil {
		return nil, damaged("%v", err)
	}
	if uint64(len(recs)) != s.Records {
		return nil, damaged("%d records, the log vouches for %d", len(recs), s.Records)
	}
	for _, r := range recs {
		if r.seq < s.First || r.seq > s.Last {
			return nil, damaged("seq %d outside %d..%d", r.seq, s.First, s.Last)
		}
		if _, err := parseRaw(r.seq, r.raw); err != nil {
			return nil, damaged("%v", err)
		}
	}
	return recs, nil
}

// readVouched reads the segment s from store and checks its digest.
// Errors: *SegmentError (ErrSegmentMissing naming where it was looked
// for, ErrSegmentDamaged, ErrSegmentStoreUnavailable).
func readVouched(store segstore.Store, s SegmentSealed) ([]byte, error) {
	file, err := store.Get(context.Background(), s.Name)
	if errors.Is(err, segstore.ErrNotFound) {
		return nil, &SegmentError{Err: ErrSegmentMissing, Name: s.Name, Reason: "not in " + store.Location().String()}
	}
	if err != nil {
		return nil, &SegmentError{Err: ErrSegmentStoreUnavailable, Name: s.Name, Reason: strings.TrimPrefix(err.Error(), segstore.ErrUnavailable.Error()+": ")}
	}
	if d := fileDigest(file); d != s.Digest {
		return nil, &SegmentError{Err: ErrSegmentDamaged, Name: s.Name,
			Reason: fmt.Sprintf("its digest is %s, the log vouches for %s", d, s.Digest)}
	}
	return file, nil
}
