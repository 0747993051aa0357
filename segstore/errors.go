package segstore

import "errors"

// Sentinel errors of the segment stores.
var (
	// ErrNotFound: no segment of that name is stored.
	ErrNotFound = errors.New("segment_not_found")
	// ErrUnavailable: the segment store cannot be used now (unreachable,
	// refused, timed out, an I/O error of its folder) or the URL names
	// none this program can open.
	ErrUnavailable = errors.New("segment_store_unavailable")
	// ErrInvalidName: a segment name that is not a single path element.
	ErrInvalidName = errors.New("segment_name_invalid")
)
