package hikoutei

import (
	"context"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// CompactOptions configures Compact.
type CompactOptions struct {
	// Segments is where the store's sealed segments live, read to verify
	// the copy's chain from the genesis value (nil: the store's segments
	// folder; a store whose Options.Segments names an object store passes
	// it here, opened with segstore.Open).
	Segments segstore.Store
}

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
// opts (at most one is read) says where the segments live.
// Errors: ErrNotAStore; ErrStoreLocked while a process holds the store
// (nothing changed); ErrChainBroken and the segment errors when the copy
// does not verify (log.db unchanged: repair it first, hikoutei doctor);
// I/O errors; the context's.
func Compact(ctx context.Context, dir string, opts ...CompactOptions) (CompactReport, error) {
	if err := ctx.Err(); err != nil {
		return CompactReport{}, err
	}
	if err := engine.IsStore(dir); err != nil {
		return CompactReport{}, err
	}
	var o CompactOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	r, err := events.Compact(ctx, dir, events.Options{Segments: o.Segments})
	return CompactReport{Before: r.Before, After: r.After, Head: ChainPin{Seq: r.Head.Seq, Hash: ChainHash(r.Head.Hash)},
		Records: r.Records, ReplacedLeftover: r.ReplacedLeftover}, err
}
