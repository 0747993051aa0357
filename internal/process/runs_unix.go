//go:build unix

package process

import (
	"errors"
	"syscall"
)

// Runs reports whether process pid exists (of any user). A pid of 0 or
// less is never a process's.
func Runs(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
