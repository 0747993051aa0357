//go:build !linux

package events

// ReleaseMapped is a no-op where the resident pages of a file mapping are
// not released this way (see the Linux implementation).
func (l *Log) ReleaseMapped() error { return nil }
