//go:build unix

package wakehook

import "syscall"

// noFollow makes opening a key file fail on a symlink and not block on a
// FIFO.
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
