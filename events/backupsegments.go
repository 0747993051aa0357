package events

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// BackupSegmentsDir is the folder beside a backup file that holds the
// sealed segments the backup's log vouches for: the file's name followed
// by ".segments". A backup of a store with nothing sealed has none.
func BackupSegmentsDir(backup string) string { return backup + ".segments" }

// backupSegments copies the segments segs of the log's segment store
// into the backup's folder, each checked against the digest its seal
// recorded first (a damaged segment is never copied: *SegmentError).
// Segments are immutable, so a file already there with the vouched
// digest is kept.
func (l *Log) backupSegments(ctx context.Context, backup string, segs []SegmentSealed) error {
	if len(segs) == 0 {
		return nil
	}
	to := segstore.NewDir(BackupSegmentsDir(backup))
	if err := os.MkdirAll(to.Path(), 0o700); err != nil {
		return fmt.Errorf("create the backup's segments folder: %w", err)
	}
	for _, s := range segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := copySegment(l.segs, to, s)
		l.noteSegments(err)
		if err != nil {
			return err
		}
	}
	return nil
}

// copySegment copies the segment s from the store from into the store
// to, after checking its digest; one in to that already has it stays
// (put is false then).
func copySegment(from, to segstore.Store, s SegmentSealed) (put bool, err error) {
	file, err := readVouched(from, s)
	if err != nil {
		return false, err
	}
	if have, err := to.Get(context.Background(), s.Name); err == nil && fileDigest(have) == s.Digest {
		return false, nil
	}
	if err := to.Put(context.Background(), s.Name, file); err != nil {
		return false, fmt.Errorf("copy segment %s to %s: %w", s.Name, to.Location(), err)
	}
	return true, nil
}

// restoreSegments puts the segments the restored copy tmp (in dir)
// vouches for into the store to (nil: dir's segments folder) from src's
// backup folder, then walks the chain from the genesis value through
// every one of them (each file's digest, records and links). A copy that
// vouches for none leaves dir as it was. On error the segments this
// restore put are removed again (and dir's folder, when it is left
// empty). Errors: ErrBackupCorrupt wrapping a *SegmentError or
// *ChainBrokenError; ErrSegmentStoreUnavailable.
func restoreSegments(src, tmp string, to segstore.Store, info *BackupInfo) (err error) {
	if to == nil {
		to = segstore.NewDir(filepath.Join(filepath.Dir(tmp), SegmentsDir))
	}
	l, err := OpenLog(tmp, Options{ReadOnly: true, Segments: to})
	if err != nil {
		return fmt.Errorf("%w: the copy does not open: %w", ErrBackupCorrupt, err)
	}
	defer l.Close()
	segs, err := l.Segments()
	if err != nil || len(segs) == 0 {
		return err
	}
	var put []string
	defer func() {
		if err != nil {
			undoRestore(to, put)
		}
	}()
	from := segstore.NewDir(BackupSegmentsDir(src))
	for _, s := range segs {
		did, err := copySegment(from, to, s)
		if errors.Is(err, ErrSegmentStoreUnavailable) && !errors.As(err, new(*SegmentError)) {
			return err
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBackupCorrupt, err)
		}
		if did {
			put = append(put, s.Name)
		}
	}
	if err := l.walkSegments(context.Background(), newChainWalker(l.storeID, nil, false)); err != nil {
		return fmt.Errorf("%w: %w", ErrBackupCorrupt, err)
	}
	info.Segments = len(segs)
	return nil
}

// undoRestore deletes the segments a failed restore put into to, and a
// folder it leaves empty.
func undoRestore(to segstore.Store, put []string) {
	for _, name := range put {
		_ = to.Delete(context.Background(), name)
	}
	if d, ok := to.(*segstore.Dir); ok {
		_ = os.Remove(d.Path()) // only when empty
	}
}
