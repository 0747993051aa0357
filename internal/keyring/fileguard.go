package keyring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"runtime"
)

// checkFile refuses, before bbolt touches it, a key file that an erasure
// could not destroy a key in, that others could read, or that would make
// bbolt fault: a symbolic link (the rewrite would replace the link and
// leave the destroyed key in the file it points to), a directory or other
// non-regular file, a mode open to group or others, a file shorter than
// its meta page says (bbolt would fault on its memory map past the end:
// SIGBUS, not an error). A missing file is fs.ErrNotExist, unwrapped.
func checkFile(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fs.ErrNotExist
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrKeyFile, File, err)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link: an erasure would replace the link and leave the destroyed key in the file it points to; move the file into the store's directory", ErrKeyFile, File)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file (%v)", ErrKeyFile, File, st.Mode().Type())
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: %s is accessible by group or others (mode %04o); run chmod 600", ErrKeyFile, File, st.Mode().Perm())
	}
	return checkSize(path, st.Size())
}

// bbolt's meta page (go.etcd.io/bbolt internal/common), after the 16-byte
// page header: magic u32, version u32, page size u32, flags u32, root
// bucket (pgid u64, sequence u64), freelist pgid u64, high-water mark u64,
// txid u64, checksum u64 (FNV-64a of what precedes it), native byte order.
const (
	boltMagic   = 0xED0CDAED
	metaOffset  = 16
	metaLen     = 64
	minPageSize = 1024
	maxPageSize = 1 << 24
)

type meta struct{ pageSize, hwm, txid uint64 }

// checkSize reads the meta pages and requires the file to hold every page
// below the high-water mark of the meta in use (the valid one with the
// higher txid). A file with no valid meta is left to bbolt, which reports
// it as invalid without faulting; an empty one bbolt initialises.
func checkSize(path string, size int64) error {
	if size == 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrKeyFile, File, err)
	}
	defer f.Close()
	m0, ok0 := readMeta(f, 0)
	ps := int64(os.Getpagesize())
	if ok0 {
		ps = int64(m0.pageSize)
	}
	m1, ok1 := readMeta(f, ps)
	m := m0
	if !ok0 || (ok1 && m1.txid > m0.txid) {
		m = m1
	}
	if !ok0 && !ok1 {
		return nil
	}
	if need := m.hwm * m.pageSize; need > uint64(size) {
		return fmt.Errorf("%w: %s is truncated (%d bytes, its meta page says %d): restore it from your key backup", ErrKeyFile, File, size, need)
	}
	return nil
}

// readMeta decodes the meta of the page at off, and reports whether it is
// valid.
func readMeta(r io.ReaderAt, off int64) (meta, bool) {
	b := make([]byte, metaLen)
	if _, err := r.ReadAt(b, off+metaOffset); err != nil {
		return meta{}, false
	}
	ne := binary.NativeEndian
	h := fnv.New64a()
	h.Write(b[:56])
	m := meta{pageSize: uint64(ne.Uint32(b[8:])), hwm: ne.Uint64(b[40:]), txid: ne.Uint64(b[48:])}
	ok := ne.Uint32(b) == boltMagic && ne.Uint64(b[56:]) == h.Sum64() &&
		m.pageSize >= minPageSize && m.pageSize <= maxPageSize && m.pageSize&(m.pageSize-1) == 0
	return m, ok
}
