//go:build unix

package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// die ends the process by sig with its default action (128+sig if that
// does not end it). The Go runtime ignores a SIGPIPE sent with kill; it
// dies of one only on a write to a broken stdout, which a last write
// causes.
func die(sig syscall.Signal) {
	signal.Reset(sig)
	if sig == syscall.SIGPIPE {
		_, _ = os.Stdout.Write([]byte{'\n'})
	}
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond)
	os.Exit(128 + int(sig))
}

// processRuns reports whether process pid exists (of any user).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func ownedByMe(path string) bool {
	st, err := os.Lstat(path)
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}
