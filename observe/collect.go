package observe

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
)

// Source is what Metrics and HealthHandler read at request time; a
// *hikoutei.Store is one. None of its methods waits on the network.
type Source interface {
	Stats(ctx context.Context) (hikoutei.Stats, error)
	Health() hikoutei.Health
	Attention(ctx context.Context) (hikoutei.Attention, error)
}

func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descCommits    = newDesc("hikoutei_commits_total", "Units of work committed with at least one event, since the store opened.")
	descEvents     = newDesc("hikoutei_events_total", "Events appended (commits and the workers' decisions), since the store opened.")
	descLogTxns    = newDesc("hikoutei_log_transactions_total", "Log transactions (group commits), since the store opened.")
	descEpoch      = newDesc("hikoutei_lease_epoch", "Writer lease epoch held by this process.")
	descLag        = newDesc("hikoutei_read_model_lag_events", "Events appended to the log but not yet applied to the read model (log head minus checkpoint).")
	descOutbox     = newDesc("hikoutei_outbox_effects", "Effects in the outbox by state, every state present (zeros included).", "state")
	descOldest     = newDesc("hikoutei_outbox_oldest_pending_seconds", "Age of the oldest effect not settled yet (0: none, or sync off).")
	descConflicts  = newDesc("hikoutei_conflicts_open", "Conflicts open (waiting for a person or a later commit).")
	descQuarantine = newDesc("hikoutei_quarantine_active", "Active quarantine records (inbound rows or tabs set aside for review).")

	descPasses       = newDesc("hikoutei_dispatcher_passes_total", "Dispatcher passes run, since sync started.")
	descBatches      = newDesc("hikoutei_dispatcher_batches_total", "Batches the dispatcher sent to the spreadsheet (effect batches and note-only batches).")
	descClaimed      = newDesc("hikoutei_dispatcher_effects_claimed_total", "Effects the dispatcher claimed.")
	descOutcomes     = newDesc("hikoutei_dispatcher_effect_outcomes_total", "Dispatched or probed effects by outcome (applied, uncertain, retried, failed, conflict, misdirected).", "outcome")
	descProbes       = newDesc("hikoutei_dispatcher_probes_total", "Probes of effects whose delivery was uncertain.")
	descNotes        = newDesc("hikoutei_dispatcher_notes_total", "Cell notes written or removed.")
	descReconciled   = newDesc("hikoutei_reconcile_effects_total", "Effects reconciliation acted on, by action (superseded: terminal failures replaced; backfilled: unsent rows queued; repaired: anti-entropy corrections queued).", "action")
	descAEDeferred   = newDesc("hikoutei_reconcile_tabs_deferred_total", "Tabs a scheduled anti-entropy pass left for a later pass because they were being filled (a batch's worth of rows written to the tab since the previous pass; never more than five minutes after its last comparison).")
	descSyncState    = newDesc("hikoutei_sync_state", "Sync health of each tab: 1 for its current state (ok, behind, diverged, blocked), 0 for the others.", "tab", "state")
	descSyncBlocked  = newDesc("hikoutei_sync_blocked", "1 for each blocked tab, with the reason code (e.g. credentials_rejected, access_denied, quota).", "tab", "reason")
	descSyncPending  = newDesc("hikoutei_sync_pending_effects", "Effects of the tab not settled yet.", "tab")
	descSyncOldest   = newDesc("hikoutei_sync_oldest_pending_seconds", "Age of the tab's oldest pending effect (0: none or unknown).", "tab")
	descSyncDiverge  = newDesc("hikoutei_sync_diverged_rows", "Rows of the tab that differed from canonical state at the last reconciliation.", "tab")
	descLogBytes     = newDesc("hikoutei_log_bytes", "Size of the hot log (log.db) in bytes.")
	descSegments     = newDesc("hikoutei_sealed_segments", "Sealed segments the log vouches for, in the store's segments folder or object store.")
	descSegmentBytes = newDesc("hikoutei_sealed_segment_bytes", "Total size of the sealed segments in bytes.")
	descSegsMissing  = newDesc("hikoutei_sealed_segments_missing", "Sealed segments the log vouches for that the segment store did not list at the last presence check (health: segment_missing).")
	descSegStrays    = newDesc("hikoutei_sealed_segment_strays", "Names the segment store listed at the last presence check that the log does not vouch for (leftovers, renamed or foreign files).")
	descSegsRead     = newDesc("hikoutei_segments_read_total", "Sealed segments read since the store opened (replays, as-of reads, the audit, aggregates whose early versions are sealed).")
	descSegFallbacks = newDesc("hikoutei_segment_index_fallbacks_total", "Reads of a stream's sealed versions the segment streams index could not serve (an entry damaged or missing): they read every segment instead.")
	descFSAvail      = newDesc("hikoutei_filesystem_avail_bytes", "Free space of the filesystem holding the store, in bytes (what the store's process may use).")
	descSetAside     = newDesc("hikoutei_read_model_set_aside_copies", "Read models the store set aside in its directory (unusable, replaced by a rebuild, ahead of the log) and never deletes (health: read_model_set_aside).")
	descSetAsideSize = newDesc("hikoutei_read_model_set_aside_bytes", "Total size of the set-aside read models and their sidecars, in bytes.")
	descSetAsideAt   = newDesc("hikoutei_read_model_set_aside_oldest_timestamp_seconds", "When the oldest set-aside read model was set aside, Unix seconds (0: none).")
	descFSSize       = newDesc("hikoutei_filesystem_size_bytes", "Size of the filesystem holding the store, in bytes.")
	descSheetCells   = newDesc("hikoutei_sheet_cells", "Grid cells of the spreadsheet (rows × columns of every tab, filled or not) at the newest read of its tabs' sizes (absent before one).")
	descCellsLimit   = newDesc("hikoutei_sheet_cells_limit", "Grid cells a spreadsheet may hold (10,000,000; absent before a read of its tabs' sizes).")
	descCellsFullAt  = newDesc("hikoutei_sheet_cells_full_timestamp_seconds", "When the spreadsheet's grid reaches its limit at the current growth, Unix seconds (0: growth unknown or not positive).")
	descQuotaRate    = newDesc("hikoutei_sheets_quota_rate", "Requests a second the provider's quota budget lets start now, by class (read, write); a 429 halves it, successes bring it back to the configured rate (0: unpaced).", "class")
	descQuotaCeiling = newDesc("hikoutei_sheets_quota_ceiling", "Requests a second the provider's quota budget is configured for, by class (read, write; 0: unpaced).", "class")
	descQuota429     = newDesc("hikoutei_sheets_quota_throttled_total", "Requests of the provider answered 429 since it was built, by class (read, write); each slows the whole budget of its class and account.", "class")
	descAcctRate     = newDesc("hikoutei_sheets_quota_account_rate", "Requests a second one account's quota budget lets start now, by account (its index in the provider's pool of service accounts) and class (read, write; 0: unpaced).", "account", "class")
	descAcct429      = newDesc("hikoutei_sheets_quota_account_throttled_total", "Requests of one account answered 429 since the provider was built, by account (index in the pool) and class (read, write).", "account", "class")
	descAcctOut      = newDesc("hikoutei_sheets_quota_account_out", "1 for each account taken out of the provider's pool, by account (index in the pool) and the code Google refused it with (credentials_rejected, sheet_permission_denied).", "account", "reason")
	descSeals        = newDesc("hikoutei_seals_total", "Background seals of the retention policy since the store opened, by result (ok, failed); absent without a policy.", "result")
	descHealthFault  = newDesc("hikoutei_health_fault", "1 for each part of the store's health that is not ok now (local, sync, mirror, integrity, admin, disk, retention, segments), with the failure's code (e.g. log_damaged, log_file_replaced, admin_accept_failed, disk_filling, retention_failing).", "part", "code")
)

// dispatcherSeries maps each kind of the dispatcher's counters
// (hikoutei.Stats.Dispatcher) to its series and label value.
var dispatcherSeries = map[string]struct {
	desc  *prometheus.Desc
	label string
}{
	"passes": {descPasses, ""}, "dispatches": {descBatches, ""}, "claimed": {descClaimed, ""},
	"applied": {descOutcomes, "applied"}, "uncertain": {descOutcomes, "uncertain"}, "retried": {descOutcomes, "retried"},
	"failed": {descOutcomes, "failed"}, "conflicts": {descOutcomes, "conflict"}, "misdirected": {descOutcomes, "misdirected"},
	"probes": {descProbes, ""}, "notes": {descNotes, ""},
	"superseded": {descReconciled, "superseded"}, "backfilled": {descReconciled, "backfilled"}, "repaired": {descReconciled, "repaired"},
	"tabs_deferred": {descAEDeferred, ""},
}

func describeScraped(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBuildInfo, descCommits, descEvents, descLogTxns, descEpoch, descLag, descOutbox, descOldest,
		descConflicts, descQuarantine, descPasses, descBatches, descClaimed, descOutcomes, descProbes, descNotes, descReconciled, descAEDeferred,
		descSyncState, descSyncBlocked, descSyncPending, descSyncOldest, descSyncDiverge, descHealthFault,
		descLogBytes, descSegments, descSegmentBytes, descSegsMissing, descSegStrays, descSegsRead, descSegFallbacks, descFSAvail, descFSSize, descSetAside, descSetAsideSize, descSetAsideAt, descSheetCells, descCellsLimit, descCellsFullAt, descSeals,
		descQuotaRate, descQuotaCeiling, descQuota429, descAcctRate, descAcct429, descAcctOut} {
		ch <- d
	}
}

// emit sends one const metric.
func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
}

// collectSource emits what src reports now; a part src cannot report
// (closed store, read pool busy) is left out of this scrape.
func collectSource(ch chan<- prometheus.Metric, src Source) {
	h := src.Health()
	collectFaults(ch, h)
	collectDisk(ch, h.DiskUsage)
	collectRetention(ch, h.RetentionStatus)
	collectSync(ch, h.SyncHealth)
	for _, rh := range h.SyncRoutes {
		collectSyncTabs(ch, rh) // a route's tabs are its own; the capacity gauges are the default spreadsheet's
	}
	if st, err := src.Stats(context.Background()); err == nil {
		collectStats(ch, st, h.SyncHealth)
	}
	if a, err := src.Attention(context.Background()); err == nil {
		emit(ch, descConflicts, prometheus.GaugeValue, float64(a.OpenConflicts))
		var n int64
		for _, c := range a.Quarantine {
			n += c
		}
		emit(ch, descQuarantine, prometheus.GaugeValue, float64(n))
	}
}

// collectDisk emits the store's files and its filesystem's space (the
// space only where the platform tells it).
func collectDisk(ch chan<- prometheus.Metric, u *hikoutei.DiskUsage) {
	if u == nil {
		return
	}
	emit(ch, descLogBytes, prometheus.GaugeValue, float64(u.LogBytes))
	emit(ch, descSegments, prometheus.GaugeValue, float64(u.Segments))
	emit(ch, descSegmentBytes, prometheus.GaugeValue, float64(u.SegmentBytes))
	emit(ch, descSegsMissing, prometheus.GaugeValue, float64(u.SegmentsMissing))
	emit(ch, descSegStrays, prometheus.GaugeValue, float64(u.SegmentStrays))
	emit(ch, descSetAside, prometheus.GaugeValue, float64(u.SetAsideCopies))
	emit(ch, descSetAsideSize, prometheus.GaugeValue, float64(u.SetAsideBytes))
	emit(ch, descSetAsideAt, prometheus.GaugeValue, unixOrZero(u.SetAsideOldest))
	if u.SpaceKnown {
		emit(ch, descFSAvail, prometheus.GaugeValue, float64(u.Space.Free))
		emit(ch, descFSSize, prometheus.GaugeValue, float64(u.Space.Total))
	}
}

// collectRetention emits the retention policy's seals by result (none
// while the store runs no policy).
func collectRetention(ch chan<- prometheus.Metric, r *hikoutei.RetentionHealth) {
	if r == nil || r.State == hikoutei.RetentionOff || r.State == hikoutei.RetentionNotRunning {
		return
	}
	emit(ch, descSeals, prometheus.CounterValue, float64(r.Seals), "ok")
	emit(ch, descSeals, prometheus.CounterValue, float64(r.Failures), "failed")
}

func collectStats(ch chan<- prometheus.Metric, st hikoutei.Stats, sh *hikoutei.SyncHealth) {
	emit(ch, descCommits, prometheus.CounterValue, float64(st.Commits))
	emit(ch, descEvents, prometheus.CounterValue, float64(st.Events))
	emit(ch, descLogTxns, prometheus.CounterValue, float64(st.LogTxns))
	emit(ch, descSegsRead, prometheus.CounterValue, float64(st.SegmentsRead))
	emit(ch, descSegFallbacks, prometheus.CounterValue, float64(st.SegmentIndexFallbacks))
	emit(ch, descEpoch, prometheus.GaugeValue, float64(st.Lease.Epoch))
	emit(ch, descLag, prometheus.GaugeValue, float64(st.LogHead-min(st.Checkpoint, st.LogHead)))
	for _, state := range aggregates.EffectStates {
		emit(ch, descOutbox, prometheus.GaugeValue, float64(st.Outbox[state]), string(state))
	}
	oldest := 0.0
	if sh != nil {
		oldest = sh.OldestPending.Seconds()
	}
	emit(ch, descOldest, prometheus.GaugeValue, oldest)
	collectDispatcher(ch, st.Dispatcher)
}

// collectDispatcher emits the dispatcher's counters, split into series
// of one meaning each (none before sync runs).
func collectDispatcher(ch chan<- prometheus.Metric, totals map[string]int64) {
	for kind, n := range totals {
		s, ok := dispatcherSeries[kind]
		if !ok {
			continue
		}
		var labels []string
		if s.label != "" {
			labels = []string{s.label}
		}
		emit(ch, s.desc, prometheus.CounterValue, float64(n), labels...)
	}
}

// collectSync emits the sync health gauges, one series per tab.
func collectSync(ch chan<- prometheus.Metric, h *hikoutei.SyncHealth) {
	if h == nil {
		return
	}
	collectSyncTabs(ch, h)
	collectCapacity(ch, h.Capacity)
	collectQuota(ch, h.Quota)
}

// collectQuota emits the provider's quota budget (nothing for a provider
// that does not report one).
func collectQuota(ch chan<- prometheus.Metric, q *hikoutei.QuotaBudget) {
	if q == nil {
		return
	}
	emit(ch, descQuotaRate, prometheus.GaugeValue, q.ReadRate, "read")
	emit(ch, descQuotaRate, prometheus.GaugeValue, q.WriteRate, "write")
	emit(ch, descQuotaCeiling, prometheus.GaugeValue, q.ReadCeiling, "read")
	emit(ch, descQuotaCeiling, prometheus.GaugeValue, q.WriteCeiling, "write")
	emit(ch, descQuota429, prometheus.CounterValue, float64(q.ReadThrottled), "read")
	emit(ch, descQuota429, prometheus.CounterValue, float64(q.WriteThrottled), "write")
	for _, a := range q.Accounts {
		acct := strconv.Itoa(a.Index)
		emit(ch, descAcctRate, prometheus.GaugeValue, a.ReadRate, acct, "read")
		emit(ch, descAcctRate, prometheus.GaugeValue, a.WriteRate, acct, "write")
		emit(ch, descAcct429, prometheus.CounterValue, float64(a.ReadThrottled), acct, "read")
		emit(ch, descAcct429, prometheus.CounterValue, float64(a.WriteThrottled), acct, "write")
		if a.Out != "" {
			emit(ch, descAcctOut, prometheus.GaugeValue, 1, acct, a.Out)
		}
	}
}

// collectSyncTabs emits the gauges of h's tabs.
func collectSyncTabs(ch chan<- prometheus.Metric, h *hikoutei.SyncHealth) {
	for _, t := range h.Tabs {
		for _, s := range hikoutei.SyncStates {
			emit(ch, descSyncState, prometheus.GaugeValue, bool01(t.State == s), t.Tab, string(s))
		}
		if t.State == hikoutei.SyncBlocked {
			emit(ch, descSyncBlocked, prometheus.GaugeValue, 1, t.Tab, string(t.Reason))
		}
		emit(ch, descSyncPending, prometheus.GaugeValue, float64(t.Pending), t.Tab)
		emit(ch, descSyncOldest, prometheus.GaugeValue, t.OldestPending.Seconds(), t.Tab)
		emit(ch, descSyncDiverge, prometheus.GaugeValue, float64(t.Diverged), t.Tab)
	}
}

// collectCapacity emits how full the spreadsheet's grid is (nothing
// before a read of its tabs' sizes).
func collectCapacity(ch chan<- prometheus.Metric, c *hikoutei.SpreadsheetCapacity) {
	if c == nil {
		return
	}
	emit(ch, descSheetCells, prometheus.GaugeValue, float64(c.Cells))
	emit(ch, descCellsLimit, prometheus.GaugeValue, float64(c.Limit))
	emit(ch, descCellsFullAt, prometheus.GaugeValue, unixOrZero(c.FullAt))
}

// unixOrZero is t in Unix seconds, 0 for the zero time.
func unixOrZero(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.Unix())
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collectFaults emits hikoutei_health_fault for each part of h that is
// not ok (none while the store is healthy).
func collectFaults(ch chan<- prometheus.Metric, h hikoutei.Health) {
	for _, p := range []struct {
		part string
		err  error
	}{{"local", h.Local}, {"sync", h.Sync}, {"mirror", h.Mirror}, {"integrity", h.Integrity}, {"admin", h.Admin}, {"disk", h.Disk}, {"retention", h.Retention}, {"segments", h.Segments}} {
		if p.err != nil {
			emit(ch, descHealthFault, prometheus.GaugeValue, 1, p.part, hikoutei.ErrorCode(p.err))
		}
	}
}
