package disk

import "errors"

var (
	// ErrDiskFilling: the filesystem holding the store is above the
	// warning share used, or fills within the horizon at the store's
	// current growth. A warning: commits go on.
	ErrDiskFilling = errors.New("disk_filling")
	// ErrDiskFull: the filesystem holding the store is above the critical
	// share used; the next commits may fail to write.
	ErrDiskFull = errors.New("disk_full")
	// ErrSpaceUnknown: this platform cannot tell the filesystem's free
	// space.
	ErrSpaceUnknown = errors.New("disk_space_unknown")
)
