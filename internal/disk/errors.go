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
	// ErrReadModelSetAside: the store directory keeps read models the
	// store set aside (unusable, replaced by a rebuild, ahead of the log),
	// which it never deletes. A notice: commits go on.
	ErrReadModelSetAside = errors.New("read_model_set_aside")
	// ErrNotSetAside: a file to remove as a set-aside read model is not
	// one (its name is not the store's, or it is not a regular file).
	ErrNotSetAside = errors.New("not_set_aside")
	// ErrSetAsideRemoveFailed: a set-aside file could not be removed
	// (permission denied, a read-only filesystem, an I/O error: the
	// wrapped error says which); it is left as it was.
	ErrSetAsideRemoveFailed = errors.New("set_aside_remove_failed")
	// ErrStoreDirUnreadable: the store directory cannot be listed
	// (permission denied, an I/O error: the wrapped error says which).
	ErrStoreDirUnreadable = errors.New("store_dir_unreadable")
	// ErrStoreLogUnopenable: the store's log.db cannot be opened to hold
	// the store while set-aside files are deleted (permission denied, a
	// directory in its place: the message says which); nothing is deleted.
	ErrStoreLogUnopenable = errors.New("store_log_unopenable")
)
