package events

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
)

// boltFile reads a go.etcd.io/bbolt (v1.4) file page by page with ReadAt,
// bounds-checking everything, so a damaged log.db can be inspected and
// salvaged without bbolt touching it (bbolt trusts its pages: a damaged
// one makes it panic, or fault on its memory map past the end of the
// file). The layout is bbolt's internal/common: a 16-byte page header
// (id u64, flags u16, count u16, overflow u32), 16-byte branch elements
// (pos u32, ksize u32, pgid u64) and leaf elements (flags u32, pos u32,
// ksize u32, vsize u32) whose key lies pos bytes after the element, and
// two meta pages (0 and 1) of which the valid one with the higher txid is
// in use. Integers are in the machine's byte order, as bbolt writes them.
type boltFile struct {
	r     io.ReaderAt
	size  int64
	ps    int         // page size
	metas [2]boltMeta // pages 0 and 1
	meta  boltMeta    // the one in use
	inUse int         // its page id
}

// bbolt format constants (internal/common).
const (
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	pageHeaderSize  = 16
	elemSize        = 16 // branch and leaf elements alike
	metaLen         = 64
	flagBranch      = 0x01
	flagLeaf        = 0x02
	flagFreelist    = 0x10
	bucketLeafFlag  = 0x01
	bucketHeaderLen = 16 // InBucket: root pgid, sequence
	noFreelist      = ^uint64(0)
	minPageSize     = 1024
	maxPageSize     = 1 << 24 // bbolt probes page sizes up to 16 MB
	maxTreeDepth    = 64
)

var ne = binary.NativeEndian

// boltMeta is a decoded meta page.
type boltMeta struct {
	pageSize uint32
	root     uint64 // root bucket's page
	freelist uint64
	hwm      uint64 // high-water mark: pages [0, hwm) are in use
	txid     uint64
	err      string // why it is invalid ("" = valid)
}

func parseMeta(b []byte) boltMeta {
	if len(b) < metaLen {
		return boltMeta{err: "unreadable (file too short)"}
	}
	m := boltMeta{pageSize: ne.Uint32(b[8:]), root: ne.Uint64(b[16:]), freelist: ne.Uint64(b[32:]),
		hwm: ne.Uint64(b[40:]), txid: ne.Uint64(b[48:])}
	h := fnv.New64a()
	h.Write(b[:56])
	switch {
	case ne.Uint32(b[0:]) != boltMagic:
		m.err = "bad magic"
	case ne.Uint32(b[4:]) != boltVersion:
		m.err = fmt.Sprintf("format version %d, want %d", ne.Uint32(b[4:]), boltVersion)
	case ne.Uint64(b[56:]) != h.Sum64():
		m.err = "checksum mismatch"
	}
	return m
}

func corrupt(check CorruptCheck, page uint64, format string, args ...any) *LogCorruptError {
	return &LogCorruptError{Check: check, Page: page, Detail: fmt.Sprintf(format, args...)}
}

// openBoltFile reads the meta pages of a bbolt file of size bytes and
// checks the one in use: page size, high-water mark against the file size
// (a truncated file would make bbolt fault on its memory map), root and
// freelist page ids. Errors: *LogCorruptError; I/O errors.
func openBoltFile(r io.ReaderAt, size int64) (*boltFile, error) {
	if size == 0 {
		return nil, corrupt(CheckFile, 0, "the file is empty")
	}
	f := &boltFile{r: r, size: size}
	if err := f.readMetas(); err != nil {
		return nil, err
	}
	return f, f.checkMeta()
}

func (f *boltFile) readAt(off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || off > f.size || int64(n) > f.size-off {
		return nil, corrupt(CheckFile, 0, "read of %d bytes at offset %d past the end of the %d-byte file", n, off, f.size)
	}
	b := make([]byte, n)
	if _, err := f.r.ReadAt(b, off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("read log.db: %w", err)
	}
	return b, nil
}

// metaAt decodes the meta stored in the page starting at off.
func (f *boltFile) metaAt(off int64) boltMeta {
	b, err := f.readAt(off+pageHeaderSize, metaLen)
	if err != nil {
		return boltMeta{err: "unreadable: " + err.Error()}
	}
	return parseMeta(b)
}

// readMetas finds the page size as bbolt does (meta 0's, else the first
// valid meta probed at 1 KB … 16 MB), then picks the meta in use: the
// valid one with the higher txid.
func (f *boltFile) readMetas() error {
	f.metas[0] = f.metaAt(0)
	ps := int64(f.metas[0].pageSize)
	if f.metas[0].err != "" {
		ps = 0
		for i := 0; i <= 14 && ps == 0; i++ {
			if pos := int64(minPageSize) << i; pos < f.size-minPageSize {
				if m := f.metaAt(pos); m.err == "" {
					ps = int64(m.pageSize)
				}
			}
		}
	}
	if ps < minPageSize || ps > maxPageSize || bits.OnesCount64(uint64(ps)) != 1 {
		return corrupt(CheckMeta, 0, "no valid meta page (meta 0: %s)", f.metas[0].errOr("page size %d", ps))
	}
	f.ps = int(ps)
	f.metas[1] = f.metaAt(ps)
	a, b := 0, 1
	if f.metas[1].txid > f.metas[0].txid {
		a, b = 1, 0
	}
	switch {
	case f.metas[a].err == "":
		f.inUse = a
	case f.metas[b].err == "":
		f.inUse = b
	default:
		return corrupt(CheckMeta, 0, "both meta pages are invalid (meta 0: %s; meta 1: %s)", f.metas[0].err, f.metas[1].err)
	}
	f.meta = f.metas[f.inUse]
	return nil
}

func (m boltMeta) errOr(format string, args ...any) string {
	if m.err != "" {
		return m.err
	}
	return fmt.Sprintf(format, args...)
}

// checkMeta validates the meta in use against the file.
func (f *boltFile) checkMeta() error {
	m, id := f.meta, uint64(f.inUse)
	switch {
	case int(m.pageSize) != f.ps:
		return corrupt(CheckMeta, id, "page size %d, but the file's pages are %d bytes", m.pageSize, f.ps)
	case m.hwm < 4:
		return corrupt(CheckMeta, id, "high-water mark %d pages: a log has at least 4", m.hwm)
	case m.hwm > uint64(f.size)/uint64(f.ps):
		return corrupt(CheckFile, 0, "the file is %d bytes, shorter than its high-water mark of %d pages of %d bytes (%d bytes): it was truncated",
			f.size, m.hwm, f.ps, m.hwm*uint64(f.ps))
	case m.freelist == noFreelist:
		return corrupt(CheckMeta, id, "no freelist page (hikoutei always writes one)")
	case m.root < 2 || m.root >= m.hwm:
		return corrupt(CheckMeta, id, "root bucket page %d outside [2, %d)", m.root, m.hwm)
	case m.freelist < 2 || m.freelist >= m.hwm || m.freelist == m.root:
		return corrupt(CheckMeta, id, "freelist page %d outside [2, %d) or equal to the root page", m.freelist, m.hwm)
	}
	return nil
}

// rawPage is a page with its overflow pages.
type rawPage struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
	buf      []byte // header included
}

func (p *rawPage) typ() string {
	switch p.flags {
	case flagBranch:
		return "branch"
	case flagLeaf:
		return "leaf"
	case 0x04:
		return "meta"
	case flagFreelist:
		return "freelist"
	}
	return fmt.Sprintf("unknown<%02x>", p.flags)
}

func pageHeader(b []byte) rawPage {
	return rawPage{id: ne.Uint64(b), flags: ne.Uint16(b[8:]), count: ne.Uint16(b[10:]), overflow: ne.Uint32(b[12:]), buf: b}
}

// page reads page id (below limit pages) with its overflow pages and checks
// that it names itself id. limit is the high-water mark for pages of the
// tree, or the file's page count for a scan.
func (f *boltFile) page(id, limit uint64) (*rawPage, error) {
	if id < 2 || id >= limit {
		return nil, corrupt(CheckPage, id, "page id outside [2, %d)", limit)
	}
	hb, err := f.readAt(int64(id)*int64(f.ps), pageHeaderSize)
	if err != nil {
		return nil, err
	}
	p := pageHeader(hb)
	if p.id != id {
		return nil, corrupt(CheckPage, id, "page names itself %d", p.id)
	}
	if uint64(p.overflow) >= limit-id {
		return nil, corrupt(CheckPage, id, "%d overflow pages run past page %d", p.overflow, limit)
	}
	if p.buf, err = f.readAt(int64(id)*int64(f.ps), (int(p.overflow)+1)*f.ps); err != nil {
		return nil, err
	}
	return &p, nil
}

// pageElem is one branch or leaf element.
type pageElem struct {
	flags uint32 // leaf: bucketLeafFlag for a bucket
	key   []byte
	value []byte // leaf only
	child uint64 // branch only
}

// elements parses the elements of a branch or leaf page strictly: the
// count must fill the element area exactly (the first key starts right
// after the last element), every key and value must lie inside the page,
// and keys must ascend. A damaged page is a *LogCorruptError.
func (p *rawPage) elements() ([]pageElem, error) {
	if p.flags != flagBranch && p.flags != flagLeaf {
		return nil, corrupt(CheckPage, p.id, "type %s where a branch or leaf page belongs", p.typ())
	}
	n := int(p.count)
	if n == 0 && p.flags == flagBranch {
		return nil, corrupt(CheckPage, p.id, "branch page without elements")
	}
	if pageHeaderSize+n*elemSize > len(p.buf) {
		return nil, corrupt(CheckPage, p.id, "%s page count %d does not fit in %d bytes", p.typ(), n, len(p.buf))
	}
	if n > 0 && int(ne.Uint32(p.buf[pageHeaderSize+p.posField():])) != n*elemSize {
		return nil, corrupt(CheckPage, p.id, "%s page count %d disagrees with its element area (%d elements)",
			p.typ(), n, ne.Uint32(p.buf[pageHeaderSize+p.posField():])/elemSize)
	}
	out := make([]pageElem, 0, n)
	for i := range n {
		e, ok := p.element(i)
		if !ok {
			return nil, corrupt(CheckPage, p.id, "%s element %d lies outside the page", p.typ(), i)
		}
		if i > 0 && bytes.Compare(out[i-1].key, e.key) >= 0 {
			return nil, corrupt(CheckPage, p.id, "%s element %d: keys out of order", p.typ(), i)
		}
		out = append(out, e)
	}
	return out, nil
}

// posField is the offset of pos inside an element.
func (p *rawPage) posField() int {
	if p.flags == flagLeaf {
		return 4
	}
	return 0
}

// element decodes element i with bounds checks; ok = false when it does
// not lie inside the page.
func (p *rawPage) element(i int) (pageElem, bool) {
	at := pageHeaderSize + i*elemSize
	if at+elemSize > len(p.buf) {
		return pageElem{}, false
	}
	b := p.buf[at : at+elemSize]
	var e pageElem
	var pos, ksize, vsize uint64
	if p.flags == flagLeaf {
		e.flags, pos, ksize, vsize = ne.Uint32(b), uint64(ne.Uint32(b[4:])), uint64(ne.Uint32(b[8:])), uint64(ne.Uint32(b[12:]))
	} else {
		pos, ksize, e.child = uint64(ne.Uint32(b)), uint64(ne.Uint32(b[4:])), ne.Uint64(b[8:])
	}
	start := uint64(at) + pos
	end := start + ksize + vsize
	if end > uint64(len(p.buf)) {
		return pageElem{}, false
	}
	e.key = p.buf[start : start+ksize : start+ksize]
	if p.flags == flagLeaf {
		e.value = p.buf[start+ksize : end : end]
	}
	return e, true
}

// looseElements parses as many elements of a leaf page as lie inside it,
// trusting neither the count nor any single element (salvage scans): the
// count is the larger of the header's and the one the first element
// implies, capped by the page size; elements out of bounds are skipped.
func (p *rawPage) looseElements() []pageElem {
	capacity := (len(p.buf) - pageHeaderSize) / elemSize
	n := int(p.count)
	if len(p.buf) >= pageHeaderSize+elemSize {
		n = max(n, int(ne.Uint32(p.buf[pageHeaderSize+p.posField():]))/elemSize)
	}
	var out []pageElem
	for i := range min(n, capacity) {
		if e, ok := p.element(i); ok {
			out = append(out, e)
		}
	}
	return out
}

// bucketRef decodes a bucket element's value: its root page, or the inline
// page carried in the value when the root is 0.
func bucketRef(value []byte) (root uint64, inline *rawPage, err error) {
	if len(value) < bucketHeaderLen {
		return 0, nil, fmt.Errorf("bucket value of %d bytes", len(value))
	}
	root = ne.Uint64(value)
	if root != 0 {
		return root, nil, nil
	}
	if len(value) < bucketHeaderLen+pageHeaderSize {
		return 0, nil, fmt.Errorf("inline bucket of %d bytes", len(value))
	}
	p := pageHeader(value[bucketHeaderLen:])
	p.id = 0
	return 0, &p, nil
}

// freelistIDs reads the freelist page of the meta in use and checks that
// every id it lists is a page of the tree's range, listed once, and neither
// the root nor the freelist page itself.
func (f *boltFile) freelistIDs() ([]uint64, error) {
	p, err := f.page(f.meta.freelist, f.meta.hwm)
	if err != nil {
		return nil, err
	}
	if p.flags != flagFreelist {
		return nil, corrupt(CheckFreelist, p.id, "type %s where the freelist belongs", p.typ())
	}
	n, at := uint64(p.count), pageHeaderSize
	if n == 0xFFFF {
		n, at = ne.Uint64(p.buf[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > uint64(len(p.buf)-at)/8 {
		return nil, corrupt(CheckFreelist, p.id, "%d ids do not fit in the page", n)
	}
	ids := make([]uint64, n)
	seen := make(map[uint64]bool, n)
	for i := range ids {
		id := ne.Uint64(p.buf[at+8*i:])
		if id < 2 || id >= f.meta.hwm || seen[id] || id == f.meta.root || id == f.meta.freelist {
			return nil, corrupt(CheckFreelist, p.id, "lists page %d (outside [2, %d), twice, or in use)", id, f.meta.hwm)
		}
		seen[id] = true
		ids[i] = id
	}
	return ids, nil
}
