package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"syscall"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

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
//
// A read.sqlite that is not a regular file (a directory, a FIFO, a
// device: never opened, so a FIFO cannot hang the command) or whose
// checkpoint SQLite cannot read because the file is damaged (random
// bytes, truncated, empty) is projector.ErrReadModelInvalid, saying why;
// a failure of the environment (I/O, permissions, locks) keeps its error.
func OpenReadModelReadOnly(dir string) (conn *sqlite.Conn, done func(), err error) {
	path := filepath.Join(dir, projector.FileName)
	fi, err := os.Stat(path)
	if errors.Is(err, syscall.ELOOP) { // opening the store sets such a link aside and rebuilds
		return nil, nil, fmt.Errorf("%w: %s is a symbolic link that loops: %w", projector.ErrReadModelInvalid, path, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("no read model in %s (open the store once, or run hikoutei replay): %w", dir, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%w: %s is %s, not a file", projector.ErrReadModelInvalid, path, FileKind(fi.Mode()))
	}
	if conn, done, err = openReadModelReadOnly(dir, path); err != nil {
		return nil, nil, err
	}
	if err := probeReadModel(conn); err != nil {
		done()
		if projector.IsDamage(err) {
			return nil, nil, fmt.Errorf("%w: %s cannot be read: %s", projector.ErrReadModelInvalid, path, damageText(err))
		}
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return conn, done, nil
}

// OpenReadModelFile opens dir's read.sqlite, a regular file, as
// OpenReadModelReadOnly does (nothing created or left in dir) but without
// its probe, for a check that reports a damaged file in its own words
// (doctor); done closes it.
func OpenReadModelFile(dir string) (conn *sqlite.Conn, done func(), err error) {
	return openReadModelReadOnly(dir, filepath.Join(dir, projector.FileName))
}

// openReadModelReadOnly opens the read model at path, dir's, as
// OpenReadModelReadOnly says.
func openReadModelReadOnly(dir, path string) (conn *sqlite.Conn, done func(), err error) {
	if release, ok := events.ShareLog(dir); ok {
		if _, err := os.Lstat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
			if conn, err = openImmutable(path); err == nil {
				return conn, func() { _ = conn.Close(); release() }, nil
			}
		}
		release()
	}
	if conn, err = openURI(path, "readonly_shm=1"); err == nil {
		// The open is lazy: without a -shm the first read is what fails
		// (SQLITE_CANTOPEN), so read once here to fall back.
		err = sqlitex.ExecuteTransient(conn, "PRAGMA schema_version", nil)
		if sqlite.ErrCode(err).ToPrimary() != sqlite.ResultCantOpen {
			return conn, func() { _ = conn.Close() }, nil
		}
		_ = conn.Close()
	}
	if conn, err = sqlite.OpenConn(path, sqlite.OpenReadOnly); err != nil {
		return nil, nil, err
	}
	return conn, func() { _ = conn.Close() }, nil
}

// probeReadModel reads the checkpoint of the read model conn holds: what
// every reader needs first, and where SQLite finds a file that is no
// database, or no read model, before any query of a command does.
func probeReadModel(conn *sqlite.Conn) error {
	return sqlitex.Execute(conn, "SELECT value FROM hk_meta WHERE key = 'checkpoint'", nil)
}

// damageText says why SQLite cannot read a damaged read model, in its
// own words for the file (not a database, malformed), without the query.
func damageText(err error) string {
	if code := sqlite.ErrCode(err).ToPrimary(); code != sqlite.ResultError {
		return code.Message()
	}
	return "it holds no read model (no hk_meta table: an empty file, or another database)"
}

// FileKind names what a directory entry that is not a regular file is
// (a directory, a FIFO, a device, a socket), for messages.
func FileKind(m fs.FileMode) string { return "a " + events.FileKind(m) }

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
