package events

import (
	"errors"
	"os"
	"path/filepath"

	bolterrors "go.etcd.io/bbolt/errors"
)

// WriterHolds reports whether a process holds dir's log.db for writing
// now: the exclusive file lock a writer keeps while it runs is taken. A
// lease.toml left without it is a run that ended without closing (killed,
// crashed): no process holds the store, and the next open reconciles the
// leftover. known is false where the file lock cannot be tested (then held
// is false too) or the log cannot be opened.
func WriterHolds(dir string) (held, known bool) {
	if !flockSupported {
		return false, false
	}
	f, err := os.Open(filepath.Join(dir, LogFileName))
	if err != nil {
		return false, false
	}
	defer f.Close() // releases the shared lock taken below, if any
	err = lockFile(f, false, 0)
	switch {
	case err == nil:
		return false, true
	case errors.Is(err, bolterrors.ErrTimeout):
		return true, true
	}
	return false, false
}

// LogIdle reports whether no process has dir's log.db open now: no
// writer, and no reader (a replay, a restore's rebuild, a compaction,
// status itself), as an exclusive file lock on it can be taken (it is
// released at once). A file an interrupted command left in the store
// directory is then no running command's. known is false where the file
// lock cannot be tested (then idle is false too) or log.db cannot be
// opened.
func LogIdle(dir string) (idle, known bool) {
	if !flockSupported {
		return false, false
	}
	f, err := os.Open(filepath.Join(dir, LogFileName))
	if err != nil {
		return false, false
	}
	defer f.Close() // releases the lock taken below, if any
	err = lockFile(f, true, 0)
	switch {
	case err == nil:
		return true, true
	case errors.Is(err, bolterrors.ErrTimeout):
		return false, true
	}
	return false, false
}

// ShareLog takes a shared file lock on dir's log.db without waiting and
// keeps it until release is called: while it is held no writer opens the
// store (a writer's lock is exclusive), so a reader of the store's files
// sees them unchanged. ok is false (release then does nothing) when a
// process holds log.db exclusively (a writer, a compaction), where the
// file lock cannot be taken, or when log.db cannot be opened.
func ShareLog(dir string) (release func(), ok bool) {
	none := func() {}
	if !flockSupported {
		return none, false
	}
	f, err := os.Open(filepath.Join(dir, LogFileName))
	if err != nil {
		return none, false
	}
	if err := lockFile(f, false, 0); err != nil {
		_ = f.Close()
		return none, false
	}
	return func() { _ = f.Close() }, true // closing releases the lock
}
