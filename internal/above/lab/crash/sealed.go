package crash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/plaintext"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// segmentMagic opens a segment's decompressed content, followed by the
// format version (events/segment.go; read here independently of the code
// under test).
const segmentMagic = "hikoutei-segment\x00"

// checkSealed checks I38 on the closed store after a kill: every sequence
// from 1 to the head is in exactly one place — log.db or the one sealed
// segment the log vouches for that covers it, read from the store's
// segments folder and, in a campaign with a bucket, from the bucket (a
// segment in both, or in the folder when the store writes to the bucket,
// counts its records twice) — each segment matches the digest its seal
// recorded, and the hash chain verifies from genesis across the segments
// and log.db (hikoutei audit verify, through the bucket when there is
// one). It returns the number of segments.
func (k *checker) checkSealed(ctx context.Context, run int) (int, error) {
	segs, err := k.manifest()
	if err != nil {
		return 0, err
	}
	live, err := liveSeqs(filepath.Join(k.dir, events.LogFileName))
	if err != nil {
		return 0, err
	}
	places, closePlaces, err := k.segmentPlaces()
	if err != nil {
		return 0, err
	}
	defer closePlaces()
	where := map[uint64]int{} // seq → places holding it
	for s := range live {
		where[s]++
	}
	for _, s := range segs {
		k.countSegment(ctx, run, s, places, where)
	}
	k.countPlaces(run, where)
	if _, err := hikoutei.VerifyDir(ctx, k.dir, hikoutei.VerifyOptions{Segments: places[len(places)-1]}); err != nil {
		k.c.problem(&k.c.res.Mismatches, "run %d: I38: the chain does not verify across the segments and log.db: %v", run, err)
	}
	return len(segs), nil
}

// countSegment adds the sequences segment s holds in each place that has
// it to where; a segment no place has is lost.
func (k *checker) countSegment(ctx context.Context, run int, s events.SegmentSealed, places []segstore.Store, where map[uint64]int) {
	found := 0
	for _, place := range places {
		seqs, ok, err := k.segmentSeqs(ctx, place, s)
		if err != nil {
			k.c.problem(&k.c.res.Lost, "run %d: I38: segment %s in %s: %v", run, s.Name, place.Location(), err)
			continue
		}
		if !ok {
			continue
		}
		found++
		for _, q := range seqs {
			if q < s.First || q > s.Last {
				k.c.problem(&k.c.res.Mismatches, "run %d: I38: segment %s holds seq %d outside its range", run, s.Name, q)
			}
			where[q]++
		}
	}
	if found == 0 {
		k.c.problem(&k.c.res.Lost, "run %d: I38: segment %s, vouched for by the log, is in no segment store", run, s.Name)
	}
}

// countPlaces reports every sequence up to the highest not held exactly once.
func (k *checker) countPlaces(run int, where map[uint64]int) {
	head := uint64(0)
	for s := range where {
		head = max(head, s)
	}
	for s := uint64(1); s <= head; s++ {
		switch n := where[s]; {
		case n == 0:
			k.c.problem(&k.c.res.Lost, "run %d: I38: seq %d is in neither log.db nor a sealed segment", run, s)
		case n > 1:
			k.c.problem(&k.c.res.Duplicates, "run %d: I38: seq %d is in %d places", run, s, n)
		}
	}
}

// manifest is the segments the log vouches for (segment.sealed events).
func (k *checker) manifest() ([]events.SegmentSealed, error) {
	l, err := events.OpenLog(filepath.Join(k.dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Segments()
}

// liveSeqs is the sequences log.db's events bucket holds.
func liveSeqs(path string) (map[uint64]bool, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	out := map[uint64]bool{}
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		if b == nil {
			return fmt.Errorf("log.db has no events bucket")
		}
		return b.ForEach(func(k, _ []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("a key of %d bytes in the events bucket", len(k))
			}
			out[binary.BigEndian.Uint64(k)] = true
			return nil
		})
	})
	return out, err
}

// segmentSeqs reads segment s from place, checks its digest and returns
// the sequences it holds (ok false: place does not have it).
func (k *checker) segmentSeqs(ctx context.Context, place segstore.Store, s events.SegmentSealed) (seqs []uint64, ok bool, err error) {
	file, ok, err := readSegment(ctx, place, s.Name)
	if err != nil || !ok {
		return nil, ok, err
	}
	sum := sha256.Sum256(file)
	if d := "sha256:" + hex.EncodeToString(sum[:]); d != s.Digest {
		return nil, true, fmt.Errorf("digest %s, its seal recorded %s", d, s.Digest)
	}
	b, err := plaintext.Decompress(file)
	if err != nil {
		return nil, true, err
	}
	if !bytes.HasPrefix(b, []byte(segmentMagic)) || len(b) <= len(segmentMagic) {
		return nil, true, fmt.Errorf("not a segment")
	}
	seqs, err = parseSegment(b[len(segmentMagic)+1:], s.Records)
	return seqs, true, err
}

// parseSegment walks a segment's body: the store id, then seq and record
// pairs, each a uvarint (a record with its uvarint length).
func parseSegment(b []byte, want uint64) ([]uint64, error) {
	field := func() ([]byte, bool) {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return nil, false
		}
		f := b[w : w+int(n)]
		b = b[w+int(n):]
		return f, true
	}
	if _, ok := field(); !ok {
		return nil, fmt.Errorf("truncated store id")
	}
	var seqs []uint64
	for len(b) > 0 {
		seq, w := binary.Uvarint(b)
		if w <= 0 {
			return nil, fmt.Errorf("truncated after %d records", len(seqs))
		}
		b = b[w:]
		if _, ok := field(); !ok {
			return nil, fmt.Errorf("record %d truncated", seq)
		}
		seqs = append(seqs, seq)
	}
	if uint64(len(seqs)) != want {
		return nil, fmt.Errorf("%d records, its seal recorded %d", len(seqs), want)
	}
	return seqs, nil
}

// straySegments are the objects of the segment stores (the folder and
// the bucket) no seal vouches for (a kill between storing a segment and
// committing its seal, or inside an upload): litter, not a loss (their
// records are still in log.db).
func (k *checker) straySegments(ctx context.Context, segs []events.SegmentSealed) []string {
	vouched := map[string]bool{}
	for _, s := range segs {
		vouched[s.Name] = true
	}
	places, closePlaces, err := k.segmentPlaces()
	if err != nil {
		return nil
	}
	defer closePlaces()
	var out []string
	for _, place := range places {
		stored, err := place.List(ctx)
		if err != nil {
			continue
		}
		for _, s := range stored {
			if !vouched[s.Name] {
				out = append(out, place.Location().String()+"/"+s.Name)
			}
		}
	}
	return out
}
