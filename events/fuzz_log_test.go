package events

import (
	"os"
	"path/filepath"
	"testing"
)

// fuzzBases are small real logs the fuzzer mutates: one of a few pages
// with inline buckets, one with branch pages.
func fuzzBases(f *testing.F) [][]byte {
	var out [][]byte
	for _, n := range []int{20, 400} {
		b, err := os.ReadFile(buildLog(f, f.TempDir(), n))
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
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
