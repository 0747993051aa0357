//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package events

import (
	"os"
	"time"
)

// flockSupported: lockFile takes no lock here.
const flockSupported = false

// lockFile does nothing where flock is unavailable: bbolt takes its own
// lock when it opens the file, after the checks that read it.
func lockFile(*os.File, bool, time.Duration) error { return nil }
