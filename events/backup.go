package events

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/internal/process"
)

// BackupInfo describes a copy of a log: what Backup wrote or RestoreLog
// installed. It never holds a payload.
type BackupInfo struct {
	Path        string // the file written
	StoreID     string // the log's store id
	Head        uint64 // the log head in the copy
	ReplicaHead uint64 // the replica commit the copy holds up to (0: never replicated)
	Bytes       int64  // the file's size
	SHA256      string // hex SHA-256 of the file
	// Segments counts the sealed segments the copy's log vouches for,
	// copied into the folder beside the file (BackupSegmentsDir).
	Segments int
	// Leftovers are the temporary files of interrupted backups to the
	// same file that Backup removed (their process no longer runs).
	Leftovers []string
}

// WriteTo writes a consistent copy of log.db to w: bbolt's Tx.WriteTo in
// one read transaction, so the copy is the log as of one commit while
// appends go on. It implements io.WriterTo. A write transaction that must
// grow the file waits until the copy ends.
func (l *Log) WriteTo(w io.Writer) (int64, error) {
	var n int64
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// copyTo writes the copy and reads the heads and the sealed segments it
// holds in the same transaction.
func (l *Log) copyTo(w io.Writer) (BackupInfo, []SegmentSealed, error) {
	info := BackupInfo{StoreID: l.storeID}
	var segs []SegmentSealed
	err := l.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		info.Head, info.ReplicaHead = getU64(meta, metaHead), getU64(meta, metaReplica)
		var err error
		if segs, err = sealedSegments(tx); err != nil {
			return err
		}
		info.Bytes, err = tx.WriteTo(w)
		return err
	})
	info.Segments = len(segs)
	return info, segs, err
}

// Backup writes a consistent copy of the log (see WriteTo) to path, mode
// 0600: into a temporary file beside it, synced, then linked onto path
// (renamed over it with force), and the directory synced, so path is
// either absent or complete. The sealed segments the copy's log vouches
// for (as of the copy's commit) are copied, each checked against its
// digest, into the folder BackupSegmentsDir(path) before path appears;
// a backup that fails removes that folder when it created it (a folder
// of an earlier backup, overwritten with force, stays).
// ctx cancels a copy in progress. Errors: ErrBackupTarget (see
// CheckBackupTarget), ErrLogClosed, *SegmentError (a segment of the store
// is missing or damaged), ctx's, I/O.
func (l *Log) Backup(ctx context.Context, path string, force bool) (BackupInfo, error) {
	real, err := CheckBackupTarget(filepath.Dir(l.Path()), path, force)
	if err != nil {
		return BackupInfo{}, err
	}
	var info BackupInfo
	var segs []SegmentSealed
	_, had := os.Lstat(BackupSegmentsDir(real))
	left := removeDeadCopies(real)
	err = writeAtomically(real, force, func(w io.Writer) error {
		var err error
		info, segs, err = l.copyTo(ctxWriter{ctx, w})
		return err
	}, &info.SHA256, func(string) error { return l.backupSegments(ctx, real, segs) })
	info.Path, info.Leftovers = path, left
	if err != nil && had != nil { // the segments folder is this backup's: no half of it stays
		err = errors.Join(err, os.RemoveAll(BackupSegmentsDir(real)))
	}
	return info, err
}

// CheckBackupTarget refuses a backup target inside any store directory
// (storeDir's or another's: see CheckOutside — the copy would become part
// of a store, or replace one of its files), one that is not a regular
// file (a directory, device, FIFO, socket or symbolic link, even with
// force), and an existing file unless force. It returns the target's path
// with its directory's symbolic links resolved. storeDir is the store
// being copied (it is refused as any store directory is). Errors:
// ErrBackupTarget (with ErrTargetInsideStore when inside a store).
func CheckBackupTarget(storeDir, target string, force bool) (string, error) {
	_ = storeDir
	if target == "" {
		return "", fmt.Errorf("%w: no target path", ErrBackupTarget)
	}
	real, err := CheckOutside(target)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBackupTarget, err)
	}
	st, err := os.Lstat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return real, nil
	case err != nil:
		return "", fmt.Errorf("backup target: %w", err)
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%w: %w", ErrBackupTarget, &NotRegularError{Path: target, Mode: st.Mode()})
	case !force:
		return "", fmt.Errorf("%w: %s exists (the command replaces it with --force; Go callers pass force)", ErrBackupTarget, target)
	}
	return real, nil
}

// copyTempPrefix starts the name of the temporary file writeAtomically
// writes beside path; the process id and a random part follow it
// (.NAME.tmp-<pid>-<random>; earlier builds wrote no process id).
func copyTempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// writeAtomically writes a file at path through fill: into a temporary
// file beside it (0600), hashed into *sum, synced, checked by each of
// checks, then linked onto path (renamed over it when replace), and the
// directory synced. On error nothing is left behind; a process killed
// meanwhile leaves the temporary file, which removeDeadCopies removes.
func writeAtomically(path string, replace bool, fill func(io.Writer) error, sum *string, checks ...func(tmp string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), copyTempPrefix(path)+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return fmt.Errorf("create the copy: %w", err)
	}
	h := sha256.New()
	err = fillAndSync(tmp, h, fill)
	for _, check := range checks {
		if err == nil {
			err = check(tmp.Name())
		}
	}
	if err == nil {
		*sum = hex.EncodeToString(h.Sum(nil))
		err = install(tmp.Name(), path, replace)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func fillAndSync(f *os.File, h hash.Hash, fill func(io.Writer) error) error {
	err := fill(io.MultiWriter(f, h))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// install puts tmp at path: a link (never replacing a file that appeared
// meanwhile) or, with replace, a rename; then syncs the directory.
func install(tmp, path string, replace bool) error {
	if replace {
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	} else {
		if err := os.Link(tmp, path); err != nil {
			return fmt.Errorf("%w: %w", ErrBackupTarget, err)
		}
		if err := os.Remove(tmp); err != nil {
			return err
		}
	}
	return syncDir(filepath.Dir(path))
}

// ctxWriter fails writes once ctx is done, ending a copy in progress.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// removeDeadCopies removes the temporary files of interrupted writes of
// path (a backup killed before it linked its copy): the ones whose name
// carries the id of a process that no longer runs. An earlier build's
// (no process id) and a running process's are kept. It returns the paths
// it removed.
func removeDeadCopies(path string) []string {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil // the write that follows reports an unusable folder
	}
	var removed []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), copyTempPrefix(path))
		pidText, _, hasPID := strings.Cut(rest, "-")
		pid, perr := strconv.Atoi(pidText)
		if !ok || !hasPID || perr != nil || !e.Type().IsRegular() || pid == os.Getpid() || process.Runs(pid) {
			continue
		}
		full := filepath.Join(filepath.Dir(path), e.Name())
		if os.Remove(full) == nil {
			removed = append(removed, full)
		}
	}
	return removed
}
