package events

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// CompactSuffix names the temporary file a compaction writes beside
// log.db (log.db.compact); a leftover of an interrupted compaction is
// never read and the next compaction replaces it.
const CompactSuffix = ".compact"

// compactTxBytes bounds one transaction of the copy (bbolt.Compact).
const compactTxBytes = 64 << 20

// CompactReport is what Compact did.
type CompactReport struct {
	Before, After int64    // log.db's size in bytes before and after
	Head          ChainPin // the chain head, the same in both files
	Records       uint64   // records the result's chain walk covered (segments included)
	// ReplacedLeftover is true when a log.db.compact an interrupted
	// compaction left was replaced.
	ReplacedLeftover bool
}

// Compact rewrites the closed store's log.db in dir into a fresh file
// holding the same keys and values without the free pages (bbolt's
// Compact), so that the space seals freed goes back to the filesystem.
// First it removes from log.db the stream index entries an earlier
// build kept for sealed records (what its next seals would remove, a
// chunk a transaction: reads are the same before and after).
// It holds the log's file lock throughout (a running store: ErrStoreLocked,
// and Compact changes nothing); it writes DIR/log.db.compact (0600),
// syncs it, opens it as a log and walks its chain from the genesis value
// across the sealed segments to the original's head, and only then renames
// it over log.db and syncs the folder. A crash at any step leaves the
// original log.db intact (or, after the rename, the verified copy).
// Errors: *StoreLockedError; the chain walk's errors (*ChainBrokenError,
// *SegmentError...) when the copy does not verify (log.db is untouched);
// I/O errors.
func Compact(ctx context.Context, dir string, opts Options) (CompactReport, error) {
	path := filepath.Join(dir, LogFileName)
	src, err := OpenLog(path, Options{Clock: opts.Clock, OpenTimeout: opts.OpenTimeout})
	if err != nil {
		return CompactReport{}, DescribeLocked(dir, err)
	}
	defer src.Close()
	if err := src.pruneIndex(ctx); err != nil {
		return CompactReport{}, fmt.Errorf("compact: %w", err)
	}
	rep, err := src.compactInto(ctx, path+CompactSuffix, opts.Segments)
	if err != nil {
		return rep, err
	}
	failpoint.Inject(failpoint.CompactBeforeRename)
	if err := os.Rename(path+CompactSuffix, path); err != nil {
		return rep, fmt.Errorf("compact: rename the copy over log.db: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return rep, fmt.Errorf("compact: sync the store folder: %w", err)
	}
	return rep, nil
}

// compactInto copies l into a fresh file at tmp and verifies the copy,
// reading the sealed segments from segs (nil: the store's folder).
func (l *Log) compactInto(ctx context.Context, tmp string, segs segstore.Store) (CompactReport, error) {
	var rep CompactReport
	fi, err := os.Stat(l.Path())
	if err != nil {
		return rep, err
	}
	rep.Before = fi.Size()
	if rep.Head, err = l.ChainHead(); err != nil {
		return rep, err
	}
	switch err := os.Remove(tmp); {
	case err == nil:
		rep.ReplacedLeftover = true
	case !errors.Is(err, fs.ErrNotExist):
		return rep, fmt.Errorf("compact: remove the leftover %s: %w", filepath.Base(tmp), err)
	}
	if err := copyCompacted(l.db, tmp); err != nil {
		_ = os.Remove(tmp)
		return rep, err
	}
	failpoint.Inject(failpoint.CompactAfterCopy)
	if rep.After, rep.Records, err = verifyCompacted(ctx, tmp, rep.Head, segs); err != nil {
		_ = os.Remove(tmp)
		return rep, err
	}
	return rep, nil
}

// copyCompacted writes src's keys and values into a new bbolt file at
// path (0600), synced.
func copyCompacted(src *bolt.DB, path string) error {
	dst, err := bolt.Open(path, 0o600, &bolt.Options{})
	if err != nil {
		return fmt.Errorf("compact: create %s: %w", filepath.Base(path), err)
	}
	err = bolt.Compact(dst, src, compactTxBytes)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("compact: copy log.db: %w", err)
	}
	return nil
}

// verifyCompacted opens the copy at path read-only as a log and walks its
// chain from the genesis value (across the segments) to head; it returns
// the copy's size and the records walked.
func verifyCompacted(ctx context.Context, path string, head ChainPin, segs segstore.Store) (int64, uint64, error) {
	cp, err := OpenLog(path, Options{ReadOnly: true, Segments: segs})
	if err != nil {
		return 0, 0, fmt.Errorf("compact: open the copy: %w", err)
	}
	defer cp.Close()
	opts := ChainVerifyOptions{AcceptSalvageHoles: true}
	if head.Seq > 0 {
		opts.Pin = &head
	}
	vr, err := cp.VerifyChain(ctx, opts)
	if err != nil {
		return 0, 0, fmt.Errorf("compact: the copy does not verify (log.db is unchanged): %w", err)
	}
	if got, err := cp.ChainHead(); err != nil || got != head {
		return 0, 0, errors.Join(err, fmt.Errorf("compact: the copy's head %s is not log.db's %s (log.db is unchanged)", got, head))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), vr.Records, nil
}
