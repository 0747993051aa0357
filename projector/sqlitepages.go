package projector

import (
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A page of SQLite's page cache is one block: the 4,096-byte database page
// and the cache's header for it (SQLITE_CONFIG_PCACHE_HDRSZ), a little over
// 4 KiB. The allocator's size classes are powers of two, so each cached page
// took a block of the 8 KiB class, twice what it holds: the writer's 16 MiB
// cache (writerCachePragma) held about 31 MB once full.
//
// pageSlots carves blocks of exactly that size out of one region it maps
// at start (mapped, not resident: a slot costs memory once handed out).
// A request of the page cache's size, or a little smaller, takes a slot; a
// freed slot is handed out again, last freed first; the region's end, or
// an unmapped region, sends requests to the allocator as before. A slot
// carries SQLite's size header (mem1: the block's size in the 8 bytes in
// front of it) like the allocator's blocks, so SQLite sizes it alike.

// slotRegionBytes is the region's size: the writer's cache, a rebuild's
// and the reading connections' default caches (4 × 2 MB) with room to
// spare.
const slotRegionBytes = 64 << 20

// pageSlots is the region and its slots (sqliteSlots).
type pageSlots struct {
	region []byte  // nil when no region could be mapped
	usable int     // the bytes a slot holds (a page and the cache's header)
	next   int     // the offset of the first slot never handed out
	free   uintptr // the last freed slot (each holds the next in its first word)
	inUse  int     // slots handed out and not freed (tests)
}

// pageSlotSize is what the page cache asks for a page of pageSize bytes
// (sqlite3Malloc rounds to 8).
func pageSlotSize(pageSize int) int {
	tls := libc.NewTLS()
	defer tls.Close()
	va := libc.NewVaList(uintptr(unsafe.Pointer(&pcacheHeader)))
	defer libc.Xfree(tls, va)
	if sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PCACHE_HDRSZ, va) != sqlite3.SQLITE_OK || pcacheHeader <= 0 {
		return 0
	}
	return (pageSize + int(pcacheHeader) + 7) &^ 7
}

// pcacheHeader is where sqlite3_config writes the page cache's header
// size: a global without pointers, which checkptr (-race) accepts as the
// target of a pointer read from a va_list, unlike a heap variable.
var pcacheHeader int32

// owns says p is a slot of the region.
func (s *pageSlots) owns(p uintptr) bool {
	if len(s.region) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(&s.region[0]))
	return p > base && p < base+uintptr(len(s.region))
}

// take hands out a slot, or returns 0 when the region is full.
func (s *pageSlots) take() uintptr {
	if p := s.free; p != 0 {
		s.free = *(*uintptr)(unsafe.Pointer(&s.region[s.offset(p)]))
		s.inUse++
		return p
	}
	stride := cacheHeader + s.usable
	if s.region == nil || s.next+stride > len(s.region) {
		return 0
	}
	*(*int64)(unsafe.Pointer(&s.region[s.next])) = int64(s.usable) // mem1's size header
	p := uintptr(unsafe.Pointer(&s.region[s.next+cacheHeader]))
	s.next += stride
	s.inUse++
	return p
}

// put takes back a slot take handed out. When no slot is in use (every
// connection closed) the slots handed out are returned to the OS.
func (s *pageSlots) put(p uintptr) {
	*(*uintptr)(unsafe.Pointer(&s.region[s.offset(p)])) = s.free
	s.free = p
	s.inUse--
	if s.inUse == 0 {
		releaseSlots(s.region[:s.next])
		s.next, s.free = 0, 0
	}
}

func (s *pageSlots) offset(p uintptr) int {
	return int(p - uintptr(unsafe.Pointer(&s.region[0])))
}

// pageSlotMin is the largest request of the 4 KiB class: a larger one up
// to a slot's size takes a slot.
const pageSlotMin = 4<<10 - cacheHeader

// defaultPageSize is the page size of the read model (SQLite's default).
const defaultPageSize = 4096
