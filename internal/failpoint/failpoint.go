// Package failpoint injects crashes at named durability boundaries, for the
// crash campaign (internal/above/lab/crash) and tests.
//
// Failpoints exist only in builds with the build tag "failpoints"
// (`go test -tags failpoints`, `make test`, `make crash`). In every other
// build, release binaries included, Inject is an empty function the
// compiler removes, Enable refuses any spec, and CheckEnv refuses a set
// HIKOUTEI_FAILPOINTS (ErrNotCompiled), so an operator who sets it is told
// at start-up instead of believing a failpoint is armed.
//
// In a build with the tag, Inject is one atomic load of a bool that is
// false unless the process was started with a valid HIKOUTEI_FAILPOINTS (or
// a test called Enable). The spec is a comma-separated list of name=action:
//
//	HIKOUTEI_FAILPOINTS="log.after_commit=crash@3,snapshot.before_manifest=crash"
//
// Names must be among Names (anything else is ErrUnknown). Actions:
//
//	crash     SIGKILL this process the first time the point is reached
//	crash@N   SIGKILL it the N-th time (N >= 1)
//	panic     panic with a *Crash (tests that run in-process)
//	panic@N   panic the N-th time
//	eio       make the write at the point fail with EIO, once (eio@N: the
//	          N-th time); only at points placed with Err, elsewhere nothing
//	enospc    the same with ENOSPC (a full disk)
//	off       nothing (the same as leaving the name out)
//
// A crash writes one line, "failpoint: <name> crash", to stderr before the
// kill, so a supervisor can tell which point fired. A malformed spec in the
// environment arms nothing; CheckEnv (which the CLI and the store's Open
// call before taking any lease) reports it.
package failpoint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	DispatchAfterClaimAhead  = "dispatch.after_claim_ahead"  // effects.Dispatcher run loop: the next batch claimed as a write returned, that write's effects not settled
	SnapshotBeforeManifest   = "snapshot.before_manifest"    // snapshots.Dir.Take: .sqlite renamed into place, manifest not written
	LeaseFileBeforeRename    = "leasefile.before_rename"     // events.writeFileAtomic: temp lease.toml written and fsynced, not renamed
	ReadModelBeforeCommit    = "readmodel.before_commit"     // engine group commit or seal: log committed, events applied in the SQLite transaction, not committed
	AdoptAfterUnit           = "adopt.after_unit"            // engine.Adopt: a unit of adopted rows committed, the next not begun
	InboundAfterWindow       = "inbound.after_window"        // engine observation of an Input tab: a window of its rows decided and committed, the next not begun
	LayoutAfterSheetMigrate  = "layout.after_sheet_migrate"  // engine layout migration: the tab's batchUpdate answered, sheet.layout_migrated not committed
	SealAfterWrite           = "seal.after_write"            // segstore.Dir.Put (a seal into a folder): segment written to its temp file, not synced nor renamed; blobstore.Store.Put (an object store): bytes written, the upload not completed
	SealAfterSync            = "seal.after_sync"             // events.Log.Seal: segment stored (a folder: synced and renamed; an object store: uploaded), not read back nor vouched for
	SealAfterReadBack        = "seal.after_read_back"        // events.Log.Seal: segment read back from its store and checked, segment.sealed not appended
	EraseAfterEvent          = "erase.after_event"           // Store.Erase: subject.erased committed, the key not destroyed
	KeyringBeforeRename      = "keyring.before_rename"       // keyring.Ring.Destroy: the rewritten key file synced, not renamed over keys.db
	SealBeforeCommit         = "seal.before_commit"          // events.Log.Seal: segment.sealed appended and records removed, bbolt commit not yet
	SealAfterCommit          = "seal.after_commit"           // events.Log.Seal: segment.sealed committed (records gone from log.db), strays of earlier seals not removed
	ReplicationBeforePurge   = "replication.before_purge"    // engine (a replicated primary): a seal committed and acknowledged by the stream, the stream's purge of what every host sealed not done (an error action skips it, as a crash would)
	CompactAfterCopy         = "compact.after_copy"          // events.Compact: log.db.compact written and synced, not verified
	CompactBeforeRename      = "compact.before_rename"       // events.Compact: the copy verified, not renamed over log.db
	ReplayBeforeInstall      = "replay.before_install"       // engine.Replay / RebuildReadModel: the read model built in its temporary file, not renamed onto its target
	RestoreBeforeInstall     = "restore.before_install"      // events.RestoreLogTo: the copy of the log written, verified and its segments copied, not named log.db
)

// Names lists every failpoint placed in the code.
var Names = []string{LogBeforeCommit, LogAfterCommit, StoreAfterLogCommit, DispatchAfterClaim,
	DispatchAfterRemoteApply, DispatchAfterClaimAhead, SnapshotBeforeManifest, LeaseFileBeforeRename, ReadModelBeforeCommit, AdoptAfterUnit, InboundAfterWindow,
	LayoutAfterSheetMigrate, SealAfterWrite, SealAfterSync, SealAfterReadBack, SealBeforeCommit, SealAfterCommit, EraseAfterEvent, KeyringBeforeRename,
	CompactAfterCopy, CompactBeforeRename, ReplicationBeforePurge, ReplayBeforeInstall, RestoreBeforeInstall}

// Workload lists the failpoints the crash campaign's workload reaches
// (commits, dispatches, snapshots, restarts, background seals, erasures,
// an offline compaction before some opens): Names without the ones only
// what the workload does not do reaches (adopt, an observation of an
// Input tab of more rows than a window and a change of the entities'
// shape have their own crash tests, the workload runs no
// replicated store, and the operator's replay and restore are tested by
// the CLI's).
var Workload = slices.DeleteFunc(slices.Clone(Names), func(n string) bool {
	return n == AdoptAfterUnit || n == InboundAfterWindow || n == LayoutAfterSheetMigrate || n == ReplicationBeforePurge || n == ReplayBeforeInstall ||
		n == RestoreBeforeInstall
})

// InjectedError is what Err returns when an "eio" or "enospc" action
// fires: it wraps the errno, as a failed write would.
type InjectedError struct {
	Name  string
	Errno syscall.Errno
}

func (e *InjectedError) Error() string { return "failpoint " + e.Name + ": " + e.Errno.Error() }

// Unwrap returns the errno.
func (e *InjectedError) Unwrap() error { return e.Errno }

// Crash is the value a "panic" action panics with.
type Crash struct{ Name string }

func (c *Crash) Error() string { return "failpoint " + c.Name }

// action is what a failpoint does, as a spec gives it.
type action struct {
	kind string // "crash" | "panic" | "eio" | "enospc"
	at   int64  // fire on this hit (1-based)
}

// CheckEnv checks HIKOUTEI_FAILPOINTS as lookup holds it (nil: the process
// environment). Unset or blank is fine. Errors (*config.EnvError naming the
// variable): ErrNotCompiled in a build without the failpoints tag;
// ErrSpec or ErrUnknown for a spec Parse refuses.
func CheckEnv(lookup config.Lookup) error {
	spec := config.FailpointSpec(lookup)
	if blank(spec) {
		return nil
	}
	if !Compiled {
		return &config.EnvError{Var: EnvVar, Err: fmt.Errorf(
			"%w: this build has no failpoints (only builds with -tags failpoints have them); unset the variable", ErrNotCompiled)}
	}
	if _, err := Parse(spec); err != nil {
		return &config.EnvError{Var: EnvVar, Err: err}
	}
	return nil
}

// blank reports a spec with no item (only spaces and commas).
func blank(spec string) bool {
	return strings.TrimSpace(strings.ReplaceAll(spec, ",", "")) == ""
}

// Parse checks a spec without enabling it: name=action items separated by
// commas (blank items ignored), each name among Names and given once.
// Errors: ErrSpec (malformed), *UnknownError (ErrUnknown).
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
		if !slices.Contains(Names, name) {
			return nil, &UnknownError{Name: name, Known: slices.Clone(Names)}
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%w: %q is given twice", ErrSpec, name)
		}
		if _, err := parseAction(action); err != nil {
			return nil, err
		}
		out[name] = action
	}
	return out, nil
}

func parseAction(a string) (*action, error) {
	kind, n, hasN := strings.Cut(a, "@")
	switch kind {
	case "crash", "panic", "eio", "enospc", "off":
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
	return &action{kind: kind, at: at}, nil
}
