package crash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/plaintext"
)

// segmentMagic opens a segment's decompressed content, followed by the
// format version (events/segment.go; read here independently of the code
// under test).
const segmentMagic = "hikoutei-segment\x00"

// checkSealed checks I38 on the closed store after a kill: every sequence
// from 1 to the head is in exactly one place — log.db or the one sealed
// segment the log vouches for that covers it — each segment file matches
// the digest its seal recorded, and the hash chain verifies from genesis
// across the segments and log.db (hikoutei audit verify). It returns the
// number of segments.
func (k *checker) checkSealed(ctx context.Context, run int) (int, error) {
	segs, err := k.manifest()
	if err != nil {
		return 0, err
	}
	live, err := liveSeqs(filepath.Join(k.dir, events.LogFileName))
	if err != nil {
		return 0, err
	}
	where := map[uint64]int{} // seq → places holding it
	for s := range live {
		where[s]++
	}
	for _, s := range segs {
		seqs, err := k.segmentSeqs(s)
		if err != nil {
			k.c.problem(&k.c.res.Lost, "run %d: I38: segment %s: %v", run, s.Name, err)
			continue
		}
		for _, q := range seqs {
			if q < s.First || q > s.Last {
				k.c.problem(&k.c.res.Mismatches, "run %d: I38: segment %s holds seq %d outside its range", run, s.Name, q)
			}
			where[q]++
		}
	}
	k.countPlaces(run, where)
	if _, err := hikoutei.VerifyDir(ctx, k.dir, hikoutei.VerifyOptions{}); err != nil {
		k.c.problem(&k.c.res.Mismatches, "run %d: I38: the chain does not verify across the segments and log.db: %v", run, err)
	}
	return len(segs), nil
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

// segmentSeqs reads segment s from the store's segments folder, checks
// its digest and returns the sequences it holds.
func (k *checker) segmentSeqs(s events.SegmentSealed) ([]uint64, error) {
	file, err := os.ReadFile(filepath.Join(k.dir, events.SegmentsDir, s.Name))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(file)
	if d := "sha256:" + hex.EncodeToString(sum[:]); d != s.Digest {
		return nil, fmt.Errorf("digest %s, its seal recorded %s", d, s.Digest)
	}
	b, err := plaintext.Decompress(file)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(b, []byte(segmentMagic)) || len(b) <= len(segmentMagic) {
		return nil, fmt.Errorf("not a segment")
	}
	return parseSegment(b[len(segmentMagic)+1:], s.Records)
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

// straySegments are files of the segments folder no seal vouches for (a
// kill between writing a segment and committing its seal): litter, not a
// loss (their records are still in log.db).
func straySegments(dir string, segs []events.SegmentSealed) []string {
	vouched := map[string]bool{}
	for _, s := range segs {
		vouched[s.Name] = true
	}
	es, err := os.ReadDir(filepath.Join(dir, events.SegmentsDir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		if !vouched[e.Name()] {
			out = append(out, filepath.Join(events.SegmentsDir, e.Name()))
		}
	}
	return out
}
