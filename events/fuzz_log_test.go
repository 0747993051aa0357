package events

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var updateFuzzBases = flag.Bool("update-fuzz-bases", false, "rewrite testdata/fuzzlogs from new logs")

// fuzzBaseRecords are the sizes of the logs in testdata/fuzzlogs: one of a
// few pages with inline buckets, one with a branch page. They are files,
// not built at each run, so that a crasher's offsets land on the same
// bytes again (bbolt's page layout varies from run to run).
var fuzzBaseRecords = []int{20, 250}

func fuzzBasePath(n int) string {
	return filepath.Join("testdata", "fuzzlogs", fmt.Sprintf("log-%d.db.gz", n))
}

// fuzzBases reads the base logs (gzip, cut at their high-water mark).
func fuzzBases(tb testing.TB) [][]byte {
	var out [][]byte
	for _, n := range fuzzBaseRecords {
		b, err := os.ReadFile(fuzzBasePath(n))
		if err != nil {
			tb.Fatal(err)
		}
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			tb.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// TestFuzzBasesAreHealthyLogs checks the fuzz bases (and rewrites them
// with -update-fuzz-bases).
func TestFuzzBasesAreHealthyLogs(t *testing.T) {
	if *updateFuzzBases {
		for _, n := range fuzzBaseRecords {
			writeFuzzBase(t, n)
		}
	}
	for i, data := range fuzzBases(t) {
		path := filepath.Join(t.TempDir(), LogFileName)
		must(t, os.WriteFile(path, data, 0o600))
		v, err := VerifyLogFile(path)
		must(t, err)
		if !v.Healthy() || v.Records != uint64(fuzzBaseRecords[i]+2) {
			t.Fatalf("base %d: %+v %v", i, v, v.Err())
		}
	}
}

func writeFuzzBase(t *testing.T, n int) {
	path := buildLog(t, t.TempDir(), n)
	data, err := os.ReadFile(path)
	must(t, err)
	data = data[:mapPages(t, path).hwm*uint64(mapPages(t, path).ps)]
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, err = z.Write(data)
	must(t, err)
	must(t, z.Close())
	must(t, os.MkdirAll(filepath.Dir(fuzzBasePath(n)), 0o755))
	must(t, os.WriteFile(fuzzBasePath(n), buf.Bytes(), 0o644))
}

// mutate applies edits to a copy of base: every 4 bytes are a 24-bit offset
// (modulo the length) and a byte to XOR there; then, when resize is not 0,
// the file is truncated or extended with zeros to resize modulo twice its
// length.
func mutate(base, edits []byte, resize uint32) []byte {
	data := append([]byte(nil), base...)
	for i := 0; i+4 <= len(edits); i += 4 {
		off := (int(edits[i])<<16 | int(edits[i+1])<<8 | int(edits[i+2])) % len(data)
		data[off] ^= edits[i+3]
	}
	if resize != 0 {
		n := int(resize % uint32(2*len(data)))
		if n <= len(data) {
			data = data[:n]
		} else {
			data = append(data, make([]byte, n-len(data))...)
		}
	}
	return data
}

// FuzzOpenLog mutates small real logs (bytes flipped, truncated, extended)
// and opens, reads, verifies, salvages and appends to them: nothing may
// panic or fault, a read-only open and a verification never write, and a
// salvage that succeeds yields a log that opens and verifies.
func FuzzOpenLog(f *testing.F) {
	bases := fuzzBases(f)
	f.Add(uint8(0), []byte{}, uint32(0))
	f.Add(uint8(1), []byte{}, uint32(0))
	f.Add(uint8(1), []byte{}, uint32(8192))
	for _, page := range []int{0, 1, 2, 3, 4, 5, 10} {
		at := page*4096 + 10 // the element count of a page header
		f.Add(uint8(1), []byte{byte(at >> 16), byte(at >> 8), byte(at), 0xea}, uint32(0))
		f.Add(uint8(0), []byte{byte(at >> 16), byte(at >> 8), byte(at + 6), 0x01}, uint32(0))
	}
	f.Add(uint8(1), []byte{0, 0x10, 0x30, 0xff, 0, 0x20, 0x10, 0x7f}, uint32(0)) // meta 1 root and meta 0 txid
	f.Fuzz(func(t *testing.T, which uint8, edits []byte, resize uint32) {
		data := mutate(bases[int(which)%len(bases)], edits, resize)
		dir := t.TempDir()
		path := filepath.Join(dir, LogFileName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		before := fileHash(t, path)
		readLog(t, path, Options{ReadOnly: true})
		if _, err := VerifyLogFile(path); err != nil && !os.IsNotExist(err) {
			t.Logf("verify: %v", err)
		}
		if fileHash(t, path) != before {
			t.Fatal("a read-only open or a verification wrote to the log")
		}
		salvageFuzzed(t, path)
		readLog(t, path, Options{Clock: NewManualClock(t0), NoSync: true})
	})
}

// readLog opens path and reads everything a store reads; for a writable
// open it also takes the lease and appends.
func readLog(t *testing.T, path string, opts Options) {
	l, err := OpenLog(path, opts)
	if err != nil {
		return
	}
	defer l.Close()
	_, _ = l.Head()
	_ = l.ReadFrom(1, func(Event) error { return nil })
	_ = l.ReadStream(SyncStream("1"), 1, func(Event) error { return nil })
	_, _ = l.StreamVersions([]string{SyncStream("1"), SyncStream("7"), LeaseStream(DefaultRole)})
	_, _, _ = l.Lease(DefaultRole)
	_, _ = l.VerifyChecksums()
	if opts.ReadOnly {
		return
	}
	lease, err := l.AcquireLease(AcquireRequest{WriterID: "fuzz", Operation: "fuzz"})
	if err == nil {
		_, _ = l.Append(lease.Fence(), unit(SyncStream("1"), AnyVersion, 3))
	}
}

func salvageFuzzed(t *testing.T, path string) {
	dst := filepath.Join(t.TempDir(), LogFileName)
	if _, err := SalvageLog(path, dst, SalvageOptions{Head: 10}); err != nil {
		return
	}
	l, err := OpenLog(dst, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a salvaged log does not open: %v", err)
	}
	l.Close()
	v, err := VerifyLogFile(dst)
	if err != nil || !v.Healthy() {
		t.Fatalf("a salvaged log does not verify: %v %v", err, v.Err())
	}
}
