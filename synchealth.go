package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// SyncHealth is the sync health of one spreadsheet (see docs/sync.md "Sync
// health"), computed from local state only: reading it never waits on the
// network. Failing reports what /healthz answers 503 for: blocked, or a
// tab diverged for longer than DivergedBound.
type SyncHealth struct {
	// Spreadsheet is the sync target's key (SyncOptions.Name, "sheets"
	// by default), never the spreadsheet id.
	Spreadsheet string
	// State is the worst of the spreadsheet's own state and its tabs'.
	State  SyncState
	Reason SyncReason // set when State is SyncBlocked
	// Pending counts the effects not settled yet; OldestPending is the
	// age of the oldest of them (0: none, or unknown).
	Pending       int64
	OldestPending time.Duration
	// Diverged counts the rows that differed at the last reconciliation.
	Diverged      int
	LastReconcile time.Time // the last reconciliation reported (zero: none since Open)
	// DivergedBound is how long a tab may stay diverged before Failing
	// (0: unknown, never failing for divergence).
	DivergedBound time.Duration
	Tabs          []TabHealth // the entity tabs, in layout order
	// Warnings are findings that do not fail sync health, e.g.
	// chain_head_ahead, or spreadsheet_capacity once the grid reaches
	// 80 % of the spreadsheet's cells (Capacity).
	Warnings []SyncWarning
	// Capacity is how full the spreadsheet's grid is, as the running
	// store's reads saw it (nil: not read since Open, or health derived
	// from the read model alone).
	Capacity *SpreadsheetCapacity
	// Quota is the request budget of the spreadsheet's provider, shared
	// by every worker of its Google user (nil: a provider that does not
	// report one).
	Quota *QuotaBudget
}

// QuotaBudget is a provider's request budgets: Google's quota is per
// user (60 reads and 60 writes a minute), and every worker waits on the
// same two budgets of each account (one account, or a pool of service
// accounts). A 429 halves the rate of its class's whole budget of the
// account answered it (at most once per 5 s, down to a tenth of the
// ceiling); each success adds a twentieth of the ceiling back.
type QuotaBudget struct {
	// ReadRate and WriteRate are the current rates, requests a second
	// (0: unpaced); ReadCeiling and WriteCeiling the configured ones.
	ReadRate, WriteRate       float64
	ReadCeiling, WriteCeiling float64
	// ReadThrottled and WriteThrottled count the 429s answered since the
	// provider was built.
	ReadThrottled, WriteThrottled uint64
	// Accounts are the budgets of each account of the provider's pool of
	// service accounts (one for a single account), each with its own
	// per-user quota; the rates and ceilings above are the sums over the
	// accounts in the pool.
	Accounts []QuotaAccount
}

// QuotaAccount is one account's request budgets. Index is its place in
// the pool (0: the default credentials), its only label: never its
// e-mail or key. Out is the code Google refused it with
// (credentials_rejected, sheet_permission_denied; "": in the pool), since
// OutSince.
type QuotaAccount struct {
	Index                         int
	ReadRate, WriteRate           float64
	ReadCeiling, WriteCeiling     float64
	ReadThrottled, WriteThrottled uint64
	Out                           string
	OutSince                      time.Time
}

// SpreadsheetCapacity is how full a spreadsheet's grid is: Google
// spreadsheets hold at most Limit (10,000,000) cells, counted as rows ×
// columns of every tab, filled or not.
type SpreadsheetCapacity struct {
	Cells int64     // the grid's cells at the newest read of the tabs' sizes
	Limit int64     // 10,000,000
	At    time.Time // when that read began
	// GrowthKnown: reads at least a minute apart were kept (since Open,
	// a week at most), so PerDay is measured; otherwise growth is unknown.
	GrowthKnown bool
	PerDay      float64 // cells a day over the reads kept
	// FullAt is when the grid reaches Limit at PerDay (zero when growth
	// is unknown or not positive).
	FullAt time.Time
	// Since is the first read of the current run at or above 80 % (zero
	// under it).
	Since time.Time
}

// TabHealth is the sync health of one tab.
type TabHealth struct {
	Tab           string
	State         SyncState
	Reason        SyncReason    // set when State is SyncBlocked
	Pending       int64         // effects not settled yet
	OldestPending time.Duration // age of the oldest of them (0: none, or unknown)
	Diverged      int           // rows that differed at the last reconciliation (0: none)
	DivergedSince time.Time     // the reconciliation that first found the current divergence
	LastReconcile time.Time     // the last reconciliation reported (zero: none since Open)
	// OverBound: diverged for longer than the bound (SyncHealth.DivergedBound).
	OverBound bool
	// Codes counts the last failure codes of the tab's waiting effects
	// (failed, delivery_uncertain), e.g. row_hash_mismatch: what a tab
	// that is behind waits on (nil: none).
	Codes map[string]int64
	// Retired lists the retired columns a layout migration kept on the
	// tab ("<field> (retired)": people's values never imported, outside
	// the layout); Notice is then ReasonColumnRetired.
	Retired []string
	Notice  SyncReason
}

// SyncWarning is a finding sync health reports without failing: sync
// goes on (e.g. ReasonChainHeadAhead).
type SyncWarning struct {
	Reason SyncReason
	Detail string    // what was found (never a cell value of a record)
	Since  time.Time // when it was first found
	At     time.Time // when it was last found
}

// SyncState is a sync health state.
type SyncState string

// Sync health states, from healthy to unhealthy.
const (
	// SyncOK: nothing waits to be written and nothing is known to differ.
	SyncOK SyncState = "ok"
	// SyncBehind: effects wait to be written (Pending, OldestPending).
	SyncBehind SyncState = "behind"
	// SyncMigrating: the tab is being brought to the current declaration
	// of the entities; its effects wait.
	SyncMigrating SyncState = "migrating"
	// SyncDiverged: the last reconciliation found rows that differ from
	// canonical state (Diverged, LastReconcile).
	SyncDiverged SyncState = "diverged"
	// SyncBlocked: the spreadsheet or the tab refuses the projection
	// (Reason).
	SyncBlocked SyncState = "blocked"
)

// SyncStates lists the sync health states, healthy first.
var SyncStates = []SyncState{SyncOK, SyncBehind, SyncMigrating, SyncDiverged, SyncBlocked}

// SyncReason is why sync is blocked (a stable snake_case code).
type SyncReason string

// Reasons sync is blocked, most severe first.
const (
	ReasonDisplaced         SyncReason = "writer_displaced"
	ReasonAuthorityDiverged SyncReason = "authority_diverged"
	// ReasonAuthorityHeld: another store's live authority holds the
	// spreadsheet (it was refreshed less than 2 minutes ago); this store
	// writes nothing to it until that authority expires, then takes it
	// over. Spreadsheet-wide.
	ReasonAuthorityHeld SyncReason = "sync_authority_held"
	ReasonStopped       SyncReason = "sync_stopped"
	ReasonCredentials   SyncReason = "credentials_rejected"
	ReasonAccessDenied  SyncReason = "access_denied"
	ReasonNotFound      SyncReason = "not_found"
	ReasonQuota         SyncReason = "quota"
	ReasonUnreachable   SyncReason = "sheets_unreachable"
	ReasonMassDeletion  SyncReason = "suspected_mass_deletion"
	ReasonTabMissing    SyncReason = "sheet_tab_missing"
	ReasonHeaderDrift   SyncReason = "sheet_header_drift"
	// ReasonReconcileFailing: the reconciliation passes failed twice in a
	// row or more (no failed write is corrected and no tab is compared
	// with canonical state meanwhile); it clears when a pass succeeds.
	ReasonReconcileFailing SyncReason = "reconciliation_failing"
)

// ReasonSpreadsheetCapacity is a warning once the spreadsheet's grid
// reaches 80 % of its 10,000,000 cells (SyncHealth.Capacity, with the date
// it fills at the current growth), and a tab's blocking reason when the
// rows its effects add would pass the limit: they wait, nothing is lost,
// the other tabs go on, and the tab catches up once space is freed.
const ReasonSpreadsheetCapacity = SyncReason(engine.ReasonCapacity)

// ReasonChainHeadAhead is the warning a dispatch raises when the
// spreadsheet's chain_head cell showed a head past the log's (someone
// typed it; the dispatch rewrote it with the log's head).
const ReasonChainHeadAhead SyncReason = "chain_head_ahead"

// ReasonSheetsAccountOut is a warning: an account of the provider's pool
// of service accounts (gsheets.Config.Pool) was taken out because Google
// refused it (credentials_rejected: a revoked key;
// sheet_permission_denied: the spreadsheet is not shared with it); the
// others carry its requests. QuotaBudget.Accounts says which, by index.
const ReasonSheetsAccountOut = SyncReason(engine.ReasonAccountOut)

// ReasonColumnRetired is a tab's notice (TabHealth.Notice), not a reason
// sync is blocked: a change of the entities' shape took a column people
// edit off the tab while some of its cells held values never imported;
// the column was kept after the anchor as "<field> (retired)"
// (TabHealth.Retired names it). Copy the values where they belong, then
// delete the column.
const ReasonColumnRetired SyncReason = "column_retired"

// Failing reports whether sync health fails: blocked, or a tab diverged
// for longer than DivergedBound. /healthz then answers 503.
func (h *SyncHealth) Failing() bool {
	return h.engine().Failing()
}

// Err is the health as an error: nil when ok, behind or migrating;
// ErrSyncBlocked or ErrSyncDiverged naming the reason and the first tab
// concerned.
func (h *SyncHealth) Err() error {
	return h.engine().Err()
}

// Settled reports whether sync has nothing left to do: every effect
// written (ok), nothing migrating, blocked or diverged. A nil SyncHealth
// (no sync) is not settled.
func (h *SyncHealth) Settled() bool {
	return h != nil && h.State == SyncOK && h.Pending == 0
}

// engine is h in the engine's terms (nil for nil).
func (h *SyncHealth) engine() *engine.SyncHealth {
	if h == nil {
		return nil
	}
	e := &engine.SyncHealth{Spreadsheet: h.Spreadsheet, State: engine.SyncState(h.State), Reason: engine.SyncReason(h.Reason),
		Pending: h.Pending, OldestPending: h.OldestPending, Diverged: h.Diverged, LastReconcile: h.LastReconcile,
		DivergedBound: h.DivergedBound}
	for _, t := range h.Tabs {
		e.Tabs = append(e.Tabs, engine.TabHealth{Tab: t.Tab, State: engine.SyncState(t.State), Reason: engine.SyncReason(t.Reason),
			Diverged: t.Diverged, OverBound: t.OverBound})
	}
	return e
}

// syncHealthOf is the engine's sync health in the root's terms (nil for nil).
func syncHealthOf(e *engine.SyncHealth) *SyncHealth {
	if e == nil {
		return nil
	}
	h := &SyncHealth{Spreadsheet: e.Spreadsheet, State: SyncState(e.State), Reason: SyncReason(e.Reason), Pending: e.Pending,
		OldestPending: e.OldestPending, Diverged: e.Diverged, LastReconcile: e.LastReconcile, DivergedBound: e.DivergedBound}
	for _, t := range e.Tabs {
		h.Tabs = append(h.Tabs, tabHealthOf(t))
	}
	for _, w := range e.Warnings {
		h.Warnings = append(h.Warnings, SyncWarning{Reason: SyncReason(w.Reason), Detail: w.Detail, Since: w.Since, At: w.At})
	}
	if c := e.Capacity; c != nil {
		h.Capacity = &SpreadsheetCapacity{Cells: c.Cells, Limit: c.Limit, At: c.At, GrowthKnown: c.GrowthKnown, PerDay: c.PerDay,
			FullAt: c.FullAt, Since: c.Since}
	}
	if q := e.Quota; q != nil {
		h.Quota = quotaBudgetOf(q)
	}
	return h
}

// quotaBudgetOf is the provider's budgets in the root's terms.
func quotaBudgetOf(q *sheetsio.QuotaBudget) *QuotaBudget {
	out := &QuotaBudget{ReadRate: q.ReadRate, WriteRate: q.WriteRate, ReadCeiling: q.ReadCeiling, WriteCeiling: q.WriteCeiling,
		ReadThrottled: q.ReadThrottled, WriteThrottled: q.WriteThrottled}
	for _, a := range q.Accounts {
		out.Accounts = append(out.Accounts, QuotaAccount(a))
	}
	return out
}

func tabHealthOf(t engine.TabHealth) TabHealth {
	return TabHealth{Tab: t.Tab, State: SyncState(t.State), Reason: SyncReason(t.Reason), Pending: t.Pending,
		OldestPending: t.OldestPending, Diverged: t.Diverged, DivergedSince: t.DivergedSince, LastReconcile: t.LastReconcile,
		OverBound: t.OverBound, Codes: t.Codes, Retired: slices.Clone(t.Retired), Notice: SyncReason(t.Notice)}
}

// MirrorLag is how far the NATS event mirror trails the log, from local
// state only: the last record the stream is known to hold, the log's
// head, the records it does not hold yet and how long the oldest of them
// has waited, and the bound past which Health.Mirror is
// nats_mirror_behind.
type MirrorLag struct {
	Mirrored uint64 // the log seq of the last record the stream is known to hold
	LogHead  uint64
	// Records counts the committed records the mirror does not hold yet
	// (sequences the log lost, holes, are not records).
	Records uint64
	// Age is how long the oldest of them has waited (0: none).
	Age time.Duration
	// Bound is the age past which the mirror is behind (ErrMirrorBehind).
	Bound time.Duration
}

// Behind reports whether the mirror trails past its bound.
func (l *MirrorLag) Behind() bool { return (*engine.MirrorLag)(l).Behind() }

// MirrorLagError is Health.Mirror when the mirror trails past its bound.
// It wraps ErrMirrorBehind.
type MirrorLagError struct{ Lag MirrorLag }

func (e *MirrorLagError) Error() string {
	return (&engine.MirrorLagError{Lag: engine.MirrorLag(e.Lag)}).Error()
}

// Unwrap returns ErrMirrorBehind.
func (e *MirrorLagError) Unwrap() error { return ErrMirrorBehind }

// ReplicationHealth is a replicated store's role, lease epoch and the
// last stream commit it holds.
type ReplicationHealth struct {
	Role  ReplicationRole
	Store string // the replicated store's name
	// Epoch is the lease epoch this process holds (primary, fenced) or
	// the newest it saw (standby).
	Epoch uint64
	// Head is the last stream commit this store holds.
	Head uint64
	// SealedThrough is the last record this host's sealed segments hold
	// (0: none). StreamFirst is the first commit the stream held when
	// this process last looked (after a purge on the primary, when a
	// standby started following; 0: not looked at): the commits before
	// it were sealed on every host and purged (docs/replication.md,
	// "Retention").
	SealedThrough, StreamFirst uint64
	// Purge is the last purge's failure (nil: none failed since); a
	// stream an earlier build created denies purges and keeps every
	// commit.
	Purge error
}

// ReplicationRole is a replicated store's role.
type ReplicationRole string

// Attention is what waits for a person: open conflicts, and the active
// quarantine records by reason code (a reason may count several rows).
type Attention struct {
	OpenConflicts int64
	Quarantine    map[string]int64
}

// healthOf is the engine's health in the root's terms.
func healthOf(e engine.Health) Health {
	h := Health{Local: e.Local, Sync: e.Sync, SyncHealth: syncHealthOf(e.SyncHealth), Integrity: e.Integrity,
		Mirror: e.Mirror, Admin: e.Admin}
	for _, r := range e.Routes {
		h.SyncRoutes = append(h.SyncRoutes, syncHealthOf(r))
	}
	if e.MirrorLag != nil {
		l := MirrorLag(*e.MirrorLag)
		h.MirrorLag = &l
	}
	if r := e.Replication; r != nil {
		h.Replication = &ReplicationHealth{Role: ReplicationRole(r.Role), Store: r.Store, Epoch: r.Epoch, Head: r.Head,
			SealedThrough: r.SealedThrough, StreamFirst: r.StreamFirst, Purge: r.Purge}
	}
	retentionHealth(e.Retention, &h)
	return h
}

// syncPoll is how often WaitSynced looks at sync health besides each
// commit (a recovery or a provisioning need not commit).
const syncPoll = 250 * time.Millisecond

// WaitSynced waits until sync has settled: the spreadsheet is
// provisioned, every effect committed so far is written (no effect
// pending, processing, of uncertain delivery or failed) and sync health
// is ok.
// It looks again after each commit of the log (the workers record every
// write they make) and every quarter of a second. Commits go on
// meanwhile; WaitSynced waits for what they add too.
// Errors: ErrSyncStartup when the store has no sync; ErrStoreClosed;
// the context's, wrapped with the last sync state seen (and Health.Sync
// when set, e.g. ErrSyncBlocked).
func (s *Store) WaitSynced(ctx context.Context) error {
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	for {
		bell := s.e.CommitBell() // before looking: a commit after the look rings it
		h := s.Health()
		done, err := s.synced(ctx, h)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return notSynced(ctx.Err(), h)
		case <-bell:
		case <-tick.C:
		}
	}
}

// synced reports whether sync has settled given h; an error ends the wait.
func (s *Store) synced(ctx context.Context, h Health) (bool, error) {
	if errors.Is(h.Local, ErrStoreClosed) {
		return false, h.Local
	}
	if h.Sync == nil && h.SyncHealth == nil {
		return false, fmt.Errorf("%w: the store has no sync", ErrSyncStartup)
	}
	if h.Sync != nil || !h.SyncHealth.Settled() {
		return false, nil
	}
	for _, r := range h.SyncRoutes {
		if !r.Settled() {
			return false, nil
		}
	}
	st, err := s.Stats(ctx)
	if err != nil {
		return false, err
	}
	for _, state := range aggregates.Unsettled() {
		if st.Outbox[state] > 0 {
			return false, nil
		}
	}
	return true, nil
}

// notSynced is cause (the context's) with the last sync state seen.
func notSynced(cause error, h Health) error {
	state := "no sync health yet"
	if sh := h.SyncHealth; sh != nil {
		state = fmt.Sprintf("%s, %d effects pending", sh.State, sh.Pending)
	}
	if h.Sync != nil {
		return fmt.Errorf("sync not settled (%s): %w: %w", state, h.Sync, cause)
	}
	return fmt.Errorf("sync not settled (%s): %w", state, cause)
}
