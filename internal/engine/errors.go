package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/replication"
)

// Sentinel errors of the engine (stable snake_case codes). The root
// package re-exports the ones an application matches.
var (
	// ErrMirrorBehind (nats_mirror_behind): the NATS event mirror has not
	// received a committed record for longer than its bound
	// (NATSConfig.MirrorLagBound): Health.Mirror, a *MirrorLagError with
	// the lag in records and seconds. Commits never depend on it.
	ErrMirrorBehind = errors.New("nats_mirror_behind")
	// ErrRetentionFailing (retention_failing): the store's background
	// sealing (Config.Retention) failed at its last attempt: Health's
	// Retention.Err wraps it with the cause. Commits go on; log.db keeps
	// the records until a seal succeeds.
	ErrRetentionFailing = errors.New("retention_failing")
	// ErrInvalidEntity: an entity declaration is unusable (no or several
	// primary keys, a non-string key, an unsupported field type, a bad name).
	ErrInvalidEntity = errors.New("invalid_entity_definition")
	// ErrStoreClosed: the store was used after Close.
	ErrStoreClosed = errors.New("store_closed")
	// ErrInvalidResolution: a resolution other than keep_system or
	// use_sheet.
	ErrInvalidResolution = errors.New("invalid_resolution")
	// ErrReadModelBehind: the commit is durable in the log, but applying it
	// to read.sqlite failed; the store retries before the next commit and
	// on reopen. Reads may not show the commit until then.
	ErrReadModelBehind = errors.New("read_model_behind")
	// ErrLogBehindReadModel: at open, the read model had applied records
	// past the log head: the log lost acknowledged records (a damaged
	// page, an older log.db restored). The store rebuilt its read model
	// from the log, recorded the gap in the log and reports it in Health.
	// See *LogGapError.
	ErrLogBehindReadModel = errors.New("log_behind_read_model")
	// ErrReadModelUnavailable: the read model could not be brought up to
	// the log before deciding (e.g. the disk is full); nothing of the unit
	// was committed. Health reports it until a repair succeeds.
	ErrReadModelUnavailable = errors.New("read_model_unavailable")
	// ErrLogWrite: the log could not write the unit (disk full, I/O
	// error); nothing of it was committed. Health reports it until a
	// commit succeeds.
	ErrLogWrite = errors.New("log_write_failed")
	// ErrLogCommitUncertain: the log's commit failed after its records may
	// have reached the file (a failed fsync): whether the unit is durable
	// is unknown, so the store refuses every further commit until it is
	// closed and reopened, which shows what the log holds.
	ErrLogCommitUncertain = errors.New("log_commit_uncertain")
	// ErrSyncStartup: sync is configured but cannot start (no provider, an
	// invalid spreadsheet id, a bad cadence).
	ErrSyncStartup = errors.New("sync_startup_failed")
	// ErrSyncRouteEmpty: a route of SyncConfig.Routes names no
	// spreadsheet or no entity (wrapped in ErrSyncStartup).
	ErrSyncRouteEmpty = errors.New("sync_route_empty")
	// ErrSyncRouteSpreadsheetTwice: a route names the default spreadsheet
	// or another route's (wrapped in ErrSyncStartup).
	ErrSyncRouteSpreadsheetTwice = errors.New("sync_route_spreadsheet_twice")
	// ErrSyncRouteEntityTwice: an entity is routed twice (wrapped in
	// ErrSyncStartup).
	ErrSyncRouteEntityTwice = errors.New("sync_route_entity_twice")
	// ErrSyncRouteEntityUnknown: a route names an entity the store does
	// not declare (wrapped in ErrSyncStartup).
	ErrSyncRouteEntityUnknown = errors.New("sync_route_entity_unknown")
	// ErrSyncBlocked: sync health is blocked: the spreadsheet or a tab
	// refuses the projection (the reason code follows, e.g.
	// sheet_tab_missing, access_denied, quota); see SyncHealth.
	ErrSyncBlocked = errors.New("sync_blocked")
	// ErrSyncDiverged: the last reconciliation found rows of a tab that
	// differ from canonical state; see SyncHealth.
	ErrSyncDiverged = errors.New("sync_diverged")
	// ErrSyncNotConfigured: a request for the sync workers (e.g. poll
	// now) reached a store that runs without sync.
	ErrSyncNotConfigured = errors.New("sync_not_configured")
	// ErrSyncNotProvisioned: sync is configured but the spreadsheet is not
	// provisioned yet (Health.Sync; the last provisioning error follows).
	ErrSyncNotProvisioned = errors.New("sync_not_provisioned")
	// ErrLogDamaged: the check at open found a damaged record, page or
	// chain link in log.db; the store opened for reads but refuses every
	// commit until the log is repaired (doctor, salvage).
	ErrLogDamaged = errors.New("log_damaged")
	// ErrNotAStore: a tool was pointed at a directory that holds no store;
	// it creates nothing there.
	ErrNotAStore = errors.New("not_a_store")
	// ErrConflictNotFound: no conflict has that id.
	ErrConflictNotFound = errors.New("conflict_not_found")
	// ErrReplayGap: an event source skipped a sequence.
	ErrReplayGap = errors.New("replay_sequence_gap")
	// ErrReplayTarget: a replay target already exists (a file, its
	// -wal/-shm, or a directory) and replacing it was not forced.
	ErrReplayTarget = errors.New("replay_target_not_empty")
	// ErrReplayTargetInStore: a replay target is inside a store directory;
	// only the store writes its own files (refused even when forced).
	ErrReplayTargetInStore = errors.New("replay_target_inside_store")
	// ErrAsOfOutOfRange: a point in time asked of AsOf lies outside the
	// log: a sequence of 0 or past the head, or a time before the first
	// record's.
	ErrAsOfOutOfRange = errors.New("as_of_out_of_range")
	// ErrStandby: the store is a warm standby of a replicated store: it
	// serves reads and takes over when the primary's lease lapses; its
	// primary takes the commits.
	ErrStandby = errors.New("replication_standby")
	// ErrTakeoverFailed: a standby took the lease across hosts but could
	// not open the store as the primary; it gave the lease up and refuses
	// commits.
	ErrTakeoverFailed = errors.New("replication_takeover_failed")
	// ErrStandbyTooEarly: a standby was opened on a replicated store no
	// primary has written yet (the stream names no store id): start the
	// primary first.
	ErrStandbyTooEarly = errors.New("replication_no_primary_yet")
	// ErrStreamPurged: a standby (or a primary catching up) needs commits
	// its replicated stream no longer holds: they were sealed on every
	// host and purged (*replication.PurgedError names them). It is
	// replication.ErrStreamPurged.
	ErrStreamPurged = replication.ErrStreamPurged
	// ErrNotARowTab: a reconciliation named a tab that shows no entity
	// rows (or is not in the layout).
	ErrNotARowTab = errors.New("not_a_row_tab")
)

// Sentinel errors of adopting a tab people kept (Engine.Adopt,
// PreviewAdoption; the root package re-exports them). The header's own
// errors are package layout's (ErrAdoptHeaderDuplicate, …).
var (
	// ErrAdoptNeedsSync: the store was opened without sync options for
	// the spreadsheet (or with a client that cannot read a tab).
	ErrAdoptNeedsSync = errors.New("adopt_sync_not_configured")
	// ErrAdoptEntityNotDeclared: the store does not declare the entity
	// (the message lists the ones it does): open it once with the
	// application that declares it.
	ErrAdoptEntityNotDeclared = errors.New("adopt_entity_not_declared")
	// ErrAdoptTabNotFound: the spreadsheet has no tab of that title.
	ErrAdoptTabNotFound = errors.New("adopt_tab_not_found")
	// ErrAdoptTabAdopted: the tab was adopted already (it is kept as
	// "<tab> (before hikoutei)"), or another tab has the title it would
	// be kept under.
	ErrAdoptTabAdopted = errors.New("adopt_tab_already_adopted")
	// ErrAdoptTabReserved: the tab is one of the store's own (System,
	// Input, Sync_Conflicts, …).
	ErrAdoptTabReserved = errors.New("adopt_tab_reserved")
	// ErrAdoptTabChanged: between the read and the rename, the tab was
	// renamed or removed, or another tab took its kept title: nothing was
	// renamed; adopt again (the rows already committed are unchanged).
	ErrAdoptTabChanged = errors.New("adopt_tab_changed")
	// ErrAdoptInterrupted: an adoption stopped before it kept its tab
	// (killed, the machine stopped, or it failed): some rows are records,
	// the rest not quarantined, the tab not renamed. Health names it; the
	// same adoption run again finishes it.
	ErrAdoptInterrupted = errors.New("adopt_interrupted")
)

// Sentinel errors of subscriptions (stable snake_case codes; the root
// package re-exports them).
var (
	// ErrSubscriptionHandler: a subscription's handler returned an error;
	// the subscription stopped before that event (see *SubscriptionError).
	ErrSubscriptionHandler = errors.New("subscription_handler_failed")
	// ErrSubscriptionPanic: a subscription's handler panicked; the panic
	// was recovered and the subscription stopped before that event.
	ErrSubscriptionPanic = errors.New("subscription_handler_panicked")
	// ErrSubscriptionActive: a subscription of that name already runs on
	// this store.
	ErrSubscriptionActive = errors.New("subscription_active")
	// ErrInvalidSubscription: an empty or over-long subscription name, a
	// missing handler or a negative batch size.
	ErrInvalidSubscription = errors.New("invalid_subscription")
	// ErrSubscriptionCheckpoint: a subscription's durable checkpoint is
	// past the log head or negative: it names events the log never had
	// (a changed read model, a bit flip, a read model of another copy).
	// Subscribe refuses to run it rather than skip every event up to it
	// (see *SubscriptionCheckpointError).
	ErrSubscriptionCheckpoint = errors.New("subscription_checkpoint_invalid")
	// ErrSubscriptionCheckpointWrite: recording a subscription's
	// checkpoint in the read model failed (a full disk, the write lock
	// held past the busy timeout); the run stopped and the events after
	// the durable checkpoint are handed again at the next run.
	ErrSubscriptionCheckpointWrite = errors.New("subscription_checkpoint_write_failed")
)

// SubscriptionCheckpointError is a subscription checkpoint the log
// cannot have written: negative, or past the log head. It matches
// ErrSubscriptionCheckpoint.
type SubscriptionCheckpointError struct {
	Name       string
	Checkpoint int64  // as stored
	Head       uint64 // the log head
}

func (e *SubscriptionCheckpointError) Error() string {
	what := fmt.Sprintf("is past the log head %d", e.Head)
	if e.Checkpoint < 0 {
		what = "is negative"
	}
	return fmt.Sprintf("%s: subscription %q's checkpoint %d %s, which the log cannot have written (the read model was changed or "+
		"damaged, or comes from another copy of the store); nothing is delivered. Set it to the last sequence the consumer handled "+
		"(hk_subscriptions in read.sqlite, store closed), or delete its row to deliver every event again",
		ErrSubscriptionCheckpoint, e.Name, e.Checkpoint, what)
}

// Unwrap gives ErrSubscriptionCheckpoint.
func (e *SubscriptionCheckpointError) Unwrap() error { return ErrSubscriptionCheckpoint }

// CheckSubscriptionCheckpoint returns a *SubscriptionCheckpointError
// when the stored checkpoint of subscription name is negative or past
// head, else nil.
func CheckSubscriptionCheckpoint(name string, stored int64, head uint64) error {
	if stored < 0 || uint64(stored) > head {
		return &SubscriptionCheckpointError{Name: name, Checkpoint: stored, Head: head}
	}
	return nil
}

// SubscriptionError says which event a subscription's handler failed on.
// errors.Is matches ErrSubscriptionHandler or ErrSubscriptionPanic, and the
// handler's own error.
type SubscriptionError struct {
	Name  string // the subscription
	Seq   uint64 // the event the handler failed on; the checkpoint is before it
	Panic any    // the recovered value when the handler panicked (nil otherwise)
	Err   error  // the handler's error (nil after a panic)
}

func (e *SubscriptionError) Error() string {
	if e.Panic != nil {
		return fmt.Sprintf("%s: subscription %q at seq %d: %v", ErrSubscriptionPanic, e.Name, e.Seq, e.Panic)
	}
	return fmt.Sprintf("%s: subscription %q at seq %d: %v", ErrSubscriptionHandler, e.Name, e.Seq, e.Err)
}

// Unwrap gives the sentinel and the handler's error.
func (e *SubscriptionError) Unwrap() []error {
	if e.Panic != nil {
		return []error{ErrSubscriptionPanic}
	}
	return []error{ErrSubscriptionHandler, e.Err}
}

// Sentinel errors of shape changes at Open (stable snake_case codes; the
// root package re-exports them).
var (
	// ErrShapeIncompatible: the declared entity shapes differ from the
	// last recorded ones in a way some current record's value cannot
	// take (a retype, a new primary key, a removed entity with records)
	// and no migration maps it: Open refused and wrote nothing (see
	// *ShapeChangeError).
	ErrShapeIncompatible = errors.New("shape_change_incompatible")
	// ErrMigrationInvalid: a migration passed to Open cannot apply: its
	// entity is not declared, its Old type is not the entity's last
	// recorded shape, its New type is not the declared one, or two
	// migrations of one entity wait to run. Nothing was written.
	ErrMigrationInvalid = errors.New("migration_invalid")
	// ErrMigrationFailed: a migration's function returned an error or
	// panicked on a record, produced an invalid record, mapped two records
	// to one key, or would remove a record with an open conflict (new
	// key); nothing was written (see *MigrationError).
	ErrMigrationFailed = errors.New("migration_failed")
)

// ShapeChangeError is Open's refusal of an incompatible shape change:
// each change some current records' values cannot take, with how many
// records and the first keys (record ids, never field values). errors.Is
// matches ErrShapeIncompatible.
type ShapeChangeError struct {
	Refused []aggregates.ShapeIncompatibility
}

func (e *ShapeChangeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: nothing was written; pass a migration for the entity (hikoutei.Migrate) or keep its recorded shape:", ErrShapeIncompatible)
	for i, r := range e.Refused {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" " + r.String())
	}
	return b.String()
}

// Unwrap gives ErrShapeIncompatible.
func (e *ShapeChangeError) Unwrap() error { return ErrShapeIncompatible }

// MigrationError says which migration failed, on which record (its key,
// never its values) and why. errors.Is matches ErrMigrationFailed and the
// function's own error.
type MigrationError struct {
	Migration string // "<entity>/<version>"
	Key       string // the record's key ("" when no single record is to blame)
	Reason    string // what went wrong, without values
	Panic     any    // the recovered value when the function panicked (not printed)
	Err       error  // the function's error, or the cause
}

func (e *MigrationError) Error() string {
	msg := fmt.Sprintf("%s: %s", ErrMigrationFailed, e.Migration)
	if e.Key != "" {
		msg += fmt.Sprintf(": record %q", e.Key)
	}
	msg += ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + "; nothing was written"
}

// Unwrap gives ErrMigrationFailed and the cause.
func (e *MigrationError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrMigrationFailed}
	}
	return []error{ErrMigrationFailed, e.Err}
}

// PublicAs, set once by the root package before any store opens, lets
// errors.As find an error of this package as the root package's type of
// the same shape (the root declares its own types so that its
// documentation shows their fields and methods).
var PublicAs func(err error, target any) bool

func publicAs(err error, target any) bool { return PublicAs != nil && PublicAs(err, target) }

// As matches the root package's SubscriptionCheckpointError.
func (e *SubscriptionCheckpointError) As(target any) bool { return publicAs(e, target) }

// As matches the root package's SubscriptionError.
func (e *SubscriptionError) As(target any) bool { return publicAs(e, target) }

// As matches the root package's ShapeChangeError.
func (e *ShapeChangeError) As(target any) bool { return publicAs(e, target) }

// As matches the root package's MigrationError.
func (e *MigrationError) As(target any) bool { return publicAs(e, target) }

// As matches the root package's MirrorLagError.
func (e *MirrorLagError) As(target any) bool { return publicAs(e, target) }
