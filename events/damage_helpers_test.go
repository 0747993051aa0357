package events

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// buildLog writes a closed store in dir whose log holds the writer's lease
// events and n sync.diverged records over 97 streams, appended 50 per
// unit, and returns the path of log.db.
func buildLog(tb testing.TB, dir string, n int) string {
	tb.Helper()
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i += 50 {
		var u Unit
		for j := i; j < min(i+50, n); j++ {
			u.Streams = append(u.Streams, StreamAppend{Stream: SyncStream(fmt.Sprint(j % 97)), ExpectedVersion: AnyVersion,
				Events: []Event{{Payload: SyncDiverged{Target: fmt.Sprint(j), Reason: "record " + fmt.Sprint(j)}}}})
		}
		if _, err := w.Append(u); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(dir, LogFileName)
}

// pageMap lists the pages of each bucket's tree by type.
type pageMap struct {
	ps       int
	hwm      uint64
	branches map[string][]uint64 // bucket → branch pages
	leaves   map[string][]uint64 // bucket → leaf pages, in key order
	inline   map[string]bool
}

func mapPages(t *testing.T, path string) pageMap {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	st, err := f.Stat()
	must(t, err)
	bf, err := openBoltFile(f, st.Size())
	must(t, err)
	m := pageMap{ps: bf.ps, hwm: bf.meta.hwm, branches: map[string][]uint64{}, leaves: map[string][]uint64{}, inline: map[string]bool{}}
	w := newTreeWalk(bf, bf.meta, func(err error) { t.Fatalf("healthy log: %v", err) })
	for name, v := range w.rootBuckets() {
		root, _, err := bucketRef(v)
		must(t, err)
		if root == 0 {
			m.inline[name] = true
			continue
		}
		m.collect(t, bf, name, root)
	}
	return m
}

func (m *pageMap) collect(t *testing.T, bf *boltFile, bucket string, id uint64) {
	p, err := bf.page(id, bf.meta.hwm)
	must(t, err)
	elems, err := p.elements()
	must(t, err)
	if p.flags == flagLeaf {
		m.leaves[bucket] = append(m.leaves[bucket], id)
		return
	}
	m.branches[bucket] = append(m.branches[bucket], id)
	for _, e := range elems {
		m.collect(t, bf, bucket, e.child)
	}
}

// setCount overwrites the element count in page id's header.
func setCount(t *testing.T, path string, ps int, id uint64, count uint16) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], count)
	_, err = f.WriteAt(b[:], int64(id)*int64(ps)+10)
	must(t, err)
}

func fileHash(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	must(t, err)
	return st.Size()
}

// recordBytes returns the stored bytes of every record, by seq.
func recordBytes(t *testing.T, path string) map[uint64][]byte {
	t.Helper()
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	out := map[uint64][]byte{}
	must(t, l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEvents).ForEach(func(k, v []byte) error {
			out[binary.BigEndian.Uint64(k)] = append([]byte(nil), v...)
			return nil
		})
	}))
	return out
}
