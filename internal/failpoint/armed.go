//go:build failpoints

package failpoint

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

// Compiled reports whether this build has failpoints (the failpoints
// build tag).
const Compiled = true

var (
	enabled atomic.Bool
	mu      sync.Mutex
	points  map[string]*point
)

// point is one armed failpoint: its action, how often it was reached
// and whether it fired.
type point struct {
	action
	hits  int64
	fired bool
}

// init arms the environment's spec. A spec CheckEnv refuses arms nothing;
// the CLI and the store's Open report it before they take a lease.
func init() {
	if spec := config.Failpoints(); spec != "" && CheckEnv(nil) == nil {
		_ = Enable(spec)
	}
}

// Inject is a failpoint. It does nothing unless failpoints are enabled and
// name has an action.
func Inject(name string) {
	if !enabled.Load() {
		return
	}
	_ = hit(name) // an error action fires only where Err is placed
}

// Err is a failpoint where a write can fail: it returns the injected
// error when an "eio" or "enospc" action fires, and otherwise acts as
// Inject.
func Err(name string) error {
	if !enabled.Load() {
		return nil
	}
	return hit(name)
}

func hit(name string) error {
	mu.Lock()
	p := points[name]
	fire := false
	if p != nil && !p.fired {
		p.hits++
		fire = p.hits == p.at
		p.fired = fire
	}
	mu.Unlock()
	if !fire {
		return nil
	}
	switch p.kind {
	case "eio":
		return &InjectedError{Name: name, Errno: syscall.EIO}
	case "enospc":
		return &InjectedError{Name: name, Errno: syscall.ENOSPC}
	}
	if p.kind == "panic" {
		panic(&Crash{Name: name})
	}
	fmt.Fprintf(os.Stderr, "failpoint: %s crash\n", name)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way; never return into the code under test
}

// Enable replaces the active failpoints with spec ("" disables them all).
// Errors: ErrSpec, ErrUnknown (nothing changes).
func Enable(spec string) error {
	parsed, err := Parse(spec)
	if err != nil {
		return err
	}
	next := map[string]*point{}
	for name, act := range parsed {
		if a, _ := parseAction(act); a != nil {
			next[name] = &point{action: *a}
		}
	}
	mu.Lock()
	points = next
	mu.Unlock()
	enabled.Store(len(next) > 0)
	return nil
}

// Disable turns every failpoint off.
func Disable() { _ = Enable("") }

// Hits returns how many times name was reached since it was enabled.
func Hits(name string) int64 {
	mu.Lock()
	defer mu.Unlock()
	if p := points[name]; p != nil {
		return p.hits
	}
	return 0
}
