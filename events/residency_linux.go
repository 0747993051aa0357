package events

import (
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// ReleaseMapped drops this process's resident pages of the log's memory map
// (madvise MADV_DONTNEED over the mapped data). bbolt maps the file
// read-only and MAP_SHARED, so nothing is lost: the pages stay in the OS
// page cache and fault back in when a transaction next reads them. Without
// it, the pages every transaction has touched stay counted in the process's
// resident set, which then grows towards the size of log.db. It runs inside
// a read transaction, so bbolt cannot remap meanwhile. Errors: the madvise
// errno.
func (l *Log) ReleaseMapped() error {
	return l.view(func(tx *bolt.Tx) error {
		data := l.db.Info().Data
		if data == 0 || tx.Size() <= 0 {
			return nil
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, data, uintptr(tx.Size()), uintptr(unix.MADV_DONTNEED))
		if errno != 0 {
			return errno
		}
		return nil
	})
}
