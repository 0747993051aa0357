package hikoutei

import (
	"context"
	"fmt"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// Health separates local health (the store can commit) from sync health
// (the spreadsheet is being materialised). A nil field is healthy.
type Health struct {
	// Local: the store cannot commit now — the lease was lost, it is
	// closed, the log cannot be written (log_write_failed) or the read
	// model cannot be brought up to the log (read_model_unavailable).
	Local error
	// Sync: the sync workers stopped (sync_divergence, writer_displaced),
	// the spreadsheet is not provisioned yet, or SyncHealth is blocked
	// (ErrSyncBlocked with the reason code) or diverged (ErrSyncDiverged).
	// Nil when sync is ok, behind, or off.
	Sync error
	// SyncHealth is the spreadsheet's sync health, per tab: ok, behind,
	// migrating (the tab follows a change of the entities' shape),
	// blocked (with a reason code) or diverged. It is computed from local
	// state only and never waits on the network. Nil without sync.
	SyncHealth *SyncHealth
	// Integrity: damage the store found in itself when it opened — the
	// log had lost acknowledged records (log_behind_read_model; the gap is
	// also recorded in the log). Commits go on.
	Integrity error
	// Mirror is the NATS event mirror's last failure, with its stable code
	// (e.g. nats_mirror_foreign_record: a record in the stream that this
	// store did not write; nats_unavailable), or, when it has not failed,
	// nats_mirror_behind (ErrMirrorBehind, *MirrorLagError) once the
	// oldest committed record it does not hold has waited longer than its
	// bound (NATSOptions.MirrorLagBound): never ok past the bound (I36).
	// Nil when the mirror is off or within its bound. Commits never depend
	// on it.
	Mirror error
	// MirrorLag is how far the mirror trails the log, in records and
	// seconds (nil when the mirror is off).
	MirrorLag *MirrorLag
	// Replication is a replicated store's role (nil when not replicated):
	// primary, standby (Local is ErrStandby: it serves reads, its
	// primary takes the commits) or fenced (another primary took over;
	// Local is ErrReplicationFenced), with the lease epoch and the last
	// stream commit the store holds.
	Replication *ReplicationHealth
	// Admin: the administrative channel cannot accept connections now
	// (admin_accept_failed, wrapping the cause: e.g. too many open files
	// in the process). It retries with a backoff and recovers by itself
	// once the resource is back; commits never depend on it.
	Admin error
}

// MirrorLag is how far the NATS event mirror trails the log: the last
// record the stream is known to hold, the log's head, the records it does
// not hold yet and how long the oldest of them has waited, and the bound
// past which Health.Mirror is nats_mirror_behind.
type MirrorLag = engine.MirrorLag

// MirrorLagError is Health.Mirror when the mirror trails past its bound
// (it wraps ErrMirrorBehind).
type MirrorLagError = engine.MirrorLagError

// ReplicationHealth is a replicated store's role, lease epoch and the
// last stream commit it holds.
type ReplicationHealth = engine.ReplicationHealth

// ReplicationRole is a replicated store's role.
type ReplicationRole = engine.Role

// Roles of a replicated store.
const (
	RolePrimary = engine.RolePrimary
	RoleStandby = engine.RoleStandby
	RoleFenced  = engine.RoleFenced
)

// Health reports the store's current health from local state only: it
// answers while the spreadsheet hangs (it never waits on the network).
func (s *Store) Health() Health {
	h := Health(s.e.Health())
	if s.adm != nil {
		h.Admin = s.adm.AcceptErr()
	}
	return h
}

// SyncHealth is the sync health of one spreadsheet (see docs/sync.md "Sync
// health"): State, the reason when blocked, pending effects and the age
// of the oldest, rows that differed at the last reconciliation, by tab.
// Spreadsheet is the sync target's key (SyncOptions.Name), never the id.
// Failing reports what /healthz answers 503 for: blocked, or a tab
// diverged for longer than DivergedBound.
type SyncHealth = engine.SyncHealth

// TabHealth is the sync health of one tab.
type TabHealth = engine.TabHealth

// SyncWarning is a finding sync health reports without failing, e.g.
// ReasonChainHeadAhead.
type SyncWarning = engine.SyncWarning

// ReasonChainHeadAhead is the warning a dispatch raises when the
// spreadsheet's chain_head cell showed a head past the log's (someone
// typed it; the dispatch rewrote it with the log's head).
const ReasonChainHeadAhead = engine.ReasonChainHeadAhead

// SyncState is a sync health state.
type SyncState = engine.SyncState

// Sync health states.
const (
	SyncOK        = engine.SyncOK
	SyncBehind    = engine.SyncBehind
	SyncMigrating = engine.SyncMigrating
	SyncDiverged  = engine.SyncDiverged
	SyncBlocked   = engine.SyncBlocked
)

// SyncStates lists the sync health states, healthy first.
var SyncStates = engine.SyncStates

// SyncReason is why sync is blocked (a stable code).
type SyncReason = engine.SyncReason

// Reasons sync is blocked, most severe first.
const (
	ReasonDisplaced         = engine.ReasonDisplaced
	ReasonAuthorityDiverged = engine.ReasonAuthorityDiverged
	ReasonStopped           = engine.ReasonStopped
	ReasonCredentials       = engine.ReasonCredentials
	ReasonAccessDenied      = engine.ReasonAccessDenied
	ReasonNotFound          = engine.ReasonNotFound
	ReasonQuota             = engine.ReasonQuota
	ReasonUnreachable       = engine.ReasonUnreachable
	ReasonMassDeletion      = engine.ReasonMassDeletion
	ReasonTabMissing        = engine.ReasonTabMissing
	ReasonHeaderDrift       = engine.ReasonHeaderDrift
	// ReasonReconcileFailing: the reconciliation passes failed twice in a
	// row or more (no failed write is corrected and no tab is compared
	// with canonical state meanwhile); it clears when a pass succeeds.
	ReasonReconcileFailing = engine.ReasonReconcileFailing
)

// ReasonColumnRetired is a tab's notice (TabHealth.Notice), not a reason
// sync is blocked: a change of the entities' shape took a column people
// edit off the tab while some of its cells held values never imported;
// the column was kept after the anchor as "<field> (retired)"
// (TabHealth.Retired names it). Copy the values where they belong, then
// delete the column.
const ReasonColumnRetired = engine.ReasonColumnRetired

// Stats is a point-in-time view of a running store.
type Stats struct {
	Commits uint64 // units committed with at least one event, since Open
	Events  uint64 // events appended since Open (commits and the workers' decisions)
	LogTxns uint64 // log transactions (group commits) that carried them
	// Checkpoint is the last log sequence applied to the read model;
	// LogHead the last appended. LogHead − Checkpoint is the read
	// model's lag (events appended but not yet projected).
	Checkpoint, LogHead uint64
	// Lease is the writer lease this store holds (never its token).
	Lease LeaseInfo
	// Outbox counts the effects in every state (pending, processing,
	// delivery_uncertain, applied, failed, superseded, conflict,
	// blocked_candidate), zeros included.
	Outbox map[aggregates.EffectState]int64
	// Dispatcher holds the sync dispatcher's running totals by kind
	// (empty when sync is off or not provisioned yet).
	Dispatcher map[string]int64
}

// LeaseInfo is the part of the writer lease safe to show (no token).
type LeaseInfo struct {
	Role     string
	WriterID string
	Epoch    uint64
}

// Stats returns the store's counters. Errors: ErrStoreClosed, the context's.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	w := s.e.Stats()
	l := s.e.Lease()
	st := Stats{Commits: w.Commits, Events: w.Events, LogTxns: w.LogTxns, Checkpoint: s.e.Checkpoint(),
		Lease: LeaseInfo{Role: l.Role, WriterID: l.WriterID, Epoch: l.Epoch}, Dispatcher: map[string]int64{}}
	var err error
	if st.LogHead, err = s.e.LogHead(); err != nil {
		return st, err
	}
	if st.Outbox, err = s.e.OutboxCounts(); err != nil {
		return st, err
	}
	if d, _, _ := s.e.Workers(); d != nil {
		st.Dispatcher = d.C.Totals()
	}
	return st, nil
}

// Attention is what waits for a person: open conflicts, and the active
// quarantine records by reason code.
type Attention = engine.Attention

// Attention counts open conflicts and active quarantine records in the
// read model; it waits at most 50 ms for a read connection and never on
// the network. Errors: ErrStoreClosed; read-model errors; the context's.
func (s *Store) Attention(ctx context.Context) (Attention, error) {
	if err := ctx.Err(); err != nil {
		return Attention{}, err
	}
	return s.e.Attention(ctx)
}

// Snapshot takes a snapshot of the read model now (between group commits),
// records its digest in the log (a snapshot.taken event) and returns its
// manifest. A store restarted with an unusable read.sqlite loads the newest
// snapshot the log vouches for and replays only the log after it.
// Errors: ErrStoreClosed, I/O errors.
func (s *Store) Snapshot(ctx context.Context) (snapshots.Manifest, error) {
	if err := ctx.Err(); err != nil {
		return snapshots.Manifest{}, err
	}
	return s.e.Snapshot()
}

// Reconcile runs one reconciliation now, besides its own cadence
// (SyncOptions.ReconcileInterval): terminal failures superseded, unsent
// rows queued, and the anti-entropy pass (docs/sync.md "Convergence"); the
// dispatcher writes the corrections. Errors: ErrSyncStartup (no sync, or
// not provisioned yet); Sheets read errors; ErrStoreClosed.
func (s *Store) Reconcile(ctx context.Context) error {
	d, _, _ := s.e.Workers()
	if d == nil {
		return fmt.Errorf("%w: sync is off or not provisioned yet", ErrSyncStartup)
	}
	_, err := d.Reconcile(ctx)
	return err
}
