// Package failpoint injects crashes at named durability boundaries, for the
// crash campaign (internal/crash) and tests.
//
// Production cost: Inject is one atomic load of a bool that is false unless
// the process was started with HIKOUTEI_FAILPOINTS set (or a test called
// Enable). The spec is a comma-separated list of name=action:
//
//	HIKOUTEI_FAILPOINTS="log.after_commit=crash@3,snapshot.before_manifest=crash"
//
// Actions:
//
//	crash     SIGKILL this process the first time the point is reached
//	crash@N   SIGKILL it the N-th time (N >= 1)
//	panic     panic with a *Crash (tests that run in-process)
//	panic@N   panic the N-th time
//	off       nothing (the same as leaving the name out)
//
// A crash writes one line, "failpoint: <name> crash", to stderr before the
// kill, so a supervisor can tell which point fired.
package failpoint

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

// EnvVar is the environment variable read at start-up.
const EnvVar = config.EnvFailpoints

// The failpoints placed in the code (see each call site).
const (
	LogBeforeCommit          = "log.before_commit"           // events.Log.Append: all puts done, bbolt commit not yet
	LogAfterCommit           = "log.after_commit"            // events.Log.Append: bbolt committed (fsynced), caller not told yet
	StoreAfterLogCommit      = "store.after_log_commit"      // hikoutei writer: log committed, SQLite projection not yet
	DispatchAfterClaim       = "dispatch.after_claim"        // effects.Dispatcher.Pass: claims committed, no remote call yet
	DispatchAfterRemoteApply = "dispatch.after_remote_apply" // effects.Dispatcher: batchUpdate answered, effects not settled
	SnapshotBeforeManifest   = "snapshot.before_manifest"    // snapshots.Dir.Take: .sqlite renamed into place, manifest not written
	LeaseFileBeforeRename    = "leasefile.before_rename"     // events.writeFileAtomic: temp lease.toml written and fsynced, not renamed
)

// Names lists every failpoint placed in the code.
var Names = []string{LogBeforeCommit, LogAfterCommit, StoreAfterLogCommit, DispatchAfterClaim,
	DispatchAfterRemoteApply, SnapshotBeforeManifest, LeaseFileBeforeRename}

var (
	enabled atomic.Bool
	mu      sync.Mutex
	points  map[string]*point
)

type point struct {
	kind  string // "crash" | "panic"
	at    int64  // fire on this hit (1-based)
	hits  int64
	fired bool
}

// Crash is the value a "panic" action panics with.
type Crash struct{ Name string }

func (c *Crash) Error() string { return "failpoint " + c.Name }

func init() {
	if spec := config.Failpoints(); spec != "" {
		if err := Enable(spec); err != nil {
			fmt.Fprintf(os.Stderr, "failpoint: ignoring %s: %v\n", EnvVar, err)
		}
	}
}

// Inject is a failpoint. It does nothing unless failpoints are enabled and
// name has an action.
func Inject(name string) {
	if !enabled.Load() {
		return
	}
	hit(name)
}

func hit(name string) {
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
		return
	}
	if p.kind == "panic" {
		panic(&Crash{Name: name})
	}
	fmt.Fprintf(os.Stderr, "failpoint: %s crash\n", name)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way; never return into the code under test
}

// ErrSpec reports a malformed failpoint spec.
var ErrSpec = errors.New("failpoint_spec_invalid")

// Parse checks a spec without enabling it.
func Parse(spec string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, action, ok := strings.Cut(item, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: %q is not name=action", ErrSpec, item)
		}
		if _, err := parseAction(action); err != nil {
			return nil, err
		}
		out[name] = action
	}
	return out, nil
}

func parseAction(a string) (*point, error) {
	kind, n, hasN := strings.Cut(a, "@")
	switch kind {
	case "crash", "panic", "off":
	default:
		return nil, fmt.Errorf("%w: unknown action %q", ErrSpec, a)
	}
	at := int64(1)
	if hasN {
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%w: %q: N must be a positive integer", ErrSpec, a)
		}
		at = v
	}
	if kind == "off" {
		return nil, nil
	}
	return &point{kind: kind, at: at}, nil
}

// Enable replaces the active failpoints with spec ("" disables them all).
// Errors: ErrSpec (nothing changes).
func Enable(spec string) error {
	parsed, err := Parse(spec)
	if err != nil {
		return err
	}
	next := map[string]*point{}
	for name, action := range parsed {
		if p, _ := parseAction(action); p != nil {
			next[name] = p
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
