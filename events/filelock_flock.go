//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package events

import (
	"errors"
	"os"
	"syscall"
	"time"

	bolterrors "go.etcd.io/bbolt/errors"
)

// flockSupported: lockFile takes real file locks here.
const flockSupported = true

// lockFile takes the flock bbolt takes (exclusive for a writer, shared for
// a reader) on f, retrying until timeout; then bolt's ErrTimeout. bbolt
// locks the same descriptor again when it opens f, which is a no-op.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return bolterrors.ErrTimeout
		}
		time.Sleep(50 * time.Millisecond) // bbolt's own retry interval
	}
}
