//go:build unix

package events

import "syscall"

// noFollowOpen are the flags readRegularFile opens a file with beside
// O_RDONLY: no symbolic link followed, no wait on a FIFO swapped in.
const noFollowOpen = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
