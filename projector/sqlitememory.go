package projector

import (
	"math/bits"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite (modernc.org/sqlite, translated C) allocates from one
// process-wide allocator (modernc.org/memory) that carves each size class
// (up to 16 KiB) out of 64 KiB pages it maps from the OS and unmaps as
// soon as the last block of a page is freed, and maps a block larger than
// 16 KiB on its own (an mmap and two trims) and unmaps it on free. A
// b-tree page split (balance, balance_nonroot) takes a page-sized block
// (8 KiB class: 4,096 bytes and SQLite's size header) and a scratch block
// of about 24 KiB and frees both at once, and the read model of bench row 4
// splits a page about every two rows it writes: each split mapped and
// unmapped memory (mmap, munmap, the page faults of zeroed memory) — about
// a sixth of the store's CPU per synced row after the page caches filled
// every 8 KiB page (they take those slots for good).
//
// blockCache sits between SQLite and that allocator (SQLITE_CONFIG_MALLOC,
// set before SQLite initialises): a freed block of 2–64 KiB is kept, a few
// of each size, for the next request of its size instead of going back to
// the allocator. A request in such a range gets a block of its bucket's
// size (the whole slot of its size class, or a 4 KiB multiple above
// 16 KiB, which the allocator rounds to anyway), so any kept block of the
// bucket fits any request of it; SQLite asks the block's size
// (sqlite3_msize), so it sees the size it got. What it keeps is bounded
// (cacheMaxBytes); everything else goes straight through.

const (
	cacheHeader   = 8                                                // SQLite's size header in front of each block (mem1)
	cacheMinSize  = 2<<10 - cacheHeader + 1                          // smaller requests share 64 KiB pages densely: not kept
	cacheSlotMax  = 16<<10 - cacheHeader                             // the largest request in a size class
	cacheMaxSize  = 64 << 10                                         // larger requests: not kept
	cachePerSize  = 4                                                // kept blocks per bucket
	cacheMaxBytes = 512 << 10                                        // kept bytes in all
	cacheOSPage   = 4 << 10                                          // what a block above a size class is rounded to
	cacheFirstBig = 20 << 10                                         // the smallest bucket above the size classes
	cacheBuckets  = 3 + (cacheMaxSize-cacheFirstBig)/cacheOSPage + 1 // the 4, 8 and 16 KiB classes, then 20 … 64 KiB
	cacheNoBucket = -1                                               // a request the cache does not keep
	cacheClassLog = 12                                               // log2 of the smallest kept size class (4 KiB)
)

// blockCache is the kept blocks; orig is the allocator SQLite had.
type blockCache struct {
	mu    sync.Mutex
	orig  sqlite3.Tsqlite3_mem_methods // the allocator SQLite had
	mine  sqlite3.Tsqlite3_mem_methods // orig with the cache's xMalloc and xFree
	kept  [cacheBuckets][cachePerSize]uintptr
	n     [cacheBuckets]int
	bytes int
}

var (
	sqliteBlocks blockCache
	// sqliteSlots are the page cache's blocks (sqlitepages.go), guarded by
	// sqliteBlocks.mu; a variable of its own, as it holds a pointer and
	// sqliteBlocks must not (under -race, checkptr refuses a pointer into
	// a global with pointers that sqlite3_config derives from a va_list).
	sqliteSlots pageSlots
	// sqliteBlocksOn says the cache is SQLite's allocator (false when
	// SQLite was already initialised, e.g. by an earlier importer:
	// blocks then go straight to modernc.org/memory, as before).
	sqliteBlocksOn bool
)

func init() { sqliteBlocksOn = sqliteBlocks.install() }

// install makes the cache SQLite's allocator, keeping the one it had for
// everything the cache does not serve. It reports false, changing
// nothing, once SQLite is initialised (sqlite3_config refuses then).
func (c *blockCache) install() bool {
	tls := libc.NewTLS()
	defer tls.Close()
	va := libc.NewVaList(uintptr(unsafe.Pointer(&c.orig)))
	defer libc.Xfree(tls, va)
	if sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_GETMALLOC, va) != sqlite3.SQLITE_OK || c.orig.FxMalloc == 0 {
		return false
	}
	sqliteSlots.usable = pageSlotSize(defaultPageSize)
	if sqliteSlots.usable > pageSlotMin {
		sqliteSlots.region = mapSlotRegion()
	}
	c.mine = c.orig
	c.mine.FxMalloc = cFunc(blockMalloc)
	c.mine.FxFree = cFunc(blockFree)
	c.mine.FxRealloc = cFunc(blockRealloc)
	set := libc.NewVaList(uintptr(unsafe.Pointer(&c.mine))) // sqlite3_config copies the struct
	defer libc.Xfree(tls, set)
	return sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MALLOC, set) == sqlite3.SQLITE_OK
}

// cFunc is a Go function as the translated C calls a function pointer
// (the funcval behind the func value, as the generated code's __ccgo_fp).
func cFunc(f any) uintptr {
	type iface [2]uintptr
	return (*iface)(unsafe.Pointer(&f))[1]
}

// bucket is the bucket of a request of n bytes and the size of its
// blocks; cacheNoBucket when n is not kept.
func bucket(n int) (int, int) {
	switch {
	case n < cacheMinSize || n > cacheMaxSize:
		return cacheNoBucket, 0
	case n <= cacheSlotMax:
		log := bits.Len(uint(n + cacheHeader - 1)) // the allocator's size class
		return log - cacheClassLog, 1<<log - cacheHeader
	}
	size := max((n+cacheOSPage-1)&^(cacheOSPage-1), cacheFirstBig) // 16 KiB < n ≤ 20 KiB: 20 KiB
	return 3 + (size-cacheFirstBig)/cacheOSPage, size
}

// blockMalloc is xMalloc: a kept block of n's bucket, or a new one of the
// bucket's size.
func blockMalloc(tls *libc.TLS, n int32) uintptr {
	c := &sqliteBlocks
	if int(n) > pageSlotMin && int(n) <= sqliteSlots.usable {
		c.mu.Lock()
		p := sqliteSlots.take()
		c.mu.Unlock()
		if p != 0 {
			return p
		}
	}
	b, size := bucket(int(n))
	if b == cacheNoBucket {
		return c.malloc(tls, n)
	}
	c.mu.Lock()
	if k := c.n[b]; k > 0 {
		p := c.kept[b][k-1]
		c.n[b], c.bytes = k-1, c.bytes-size
		c.mu.Unlock()
		return p
	}
	c.mu.Unlock()
	return c.malloc(tls, int32(size))
}

// blockFree is xFree: a block of a bucket's size is kept while its bucket
// and the cache have room, freed otherwise.
func blockFree(tls *libc.TLS, p uintptr) {
	c := &sqliteBlocks
	if sqliteSlots.owns(p) {
		c.mu.Lock()
		sqliteSlots.put(p)
		c.mu.Unlock()
		return
	}
	size := c.size(tls, p)
	if b, bs := bucket(size); b != cacheNoBucket && bs == size {
		c.mu.Lock()
		if k := c.n[b]; k < cachePerSize && c.bytes+size <= cacheMaxBytes {
			c.kept[b][k], c.n[b], c.bytes = p, k+1, c.bytes+size
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	(*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&struct{ uintptr }{c.orig.FxFree})))(tls, p)
}

// blockRealloc is xRealloc: a slot that must grow moves to a new block;
// any other block is the allocator's.
func blockRealloc(tls *libc.TLS, p uintptr, n int32) uintptr {
	c := &sqliteBlocks
	if !sqliteSlots.owns(p) {
		return (*(*func(*libc.TLS, uintptr, int32) uintptr)(unsafe.Pointer(&struct{ uintptr }{c.orig.FxRealloc})))(tls, p, n)
	}
	if int(n) <= sqliteSlots.usable {
		return p
	}
	q := blockMalloc(tls, n)
	if q != 0 {
		libc.Xmemcpy(tls, q, p, libc.Tsize_t(sqliteSlots.usable))
		blockFree(tls, p)
	}
	return q
}

func (c *blockCache) malloc(tls *libc.TLS, n int32) uintptr {
	return (*(*func(*libc.TLS, int32) uintptr)(unsafe.Pointer(&struct{ uintptr }{c.orig.FxMalloc})))(tls, n)
}

func (c *blockCache) size(tls *libc.TLS, p uintptr) int {
	return int((*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{c.orig.FxSize})))(tls, p))
}
