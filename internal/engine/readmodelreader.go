package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// OpenReadModelReadOnly opens dir's read model for a command that reads
// it and must change nothing in dir (status, the inspection commands, a
// dry run); done closes it. SQLite opens a database in WAL mode with its
// -wal and -shm files, creating them when absent, and a read-only
// connection cannot remove them when it closes: a closed store would be
// left two empty files. So when no -wal file exists (nothing waits to be
// checkpointed) and a shared lock on log.db can be held until done (no
// writer can open the store meanwhile), the read model is opened
// immutable: no lock, no file created. Otherwise (a process holds the
// store: its -wal and -shm exist) it is read through the WAL with the
// -shm opened read-only (SQLite's readonly_shm: the reader marks nothing
// in it, and never blocks the writer); only where that cannot open (no
// -shm) is it opened read-only as before.
func OpenReadModelReadOnly(dir string) (conn *sqlite.Conn, done func(), err error) {
	path := filepath.Join(dir, projector.FileName)
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("no read model in %s (open the store once, or run hikoutei replay): %w", dir, err)
	}
	if release, ok := events.ShareLog(dir); ok {
		if _, err := os.Lstat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
			if conn, err = openImmutable(path); err == nil {
				return conn, func() { _ = conn.Close(); release() }, nil
			}
		}
		release()
	}
	if conn, err = openURI(path, "readonly_shm=1"); err == nil {
		return conn, func() { _ = conn.Close() }, nil
	}
	if conn, err = sqlite.OpenConn(path, sqlite.OpenReadOnly); err != nil {
		return nil, nil, err
	}
	return conn, func() { _ = conn.Close() }, nil
}

// openImmutable opens the database at path read-only with SQLite's
// immutable flag: no lock is taken and no -wal or -shm file is created.
func openImmutable(path string) (*sqlite.Conn, error) {
	return openURI(path, "immutable=1")
}

// openURI opens the database at path read-only with the URI parameters
// query.
func openURI(path, query string) (*sqlite.Conn, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: query}
	return sqlite.OpenConn(u.String(), sqlite.OpenReadOnly, sqlite.OpenURI)
}
