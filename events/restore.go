package events

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// RestoreLog installs a copy of the log file src (a backup, or a log
// caught up from the replicated stream) as dir's log.db, for a new store
// directory: dir must be missing or empty. The copy is written beside its
// final name, synced, verified in full as doctor does (VerifyLogFile:
// every record's checksum and shape, the sequence from 1 to the head
// without a hole, the file's structure) and opened, and only then named
// log.db; src is only read. Nothing else of a store is created (the read
// model is rebuilt from the log afterwards) but the sealed segments the
// copy vouches for: each is copied from the backup's folder
// (BackupSegmentsDir(src)) into dir's segments folder, and the chain is
// walked from the genesis value through all of them, before log.db is
// named. Errors: ErrRestoreTarget; ErrBackupCorrupt wrapping the first
// finding (*CorruptRecordError or *LogCorruptError, naming the sequence;
// *SegmentError naming a segment the backup lacks, ErrSegmentMissing, or
// holds damaged, ErrSegmentDamaged; *ChainBrokenError); I/O errors. On error dir is left
// as it was (a directory RestoreLog created is removed).
func RestoreLog(src, dir string) (BackupInfo, error) {
	return RestoreLogTo(src, dir, nil)
}

// RestoreLogTo is RestoreLog putting the sealed segments into segs (a
// folder or an object store the restored store will be opened with;
// nil: dir's segments folder). A segment segs already holds with the
// digest the copy vouches for is kept (a store restored beside the
// object store its backup's store sealed into). Errors: RestoreLog's;
// ErrSegmentStoreUnavailable when segs cannot be written.
func RestoreLogTo(src, dir string, segs segstore.Store) (BackupInfo, error) {
	created, err := prepareRestoreDir(dir)
	if err != nil {
		return BackupInfo{}, err
	}
	info, err := restoreInto(src, dir, segs)
	if err != nil && created {
		os.Remove(dir) // only when still empty
	}
	return info, err
}

// prepareRestoreDir creates dir (0700) when missing and refuses one that
// holds anything; created reports whether it made dir.
func prepareRestoreDir(dir string) (created bool, err error) {
	if _, err := CheckOutside(dir); err != nil {
		return false, err // target_inside_store, naming dir and the store
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return false, fmt.Errorf("%w: %s exists and is not a directory", ErrRestoreTarget, dir)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("create the store directory: %w", err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("restore target: %w", err)
	case len(entries) > 0:
		return false, RefuseRestoreTarget(dir, len(entries))
	}
	return false, nil
}

// RefuseRestoreTarget is the ErrRestoreTarget of a restore into dir,
// which holds n entries: it names an interrupted restore's leftovers,
// and a store's log already there (a restore killed while it built the
// read model leaves one, which a replay into dir finishes).
func RefuseRestoreTarget(dir string, n int) error {
	var left *RestoreIncompleteError
	err := RequireLog(dir)
	switch {
	case errors.As(err, &left):
		return fmt.Errorf("%w: %w", ErrRestoreTarget, left)
	case err == nil:
		return fmt.Errorf("%w: %s already holds a store's %s; restore into a new or empty directory "+
			"(a restore interrupted while it built the read model is finished by replaying the log: hikoutei replay --dir)",
			ErrRestoreTarget, dir, LogFileName)
	}
	return fmt.Errorf("%w: %s holds %d entries; restore into a new or empty directory", ErrRestoreTarget, dir, n)
}

func restoreInto(src, dir string, segs segstore.Store) (BackupInfo, error) {
	in, length, err := openBackup(src)
	if err != nil {
		return BackupInfo{}, err
	}
	defer in.Close()
	path := filepath.Join(dir, LogFileName)
	info := BackupInfo{Path: path}
	err = writeAtomically(path, false, func(w io.Writer) error {
		n, err := io.Copy(w, io.NewSectionReader(in, 0, length))
		info.Bytes = n
		return err
	}, &info.SHA256, verifyRestored(&info), func(tmp string) error { return restoreSegments(src, tmp, segs, &info) },
		func(string) error { failpoint.Inject(failpoint.RestoreBeforeInstall); return nil })
	return info, err
}

// openBackup opens the backup src for a restore and checks it before a
// byte is copied: it must be a regular file (a FIFO, a device such as
// /dev/zero or a directory is refused: ErrRestoreSource), and its bbolt
// header and meta pages must be a log's (ErrBackupCorrupt wrapping the
// *LogCorruptError). It returns the file and how many bytes the copy
// takes: the meta's high-water mark, which bounds the copy (pages past it
// are unused; a file that grows meanwhile is not followed).
func openBackup(src string) (*os.File, int64, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrRestoreSource, err)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%w: %w", ErrRestoreSource, &NotRegularError{Path: src, Mode: st.Mode(), Source: true})
	}
	in, err := os.Open(src)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: open the backup: %w", ErrRestoreSource, err)
	}
	if st, err = in.Stat(); err != nil || !st.Mode().IsRegular() { // replaced between the two
		in.Close()
		return nil, 0, fmt.Errorf("%w: %s is not a regular file (%v)", ErrRestoreSource, src, err)
	}
	f, err := openBoltFile(in, st.Size())
	if err != nil {
		in.Close()
		var lc *LogCorruptError
		if errors.As(err, &lc) {
			return nil, 0, fmt.Errorf("%w: %s is not a usable log: %w", ErrBackupCorrupt, src, err)
		}
		return nil, 0, fmt.Errorf("read the backup: %w", err)
	}
	return in, int64(f.meta.hwm) * int64(f.ps), nil
}

// verifyRestored checks the copy before it is named log.db and fills
// info from it.
func verifyRestored(info *BackupInfo) func(tmp string) error {
	return func(tmp string) error {
		v, err := VerifyLogFile(tmp)
		if err != nil {
			return err
		}
		if !v.Healthy() {
			return fmt.Errorf("%w: %w", ErrBackupCorrupt, v.Err())
		}
		l, err := OpenLog(tmp, Options{ReadOnly: true})
		if err != nil {
			return fmt.Errorf("%w: the copy does not open: %w", ErrBackupCorrupt, err)
		}
		defer l.Close()
		info.StoreID, info.Head = l.StoreID(), v.Head
		info.ReplicaHead, err = l.ReplicaHead()
		return err
	}
}
