//go:build unix

package privatefile

import "syscall"

// noFollow makes opening a private file fail on a symlink and not block on
// a FIFO.
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
