package projector

import (
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The cache is SQLite's allocator in this process: the package's init
// ran before anything opened a database.
func TestBlockCacheInstalled(t *testing.T) {
	if !sqliteBlocksOn {
		t.Fatal("the block cache is not SQLite's allocator")
	}
}

func TestBlockCacheBuckets(t *testing.T) {
	for n, want := range map[int][2]int{
		100: {cacheNoBucket, 0}, 2040: {cacheNoBucket, 0}, // share pages densely
		2041: {0, 4088}, 4088: {0, 4088}, // the 4 KiB class
		4089: {1, 8184}, 4096: {1, 8184}, 8184: {1, 8184}, // a page-sized block: 8 KiB class
		8185: {2, 16376}, 16376: {2, 16376},
		16377: {3, 20 << 10}, 16384: {3, 20 << 10}, 20 << 10: {3, 20 << 10},
		20<<10 + 1: {4, 24 << 10}, 24600: {5, 28 << 10}, 64 << 10: {cacheBuckets - 1, 64 << 10},
		64<<10 + 1: {cacheNoBucket, 0},
	} {
		b, size := bucket(n)
		if b != want[0] || size != want[1] {
			t.Errorf("bucket(%d) = %d, %d; want %d, %d", n, b, size, want[0], want[1])
		}
		if b != cacheNoBucket && (size < n || b >= cacheBuckets) {
			t.Errorf("bucket(%d) = %d, %d: the block does not fit or the bucket is out of range", n, b, size)
		}
	}
}

// A freed block is handed out again for the next request of its bucket,
// with its bucket's size, and a bucket keeps at most cachePerSize blocks.
func TestBlockCacheReuse(t *testing.T) {
	tls := libc.NewTLS()
	defer tls.Close()
	const n = 60000 // a bucket nothing else in these tests asks for
	b, size := bucket(n)
	p := sqlite3.Xsqlite3_malloc(tls, n)
	if p == 0 {
		t.Fatal("sqlite3_malloc failed")
	}
	if got := sqlite3.Xsqlite3_msize(tls, p); got != uint64(size) {
		t.Errorf("msize = %d, want the bucket's %d", got, size)
	}
	sqlite3.Xsqlite3_free(tls, p)
	if q := sqlite3.Xsqlite3_malloc(tls, n-100); q != p {
		t.Errorf("a request of the same bucket got %#x, not the kept %#x", q, p)
	} else {
		sqlite3.Xsqlite3_free(tls, q)
	}
	var ps []uintptr
	for range cachePerSize + 2 {
		ps = append(ps, sqlite3.Xsqlite3_malloc(tls, n))
	}
	for _, p := range ps {
		sqlite3.Xsqlite3_free(tls, p)
	}
	sqliteBlocks.mu.Lock()
	kept := sqliteBlocks.n[b]
	sqliteBlocks.mu.Unlock()
	if kept != cachePerSize {
		t.Errorf("bucket keeps %d blocks, want %d", kept, cachePerSize)
	}
}
