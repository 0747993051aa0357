package hikoutei

import (
	"context"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// CompactReport is what Compact did: log.db's size before and after, the
// chain head both files hold, the records the copy's chain walk covered
// (sealed segments included), and whether a leftover log.db.compact of an
// interrupted compaction was replaced.
type CompactReport struct {
	Before, After    int64
	Head             ChainPin
	Records          uint64
	ReplacedLeftover bool
}

// Compact shrinks the closed store's log.db in dir: it rewrites it into
// a fresh file without the free pages that seals and pruning left (bbolt
// keeps a file's size and reuses its free pages; it never gives them back
// to the filesystem), mode 0600, synced, and renames it over log.db once
// the copy's hash chain verifies from the genesis value (across the
// sealed segments) to the same head (docs/operations.md "Compacting
// log.db"). A crash at any step leaves the original intact. It holds the
// log's file lock throughout and takes no lease: nothing is appended.
// Errors: ErrNotAStore; ErrStoreLocked while a process holds the store
// (nothing changed); ErrChainBroken and the segment errors when the copy
// does not verify (log.db unchanged: repair it first, hikoutei doctor);
// I/O errors; the context's.
func Compact(ctx context.Context, dir string) (CompactReport, error) {
	if err := ctx.Err(); err != nil {
		return CompactReport{}, err
	}
	if err := engine.IsStore(dir); err != nil {
		return CompactReport{}, err
	}
	r, err := events.Compact(ctx, dir, events.Options{})
	return CompactReport{Before: r.Before, After: r.After, Head: ChainPin{Seq: r.Head.Seq, Hash: ChainHash(r.Head.Hash)},
		Records: r.Records, ReplacedLeftover: r.ReplacedLeftover}, err
}
