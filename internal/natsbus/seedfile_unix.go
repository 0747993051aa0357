//go:build unix

package natsbus

import "syscall"

// noFollow makes opening a seed file fail on a symlink and not block on a
// FIFO.
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
