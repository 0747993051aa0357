//go:build !linux

package admin

import (
	"errors"
	"fmt"
	"net"
)

// shortPath: outside Linux, paths are used as given.
func shortPath(path string, fn func(string) error) error { return fn(path) }

// checkPeer: peer credentials are read on Linux only; elsewhere every peer
// is refused (the channel is unusable rather than unchecked).
func checkPeer(*net.UnixConn, int) error {
	return fmt.Errorf("%w: %w", ErrPeerRejected, errors.New("peer credentials are checked on Linux only"))
}
