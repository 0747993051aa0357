package admin

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"syscall"
	"time"
)

// maxSocketPath is the longest path bind/connect take directly: sun_path
// holds 108 bytes on Linux, with a terminating NUL.
const maxSocketPath = 107

// listenPath binds a Unix listener at path (see shortPath for long paths).
func listenPath(path string) (*net.UnixListener, error) {
	var ln *net.UnixListener
	err := shortPath(path, func(p string) error {
		var err error
		ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		return err
	})
	return ln, err
}

// dialPath connects to path; a missing socket or one nobody listens on
// (a stale file) is ErrUnavailable.
func dialPath(path string, timeout time.Duration) (*net.UnixConn, error) {
	var c net.Conn
	err := shortPath(path, func(p string) error {
		var err error
		c, err = net.DialTimeout("unix", p, timeout)
		return err
	})
	switch {
	case err == nil:
		return c.(*net.UnixConn), nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
		return nil, fmt.Errorf("%w: nothing listens on %s", ErrUnavailable, filepath.Base(path))
	}
	return nil, err
}
