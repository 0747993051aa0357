package events

import (
	"errors"
	"fmt"
	"os"

	bolterrors "go.etcd.io/bbolt/errors"
)

// LockRebuild takes the store directory dir's rebuild lock: an exclusive
// file lock on the directory itself, which a rebuild of the read model
// holds while it builds in the one temporary file the store has for it.
// Readers of the log hold only a shared lock on log.db, so without it two
// rebuilds of one store run at once and the second removes the file the
// first builds in. A killed rebuild's lock goes with its process. It
// returns the release; an error wrapping ErrStoreLocked when another
// rebuild holds it. Where file locks are unavailable it takes none.
func LockRebuild(dir string) (release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock the rebuild: %w", err)
	}
	err = lockFile(f, true, 0)
	if errors.Is(err, bolterrors.ErrTimeout) {
		err = fmt.Errorf("another rebuild of the read model of %s runs: %w", dir, ErrStoreLocked)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { _ = f.Close() }, nil // closing releases the lock
}
