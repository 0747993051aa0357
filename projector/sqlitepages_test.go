package projector

import (
	"path/filepath"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// slotsInUse is how many slots are handed out now.
func slotsInUse() int {
	sqliteBlocks.mu.Lock()
	defer sqliteBlocks.mu.Unlock()
	return sqliteSlots.inUse
}

// A page of the page cache is a slot of the page cache's size, not a
// block of the allocator's 8 KiB class: reading 2,000 pages of a table
// into a connection's cache takes about as many slots, and closing it
// gives them back (returned to the OS once none is in use).
func TestPageCachePagesTakeSlots(t *testing.T) {
	if !slotRegionHere {
		t.Skip("no slot region on this platform")
	}
	opened := slotsInUse() // another test's connections
	conn, err := sqlite.OpenConn(filepath.Join(t.TempDir(), "pages.sqlite"), sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			conn.Close()
		}
	}()
	for _, q := range []string{"PRAGMA cache_size=-16384", "CREATE TABLE t (v BLOB)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000) INSERT INTO t SELECT zeroblob(3000) FROM n"} {
		if err := sqlitex.ExecuteTransient(conn, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := slotsInUse()
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA shrink_memory", nil); err != nil {
		t.Fatal(err)
	}
	if err := sqlitex.ExecuteTransient(conn, "SELECT count(*) FROM t WHERE length(v) > 0", nil); err != nil {
		t.Fatal(err)
	}
	if got := slotsInUse(); got < 2000 || got < before {
		t.Errorf("%d slots in use after reading 2,000 pages (%d before): the cache's pages are not slots", got, before)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if got := slotsInUse(); got != opened {
		t.Errorf("%d slots in use after the connection closed, want %d", got, opened)
	}
	sqliteBlocks.mu.Lock()
	next := sqliteSlots.next
	sqliteBlocks.mu.Unlock()
	if opened == 0 && next != 0 {
		t.Errorf("no slot in use, yet %d bytes of the region are kept", next)
	}
}

// A slot has SQLite's size header, is handed out again once freed, and a
// slot that must grow moves with its bytes to a block of the new size.
func TestPageSlotReuseAndRealloc(t *testing.T) {
	if !slotRegionHere {
		t.Skip("no slot region on this platform")
	}
	tls := libc.NewTLS()
	defer tls.Close()
	n := int32(sqliteSlots.usable)
	p := sqlite3.Xsqlite3_malloc(tls, n)
	if !sqliteSlots.owns(p) {
		t.Fatalf("a request of the page cache's size (%d) is not a slot", n)
	}
	if got := sqlite3.Xsqlite3_msize(tls, p); got != uint64(n) {
		t.Errorf("msize = %d, want %d", got, n)
	}
	sqlite3.Xsqlite3_free(tls, p)
	q := sqlite3.Xsqlite3_malloc(tls, n-8)
	if q != p {
		t.Errorf("the freed slot %#x was not handed out again (got %#x)", p, q)
	}
	libc.Xmemset(tls, q, 42, libc.Tsize_t(n))
	r := sqlite3.Xsqlite3_realloc(tls, q, 3*n)
	if r == 0 || sqliteSlots.owns(r) {
		t.Fatalf("realloc to %d bytes gave %#x, a slot or nothing", 3*n, r)
	}
	want := sqlite3.Xsqlite3_malloc(tls, n)
	libc.Xmemset(tls, want, 42, libc.Tsize_t(n))
	if libc.Xmemcmp(tls, r, want, libc.Tsize_t(n)) != 0 {
		t.Error("realloc lost the slot's bytes")
	}
	sqlite3.Xsqlite3_free(tls, want)
	sqlite3.Xsqlite3_free(tls, r)
}
