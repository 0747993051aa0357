package projector

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/events"
	"zombiezen.com/go/sqlite"
)

// regularOrAbsent refuses a path that names something other than a
// regular file: opening a FIFO waits for a writer for ever, a directory
// or a device fails later with SQLite's text. Those are
// ErrReadModelInvalid at once, so the store sets them aside as it does a
// damaged file. A path that does not exist is left to the caller.
func regularOrAbsent(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%w: %s is a %s, not a file", ErrReadModelInvalid, filepath.Base(path), events.FileKind(fi.Mode()))
}

// openConn opens the SQLite database at path with flags once
// regularOrAbsent allows it.
func openConn(path string, flags ...sqlite.OpenFlags) (*sqlite.Conn, error) {
	if err := regularOrAbsent(path); err != nil {
		return nil, err
	}
	return sqlite.OpenConn(path, flags...)
}
