//go:build unix

package disk

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// statfs asks the kernel for the space of dir's filesystem: free is what
// an unprivileged process may still use.
func statfs(dir string) (Space, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return Space{}, fmt.Errorf("statfs: %w", err)
	}
	bs := uint64(st.Bsize) //nolint:unconvert // int64 on some platforms
	return Space{Free: uint64(st.Bavail) * bs, Total: uint64(st.Blocks) * bs}, nil
}
