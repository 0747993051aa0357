//go:build linux

package admin

import (
	"fmt"
	"net"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// shortPath runs fn with a name for path that bind and connect accept. A
// path longer than sun_path allows is reached through the store
// directory's descriptor: /proc/self/fd/N/admin.sock names the same file.
func shortPath(path string, fn func(string) error) error {
	if len(path) <= maxSocketPath {
		return fn(path)
	}
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the socket's directory: %w", err)
	}
	defer unix.Close(fd)
	return fn(fmt.Sprintf("/proc/self/fd/%d/%s", fd, filepath.Base(path)))
}

// checkPeer admits only a peer running under uid (SO_PEERCRED).
func checkPeer(c *net.UnixConn, uid int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPeerRejected, err)
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return fmt.Errorf("%w: %w", ErrPeerRejected, err)
	}
	if cerr != nil {
		return fmt.Errorf("%w: %w", ErrPeerRejected, cerr)
	}
	if int(cred.Uid) != uid {
		return fmt.Errorf("%w: peer uid %d is not the store owner's", ErrPeerRejected, cred.Uid)
	}
	return nil
}
