package events

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// bucketManifest holds the manifest of sealed segments from log format 5
// on: one entry per seal, keyed by the segment's first sequence (8 bytes,
// big-endian), its value the seal's SegmentSealed payload (JSON). A seal
// adds its entry and rewrites nothing, so its cost does not grow with the
// number of segments. A log sealed by an earlier build keeps its manifest
// in the meta key metaSegments (a JSON array); the segments of both,
// the array's first, make the manifest. The bucket is created by the
// first seal that needs it.
var bucketManifest = []byte("segment_manifest")

// manifestFormat is the log format from which the manifest may be in
// bucketManifest (an older build would not see those segments).
const manifestFormat = 5

// sealedSegments reads the manifest in tx, oldest first (nil: nothing
// sealed): the meta array an earlier build wrote, then the bucket.
func sealedSegments(tx *bolt.Tx) ([]SegmentSealed, error) {
	var b map[string][]byte
	if mb := tx.Bucket(bucketManifest); mb != nil {
		b = map[string][]byte{}
		err := mb.ForEach(func(k, v []byte) error { b[string(k)] = v; return nil })
		if err != nil {
			return nil, err
		}
	}
	return manifestOf(tx.Bucket(bucketMeta).Get(metaSegments), b)
}

// manifestOf parses a manifest from its two parts: legacy, the meta array
// (nil: none), and entries, the bucket's keys and values.
func manifestOf(legacy []byte, entries map[string][]byte) ([]SegmentSealed, error) {
	var segs []SegmentSealed
	if legacy != nil {
		if err := json.Unmarshal(legacy, &segs); err != nil {
			return nil, corrupt(CheckBucket, 0, "meta %s: %v", metaSegments, err)
		}
	}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys) // big-endian sequences: lexical order is numeric
	for _, k := range keys {
		s, err := parseManifestEntry([]byte(k), entries[k])
		if err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	return segs, nil
}

// parseManifestEntry is the bucket entry k, v: its key must be its
// segment's first sequence.
func parseManifestEntry(k, v []byte) (SegmentSealed, error) {
	var s SegmentSealed
	if err := json.Unmarshal(v, &s); err != nil {
		return s, corrupt(CheckBucket, 0, "bucket %s: %v", bucketManifest, err)
	}
	if len(k) != 8 || binary.BigEndian.Uint64(k) != s.First {
		return s, corrupt(CheckBucket, 0, "bucket %s: key %x does not name its segment's first record %d", bucketManifest, k, s.First)
	}
	return s, nil
}

// lastSegment is the newest sealed segment in tx (ok false: none),
// reading one entry of the bucket (or, while a seal of this build has not
// added one, the meta array an earlier build wrote).
func lastSegment(tx *bolt.Tx) (SegmentSealed, bool, error) {
	if mb := tx.Bucket(bucketManifest); mb != nil {
		if k, v := mb.Cursor().Last(); k != nil {
			s, err := parseManifestEntry(k, v)
			return s, err == nil, err
		}
	}
	segs, err := manifestOf(tx.Bucket(bucketMeta).Get(metaSegments), nil)
	if err != nil || len(segs) == 0 {
		return SegmentSealed{}, false, err
	}
	return segs[len(segs)-1], true, nil
}

// addSegment records seg in the manifest in tx: one new entry of the
// bucket (created when missing), the log marked format 5 when it was
// older (never lowered: a later format holds more than the manifest).
func addSegment(tx *bolt.Tx, seg SegmentSealed) error {
	mb, err := tx.CreateBucketIfNotExists(bucketManifest)
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketManifest, err)
	}
	v, err := json.Marshal(seg)
	if err != nil {
		return err
	}
	if err := mb.Put(u64(seg.First), v); err != nil {
		return err
	}
	meta := tx.Bucket(bucketMeta)
	if f, err := strconv.Atoi(string(meta.Get(metaFormat))); err == nil && f >= manifestFormat {
		return nil
	}
	return meta.Put(metaFormat, []byte(fmt.Sprint(manifestFormat)))
}
