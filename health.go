package hikoutei

import (
	"context"
	"fmt"

	"github.com/hikoutei/hikoutei-go/aggregates"
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
	// SyncRoutes is the sync health of each routed spreadsheet
	// (SyncOptions.Routes), in order; each names its sync target, never
	// the spreadsheet id. Sync is set when one of them is not ok either.
	SyncRoutes []*SyncHealth
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
	// Disk: the filesystem holding the store is filling (ErrDiskFilling,
	// disk_filling: above 90 % used, or full within 7 days at the store's
	// growth, with the projected time) or full (ErrDiskFull, disk_full:
	// above 98 % used: the next commits may fail to write). Nil while it
	// has room or its space is unknown. DiskUsage is what was measured.
	Disk      error
	DiskUsage *DiskUsage
	// Keys: the key file of personal values (keys.db) failed a read or
	// write (personal_key_file), or it cannot open the sealed values the
	// store holds (personal_keys_lost: deleted, replaced, restored from
	// elsewhere). Checked at Open and on every read that meets a sealed
	// value; reads of those values fail with the same error, never show an
	// empty value. Nil while every sealed value opens (docs/erasure.md).
	Keys error
	// Retention: the last background seal of the retention policy
	// (Options.Retention) failed (ErrRetentionFailing, retention_failing,
	// wrapping the cause). Commits go on; log.db keeps the records until
	// a seal succeeds. Nil while it seals, or without a policy.
	// RetentionStatus is the policy's state: off, on, failing, or
	// not_running (a replicated store, with the reason).
	Retention       error
	RetentionStatus *RetentionHealth
	// Segments: the last read or write of a sealed segment could not
	// reach the store holding them (ErrSegmentStoreUnavailable, with the
	// segment and the store's redacted location), nil once it answers
	// again or when none failed; else segment_missing (ErrSegmentMissing,
	// a *SegmentError naming the first absent file) while a segment the
	// log vouches for is not in the store's list. Health lists the
	// names (never the contents) at Open and at most once a minute of the
	// store's clock (Store.CheckSegments does it now). Commits never
	// depend on it; reads of old events and seals do.
	Segments error
	// Adoption: an adoption of a tab (Adopt, hikoutei adopt) stopped
	// before it kept the tab — killed, the machine stopped, or it failed
	// (ErrAdoptInterrupted, adopt_interrupted, naming each tab and the
	// rows it created): those rows are records, the others are not
	// quarantined, the tab is not renamed. Adopting the same tab again
	// finishes it. Nil when none (docs/adopt.md).
	Adoption error
	// SetAside: the store directory keeps read models the store set aside
	// (ErrReadModelSetAside, read_model_set_aside: unusable at an open,
	// replaced by a rebuild, or ahead of the log), with how many, their
	// bytes and when the oldest was set aside (DiskUsage has the figures).
	// The store never deletes them: they may hold the only trace of data a
	// damaged log lost, and personal values erased from the live store.
	// A notice: commits go on. Nil when none (docs/operations.md).
	SetAside error
}

// Roles of a replicated store.
const (
	RolePrimary ReplicationRole = "primary" // holds the lease across hosts and writes
	RoleStandby ReplicationRole = "standby" // follows the stream, serves reads
	RoleFenced  ReplicationRole = "fenced"  // was primary; another took over: it writes nothing
)

// Health reports the store's current health from local state: it
// answers while the spreadsheet hangs (it never waits on Sheets). Once a
// minute it lists the segment store's names (bounded by 5 s: an object
// store's list crosses the network).
func (s *Store) Health() Health {
	h := healthOf(s.e.Health())
	if s.adm != nil {
		h.Admin = s.adm.AcceptErr()
	}
	missing := s.segmentsMissing()
	s.diskHealth(&h)
	h.Keys = s.keys.health()
	h.Adoption = s.e.AdoptInterrupted()
	if h.Segments = s.segmentsHealth(); h.Segments == nil {
		h.Segments = missing
	}
	return h
}

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
	// SegmentsRead counts the sealed segments read since Open (Replay,
	// AsOf, the audit, loading an aggregate whose early versions are
	// sealed); SegmentIndexFallbacks the reads of a stream's sealed
	// versions the segment streams index could not serve (an entry
	// damaged or missing), which read every segment instead.
	SegmentsRead, SegmentIndexFallbacks uint64
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
	segs := s.e.Log().SegmentReadStats()
	st.SegmentsRead, st.SegmentIndexFallbacks = segs.Loaded, segs.IndexFallbacks
	var err error
	if st.LogHead, err = s.e.LogHead(); err != nil {
		return st, err
	}
	if st.Outbox, err = s.e.OutboxCounts(); err != nil {
		return st, err
	}
	for _, name := range s.e.Targets() { // the default spreadsheet's dispatcher, then each route's
		if d, _, _ := s.e.TargetWorkers(name); d != nil {
			for k, n := range d.C.Totals() {
				st.Dispatcher[k] += n
			}
		}
	}
	return st, nil
}

// Attention counts open conflicts and active quarantine records in the
// read model; it waits at most 50 ms for a read connection and never on
// the network. Errors: ErrStoreClosed; read-model errors; the context's.
func (s *Store) Attention(ctx context.Context) (Attention, error) {
	if err := ctx.Err(); err != nil {
		return Attention{}, err
	}
	a, err := s.e.Attention(ctx)
	return Attention(a), err
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
// dispatcher writes the corrections; with SyncOptions.Routes, of every
// spreadsheet provisioned. Errors: ErrSyncStartup (no sync, or the
// default spreadsheet not provisioned yet); Sheets read errors;
// ErrStoreClosed.
func (s *Store) Reconcile(ctx context.Context) error {
	if d, _, _ := s.e.Workers(); d == nil {
		return fmt.Errorf("%w: sync is off or not provisioned yet", ErrSyncStartup)
	}
	for _, name := range s.e.Targets() {
		if d, _, _ := s.e.TargetWorkers(name); d != nil {
			if _, err := d.Reconcile(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}
