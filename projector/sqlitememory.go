package projector

import (
	"sync"

	"modernc.org/libc"
)

// SQLite (modernc.org/sqlite, translated C) allocates from one
// process-wide allocator (modernc.org/memory) that carves each size class
// out of 64 KiB pages it maps from the OS and unmaps as soon as the last
// block of a page is freed. A b-tree page split (balance_nonroot) takes a
// scratch block of 4–16 KiB and frees it at once: with no other block of
// its class alive, every split mapped a fresh page and unmapped it again
// (an mmap, two munmap trims, a munmap and the page faults of zeroed
// memory): about 6,000 times per 10,000 synced rows of bench row 4, over a
// tenth of the store's CPU. One block of each such class, taken once and
// never freed, keeps a page of the class mapped, so the splits take its
// free slots. The cost is one 64 KiB page per class, mapped for the life
// of the process.

var pinOnce sync.Once

// pinAllocatorPages takes the pinned blocks, once per process: one in
// each size class the splits' scratch falls in (4, 8 and 16 KiB slots; a
// larger block has a mapping of its own whatever is pinned).
func pinAllocatorPages() {
	pinOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		libc.Xmalloc(tls, 4<<10) // never freed: its page stays mapped
		libc.Xmalloc(tls, 8<<10)
		libc.Xmalloc(tls, 16<<10)
	})
}
