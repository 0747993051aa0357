package events

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// BackupSegmentsDir is the folder beside a backup file that holds the
// sealed segments the backup's log vouches for: the file's name followed
// by ".segments". A backup of a store with nothing sealed has none.
func BackupSegmentsDir(backup string) string { return backup + ".segments" }

// backupSegments copies the segments segs of the log's store into the
// backup's folder, each checked against the digest its seal recorded
// first (a damaged segment is never copied: *SegmentError). Segments are
// immutable, so a file already there with the vouched digest is kept.
func (l *Log) backupSegments(ctx context.Context, backup string, segs []SegmentSealed) error {
	if len(segs) == 0 {
		return nil
	}
	to := BackupSegmentsDir(backup)
	if err := os.MkdirAll(to, 0o700); err != nil {
		return fmt.Errorf("create the backup's segments folder: %w", err)
	}
	for _, s := range segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copySegment(filepath.Join(l.storeDir(), SegmentsDir), to, s); err != nil {
			return err
		}
	}
	return nil
}

// copySegment copies the segment s from the folder from into the folder
// to, after checking its digest; a file in to that already has it stays.
func copySegment(from, to string, s SegmentSealed) error {
	file, err := readVouched(from, s)
	if err != nil {
		return err
	}
	dst := filepath.Join(to, s.Name)
	if have, err := os.ReadFile(dst); err == nil && fileDigest(have) == s.Digest {
		return nil
	}
	var sum string
	return writeAtomically(dst, true, func(w io.Writer) error {
		_, err := w.Write(file)
		return err
	}, &sum)
}

// readVouched reads the segment s from the folder dir and checks its
// digest. Errors: *SegmentError (ErrSegmentMissing, ErrSegmentDamaged).
func readVouched(dir string, s SegmentSealed) ([]byte, error) {
	file, err := os.ReadFile(filepath.Join(dir, s.Name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &SegmentError{Err: ErrSegmentMissing, Name: s.Name, Reason: "no such file in " + dir}
	}
	if err != nil {
		return nil, &SegmentError{Err: ErrSegmentMissing, Name: s.Name, Reason: err.Error()}
	}
	if d := fileDigest(file); d != s.Digest {
		return nil, &SegmentError{Err: ErrSegmentDamaged, Name: s.Name,
			Reason: fmt.Sprintf("its digest is %s, the log vouches for %s", d, s.Digest)}
	}
	return file, nil
}

// restoreSegments puts the segments the restored copy tmp (in dir)
// vouches for into dir's segments folder from src's backup folder, then
// walks the chain from the genesis value through every one of them (each
// file's digest, records and links). A copy that vouches for none leaves
// dir as it was. On error the segments folder is removed. Errors:
// ErrBackupCorrupt wrapping a *SegmentError or *ChainBrokenError.
func restoreSegments(src, tmp string, info *BackupInfo) (err error) {
	l, err := OpenLog(tmp, Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("%w: the copy does not open: %w", ErrBackupCorrupt, err)
	}
	defer l.Close()
	segs, err := l.Segments()
	if err != nil || len(segs) == 0 {
		return err
	}
	to := filepath.Join(l.storeDir(), SegmentsDir)
	defer func() {
		if err != nil {
			os.RemoveAll(to)
		}
	}()
	if err := os.MkdirAll(to, 0o700); err != nil {
		return fmt.Errorf("create the segments folder: %w", err)
	}
	for _, s := range segs {
		if err := copySegment(BackupSegmentsDir(src), to, s); err != nil {
			return fmt.Errorf("%w: %w", ErrBackupCorrupt, err)
		}
	}
	if err := l.walkSegments(context.Background(), newChainWalker(l.storeID, nil, false)); err != nil {
		return fmt.Errorf("%w: %w", ErrBackupCorrupt, err)
	}
	info.Segments = len(segs)
	return nil
}
