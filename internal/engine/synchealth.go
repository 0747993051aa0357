package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// SyncState is the sync health of a spreadsheet or of one of its tabs.
type SyncState string

// Sync health states, from healthy to unhealthy.
const (
	// SyncOK: nothing waits to be written and nothing is known to differ.
	SyncOK SyncState = "ok"
	// SyncBehind: effects wait to be written (Pending, OldestPending).
	SyncBehind SyncState = "behind"
	// SyncMigrating: the tab shows the layout of an older declaration of
	// the entities and is being brought to the current one (its people's
	// edits polled under the old layout first); its effects wait.
	SyncMigrating SyncState = "migrating"
	// SyncDiverged: the last reconciliation found rows that differ from
	// canonical state (Diverged, LastReconcile), or a write met a
	// person's edit and was not made and no poll has decided the row yet.
	SyncDiverged SyncState = "diverged"
	// SyncBlocked: the spreadsheet or the tab refuses the projection
	// (Reason).
	SyncBlocked SyncState = "blocked"
)

// SyncStates lists the states, healthy first.
var SyncStates = []SyncState{SyncOK, SyncBehind, SyncMigrating, SyncDiverged, SyncBlocked}

// worse reports whether s is less healthy than t.
func (s SyncState) worse(t SyncState) bool {
	return slices.Index(SyncStates, s) > slices.Index(SyncStates, t)
}

// SyncReason is why sync is blocked (a stable snake_case code).
type SyncReason string

// Reasons, most severe first: a tab blocked for several reasons reports
// the first of this list.
const (
	ReasonDisplaced         SyncReason = "writer_displaced"            // another writer owns the store: the workers stopped
	ReasonAuthorityDiverged SyncReason = "authority_diverged"          // the sheet's authority names a newer epoch or another store: the workers stopped
	ReasonAuthorityHeld     SyncReason = "sync_authority_held"         // another store's live authority holds the spreadsheet: nothing is written until it expires
	ReasonStopped           SyncReason = "sync_stopped"                // the workers stopped for another reason
	ReasonCredentials       SyncReason = "credentials_rejected"        // Google refused the credentials (invalid_grant, 401): sync stopped
	ReasonAccessDenied      SyncReason = "access_denied"               // 403: the spreadsheet is not shared with the service account
	ReasonNotFound          SyncReason = "not_found"                   // 404: the spreadsheet does not exist or is not visible
	ReasonQuota             SyncReason = "quota"                       // 429: the Sheets quota is exhausted
	ReasonUnreachable       SyncReason = "sheets_unreachable"          // provisioning failed otherwise (timeouts, refused connections, 5xx) or hangs
	ReasonMassDeletion      SyncReason = aggregates.ReasonMassDeletion // a tab suddenly read empty (C04)
	ReasonTabMissing        SyncReason = sheetsio.CodeTabMissing       // a bound tab is gone
	ReasonHeaderDrift       SyncReason = sheetsio.CodeHeaderDrift      // a tab's header row changed
	// ReasonCapacity (capacity.go): the rows a tab's effects add would
	// pass the spreadsheet's cells; they wait.
	// ReasonReconcileFailing: the last reconcileFailLimit reconciliation
	// passes failed (none corrected failed writes nor compared the tabs).
	ReasonReconcileFailing SyncReason = "reconciliation_failing"
)

// reconcileFailLimit is how many reconciliation passes must fail in a
// row before sync health reports ReasonReconcileFailing: one failure
// that the next pass recovers from (a timeout) is not reported.
const reconcileFailLimit = 2

// ReasonColumnRetired is a tab's notice, not a blocking reason: a layout
// migration kept a column people edited after the anchor, renamed
// "<field> (retired)", because it held values never imported
// (TabHealth.Retired names them). Sync goes on.
const ReasonColumnRetired SyncReason = "column_retired"

// ReasonChainHeadAhead is a warning (SyncHealth.Warnings), not a reason
// sync is blocked: the spreadsheet's chain_head cell showed a head past
// the log's head, which is no head of this log (someone typed it); the
// dispatch that found it rewrote it with the log's head. It stays an hour
// after the last dispatch that found such a cell.
const ReasonChainHeadAhead SyncReason = "chain_head_ahead"

// ReasonAccountOut is a warning (SyncHealth.Warnings): an account of the
// provider's pool of service accounts was taken out because Google
// refused it (a revoked key, or the spreadsheet not shared with it); the
// others carry its requests. Quota.Accounts says which, by index.
const ReasonAccountOut SyncReason = "sheets_account_out"

// SyncWarning is something sync health reports without failing: sync goes
// on (e.g. ReasonChainHeadAhead).
type SyncWarning struct {
	Reason SyncReason
	Detail string    // what was found (never a cell value of a record)
	Since  time.Time // when it was first found
	At     time.Time // when it was last found
}

// reasonOrder ranks the reasons, most severe first.
var reasonOrder = []SyncReason{ReasonDisplaced, ReasonAuthorityDiverged, ReasonAuthorityHeld, ReasonCredentials, ReasonStopped, ReasonAccessDenied, ReasonNotFound,
	ReasonQuota, ReasonUnreachable, ReasonMassDeletion, ReasonTabMissing, ReasonHeaderDrift, ReasonCapacity, ReasonReconcileFailing}

// worse reports whether r is more severe than q ("" is no reason).
func (r SyncReason) worse(q SyncReason) bool {
	return r != "" && (q == "" || slices.Index(reasonOrder, r) < slices.Index(reasonOrder, q))
}

// codeReasons maps the failure codes an effect or a provider call carries
// to the reason they block sync for; other codes (timeouts, 5xx, a
// rejected value) block nothing by themselves.
var codeReasons = map[string]SyncReason{
	sheetsio.CodeHeaderDrift:         ReasonHeaderDrift,
	sheetsio.CodeTabMissing:          ReasonTabMissing,
	sheetsio.CodePermissionDenied:    ReasonAccessDenied,
	sheetsio.CodeCredentialsRejected: ReasonCredentials,
	sheetsio.CodeSpreadsheetNotFound: ReasonNotFound,
	sheetsio.WriteNotFound:           ReasonNotFound,
	sheetsio.WriteRateLimited:        ReasonQuota,
	sheetsio.CodeSpreadsheetCapacity: ReasonCapacity,
}

// failureReason classifies a provider failure ("" when it blocks nothing).
func failureReason(err error) SyncReason {
	if err == nil {
		return ""
	}
	var se *sheetsio.Error
	if errors.As(err, &se) && codeReasons[se.Code] != "" {
		return codeReasons[se.Code]
	}
	var we *sheetsio.WriteError
	if errors.As(err, &we) && codeReasons[we.Code] != "" {
		return codeReasons[we.Code]
	}
	switch sheetsio.HTTPStatus(err) {
	case http.StatusUnauthorized:
		return ReasonCredentials
	case http.StatusForbidden:
		return ReasonAccessDenied
	case http.StatusNotFound:
		return ReasonNotFound
	case http.StatusTooManyRequests:
		return ReasonQuota
	}
	return ""
}

// stoppedReason classifies why the workers stopped.
func stoppedReason(err error) SyncReason {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, effects.ErrDisplaced):
		return ReasonDisplaced
	case errors.Is(err, effects.ErrDivergence):
		return ReasonAuthorityDiverged
	case errors.Is(err, sheetsio.ErrCredentialsRejected):
		return ReasonCredentials
	}
	return ReasonStopped
}

// TabHealth is the sync health of one tab.
type TabHealth struct {
	Tab           string
	State         SyncState
	Reason        SyncReason    // set when State is SyncBlocked
	Pending       int64         // effects not settled yet
	OldestPending time.Duration // age of the oldest of them (0: none, or unknown)
	Diverged      int           // rows that differed at the last reconciliation, or whose write was lost (0: none, or none reported)
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

// SyncHealth is the sync health of one spreadsheet, computed from local
// state only (the read model and the workers' notes in memory): reading
// it never waits on the network.
type SyncHealth struct {
	// Spreadsheet is the sync target's key ("sheets" unless
	// SyncOptions.Name says otherwise), never the spreadsheet id.
	Spreadsheet   string
	State         SyncState  // the worst of the spreadsheet's own state and its tabs'
	Reason        SyncReason // set when State is SyncBlocked
	Pending       int64
	OldestPending time.Duration
	Diverged      int
	LastReconcile time.Time
	// DivergedBound is how long a tab may stay diverged before Failing
	// (0: unknown, never failing for divergence).
	DivergedBound time.Duration
	Tabs          []TabHealth // the entity tabs, in layout order
	// Warnings are findings that do not fail sync health, e.g.
	// chain_head_ahead (the spreadsheet's chain_head cell was past the
	// log's head; rewritten) or spreadsheet_capacity (the grid reached
	// 80 % of the spreadsheet's cells).
	Warnings []SyncWarning
	// Capacity is how full the spreadsheet's grid is (nil: not read
	// since Open, or health derived from the read model alone).
	Capacity *SpreadsheetCapacity
	// Quota is the request budget of the spreadsheet's provider (nil: a
	// provider that does not report one).
	Quota *sheetsio.QuotaBudget
}

// Failing reports whether sync health fails: blocked, or a tab diverged
// for longer than DivergedBound. /healthz then answers 503.
func (h *SyncHealth) Failing() bool {
	if h == nil {
		return false
	}
	return h.State == SyncBlocked || slices.ContainsFunc(h.Tabs, func(t TabHealth) bool { return t.OverBound })
}

// Err is the health as an error: nil when ok or behind; ErrSyncBlocked or
// ErrSyncDiverged naming the reason and the first tab concerned.
func (h *SyncHealth) Err() error {
	if h == nil {
		return nil
	}
	where := ""
	for _, t := range h.Tabs {
		if t.State == h.State {
			where = " on " + t.Tab
			break
		}
	}
	switch h.State {
	case SyncBlocked:
		return fmt.Errorf("%w: %s%s", ErrSyncBlocked, h.Reason, where)
	case SyncDiverged:
		return fmt.Errorf("%w: %d rows differ%s", ErrSyncDiverged, h.Diverged, where)
	}
	return nil
}

// reconcileNote is the last reconciliation reported for one tab.
type reconcileNote struct {
	blocked SyncReason // the tab could not be read (header drift); "" once read
	polled  SyncReason // the last poll found the tab missing; "" once read
	// recreated: provisioning created the tab again (deleted while the
	// store was down) after it had shown the store's rows; until a pass
	// refills it, it is missing them (ReasonTabMissing)
	recreated SyncReason
	diverged  int
	since     time.Time // when the current divergence was first found
	at        time.Time
	compared  bool // a reconciliation pass compared the tab's rows since Open
}

// healthInputs are what sync health is derived from.
type healthInputs struct {
	key    string
	tabs   []string // the tabs to report first, in order
	facts  map[string]*projector.TabSyncFacts
	notes  map[string]reconcileNote // by tab
	reason SyncReason               // the spreadsheet's own (stopped, provider failures)
	bound  time.Duration
	// migrating are the tabs waiting for (or in) their layout migration.
	migrating map[string]bool
	// unexamined are the tabs whose drifted header the next layout pass
	// examines: not ok meanwhile, unless already blocked.
	unexamined map[string]bool
}

// deriveSyncHealth is the health rule: a tab is blocked when it has a
// reason (its own or the spreadsheet's), else diverged when the last
// reconciliation found differing rows, else behind when effects wait,
// else ok. The spreadsheet is as unhealthy as its worst tab.
func deriveSyncHealth(in healthInputs, now time.Time) *SyncHealth {
	h := &SyncHealth{Spreadsheet: in.key, State: SyncOK, Reason: in.reason, DivergedBound: in.bound}
	if in.reason != "" {
		h.State = SyncBlocked
	}
	for _, tab := range tabsOf(in) {
		t := deriveTab(in, tab, now)
		h.Tabs = append(h.Tabs, t)
		h.add(t)
	}
	return h
}

// tabsOf lists in.tabs, then any other tab the facts, notes or
// migrations name, sorted.
func tabsOf(in healthInputs) []string {
	out := slices.Clone(in.tabs)
	var more []string
	for t := range in.facts {
		more = append(more, t)
	}
	for t := range in.notes {
		more = append(more, t)
	}
	for t := range in.migrating {
		more = append(more, t)
	}
	for t := range in.unexamined {
		more = append(more, t)
	}
	slices.Sort(more)
	for _, t := range slices.Compact(more) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func deriveTab(in healthInputs, tab string, now time.Time) TabHealth {
	t := TabHealth{Tab: tab, State: SyncOK, Reason: in.reason}
	if f := in.facts[tab]; f != nil {
		t.Pending = f.Pending
		if !f.OldestQueued.IsZero() {
			t.OldestPending = max(now.Sub(f.OldestQueued), 0)
		}
		t.Reason = tabReason(t.Reason, f)
		if len(f.Codes) > 0 {
			t.Codes = maps.Clone(f.Codes)
		}
		if len(f.Retired) > 0 {
			t.Retired, t.Notice = f.Retired, ReasonColumnRetired
		}
	}
	if n, ok := in.notes[tab]; ok {
		t.Diverged, t.DivergedSince, t.LastReconcile = n.diverged, n.since, n.at
		t.OverBound = n.diverged > 0 && in.bound > 0 && now.Sub(n.since) > in.bound
		for _, r := range []SyncReason{n.blocked, n.polled, n.recreated} {
			if r.worse(t.Reason) {
				t.Reason = r
			}
		}
	}
	if f := in.facts[tab]; f != nil {
		// Rows whose write was lost differ, as the store knows, until the
		// next poll decides them: at least that many (a pass may have
		// counted them too).
		t.Diverged = max(t.Diverged, int(f.Lost))
		if !in.notes[tab].compared && slices.Contains(in.tabs, tab) {
			// Rows a dropped write left (the tab was not declared
			// then), and rows a layout migration left differing (the
			// count it noted was in memory: a restart lost it), differ
			// until a reconciliation pass compares them.
			t.Diverged = max(t.Diverged, int(f.Dropped), int(f.Migrated))
		}
	}
	if (in.migrating[tab] && (t.Reason == "" || t.Reason == ReasonHeaderDrift)) || (in.unexamined[tab] && t.Reason == "") {
		t.Reason = "" // the header shows an older layout: expected until the migration
		t.State = SyncMigrating
		return t
	}
	switch {
	case t.Reason != "":
		t.State = SyncBlocked
	case t.Diverged > 0:
		t.State = SyncDiverged
	case t.Pending > 0:
		t.State = SyncBehind
	}
	return t
}

// tabReason is the most severe of r and the reasons the tab's facts give.
func tabReason(r SyncReason, f *projector.TabSyncFacts) SyncReason {
	if f.MassDeletion && ReasonMassDeletion.worse(r) {
		r = ReasonMassDeletion
	}
	for code := range f.Codes {
		if c := codeReasons[code]; c.worse(r) {
			r = c
		}
	}
	return r
}

// add folds one tab into the spreadsheet's totals and state.
func (h *SyncHealth) add(t TabHealth) {
	h.Pending += t.Pending
	h.OldestPending = max(h.OldestPending, t.OldestPending)
	h.Diverged += t.Diverged
	if t.LastReconcile.After(h.LastReconcile) {
		h.LastReconcile = t.LastReconcile
	}
	if t.State.worse(h.State) {
		h.State = t.State
	}
	if t.Reason.worse(h.Reason) {
		h.Reason = t.Reason
	}
}

// healthReadWait bounds the wait for a read connection when computing
// sync health (the read pool may be busy with queries, or a connection
// being opened on a busy host): long enough that a loaded host does not
// turn health into an error (50 ms did, under the race detector at a
// load of 14), short beside a scrape's timeout.
const healthReadWait = time.Second

// SyncHealth computes the sync health of the store's spreadsheet from
// local state only: indexed queries of the read model through the
// read pool, the workers' notes and the provider's last failure, all read
// without waiting on the network (I29). Nil without sync. Errors:
// ErrStoreClosed; a read-model error (e.g. no read connection free within
// healthReadWait).
func (e *Engine) SyncHealth() (*SyncHealth, error) {
	if e.sync == nil {
		return nil, nil
	}
	return e.syncHealthOf(e.sync)
}

// RouteHealth is the sync health of each routed spreadsheet
// (SyncConfig.Routes), as SyncHealth computes it; nil without routes.
func (e *Engine) RouteHealth() ([]*SyncHealth, error) {
	var out []*SyncHealth
	for _, s := range e.routes {
		h, err := e.syncHealthOf(s)
		if err != nil {
			return out, err
		}
		out = append(out, h)
	}
	return out, nil
}

// syncHealthOf is the sync health of target s.
func (e *Engine) syncHealthOf(s *syncState) (*SyncHealth, error) {
	ctx, cancel := context.WithTimeout(context.Background(), healthReadWait)
	defer cancel()
	conn, err := e.ReadConn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sync health: read model: %w", err)
	}
	defer e.PutConn(conn)
	conn.SetInterrupt(nil) // the bound is on the wait for a connection, not on the indexed queries
	facts, err := projector.SyncFacts(conn, s.cfg.Name)
	if err != nil {
		return nil, fmt.Errorf("sync health: read model: %w", err)
	}
	in := healthInputs{key: s.cfg.Name, tabs: e.targetTabs(s), facts: facts, notes: e.notes.reconciled(s.cfg.Name),
		reason: e.sheetReason(s), bound: e.divergedBound(), migrating: e.shownBy(s, e.lay.migrating()),
		unexamined: e.shownBy(s, e.lay.unexamined())}
	h := deriveSyncHealth(in, e.cfg.Clock.Now())
	h.Warnings = e.notes.warnings(e.cfg.Clock.Now())
	s.mu.Lock()
	wb := s.workbook
	s.mu.Unlock()
	if wb != nil {
		h.Capacity = capacityOf(wb.GridSamples())
	}
	if q, ok := s.cfg.Provider.(sheetsio.QuotaReporter); ok {
		b := q.QuotaBudget()
		h.Quota = &b
		h.Warnings = append(h.Warnings, accountWarnings(b.Accounts)...)
	}
	if w, ok := capacityWarning(h.Capacity); ok {
		h.Warnings = append(h.Warnings, w)
	}
	return h, nil
}

// entityTabs lists the System and Input tabs of the layout.
func (e *Engine) entityTabs() []string {
	var out []string
	for _, t := range e.sheet.Schema.Tabs() {
		if t.Role == layout.RoleSystem || t.Role == layout.RoleInput {
			out = append(out, t.Name)
		}
	}
	return out
}

// sheetReason is the spreadsheet's own blocking reason: why the workers
// stopped, else the provider's newest failure, else (before provisioning
// succeeded) the provisioning error's.
func (e *Engine) sheetReason(s *syncState) SyncReason {
	s.mu.Lock()
	stopped, disp := s.stopped, s.disp
	s.mu.Unlock()
	provisioned := disp != nil
	if r := stoppedReason(stopped); r != "" {
		return r
	}
	if provisioned && disp.C.Held.Load() {
		return ReasonAuthorityHeld
	}
	if r := failureReason(s.cfg.Provider.LastFailure()); r != "" || provisioned {
		return cmp.Or(r, e.reconcileReason(s.cfg.Name))
	}
	return e.unprovisionedReason(s.provisioning())
}

// reconcileReason is ReasonReconcileFailing once the last
// reconcileFailLimit reconciliation passes failed, else "".
func (e *Engine) reconcileReason(target string) SyncReason {
	if e.notes.passesFailed(target) >= reconcileFailLimit {
		return ReasonReconcileFailing
	}
	return ""
}

// reconciled is told how each reconciliation pass of target ended
// (effects.Config.Reconciled): health counts the failures in a row (the
// reconciliation loop logs them).
func (e *Engine) reconciled(target string) func(error) {
	return func(err error) { e.notes.notePass(target, err) }
}

// provisionGrace is how long a first provisioning attempt may take before
// sync reports the spreadsheet blocked (a hung or unreachable endpoint).
const provisionGrace = 10 * time.Second

// unprovisionedReason is why a spreadsheet is not provisioned yet: the
// last attempt's classified failure; sheets_unreachable for any other
// failure (timeouts, refused connections, 5xx) or for a first attempt
// still running past provisionGrace; "" while it is just starting.
func (e *Engine) unprovisionedReason(since time.Time, err error) SyncReason {
	if r := failureReason(err); r != "" {
		return r
	}
	if r := stoppedReason(err); r == ReasonAuthorityDiverged || r == ReasonDisplaced {
		return r // the provisioning's authority check stopped it: no unreachable sheet
	}
	if err != nil || (!since.IsZero() && e.cfg.Clock.Now().Sub(since) > provisionGrace) {
		return ReasonUnreachable
	}
	return ""
}

// divergedBound is the configured bound, else twice the reconciliation
// interval.
func (e *Engine) divergedBound() time.Duration {
	c := e.sync.cfg
	return cmp.Or(c.DivergedBound, 2*cmp.Or(c.ReconcileInterval, effects.DefaultReconcileInterval))
}

// NoteReconcile records what one reconciliation pass found on a tab of
// the spreadsheet (the sync target's key): diverged rows differ from
// canonical state (0 clears the divergence). Sync health reports it; a
// tab diverged for longer than the bound fails /healthz. In memory only,
// never waits: the reconciliation calls it after each pass.
func (e *Engine) NoteReconcile(spreadsheet, tab string, diverged int, at time.Time) {
	e.notes.noteReconcile(spreadsheet, tab, diverged, at)
}

// ReadSyncHealth derives the sync health of every sync target the read
// model behind conn holds effects for, from the read model alone (no
// worker notes: divergence and provider failures are unknown): what tools
// show without the running store, e.g. `hikoutei status`. With the
// log's shape history (hist, optional), a tab that still shows an older
// layout of the entities is reported migrating, as the store would.
func ReadSyncHealth(conn *sqlite.Conn, now time.Time, hist ...events.ShapeHistory) ([]SyncHealth, error) {
	keys, err := projector.SyncTargets(conn)
	if err != nil {
		return nil, err
	}
	out := make([]SyncHealth, 0, len(keys))
	for _, k := range keys {
		in := healthInputs{key: k}
		if in.facts, err = projector.SyncFacts(conn, k); err != nil {
			return nil, err
		}
		for _, h := range hist {
			if in.migrating, err = readPending(conn, h, k); err != nil {
				return nil, err
			}
		}
		out = append(out, *deriveSyncHealth(in, now))
	}
	return out, nil
}

// accountWarnings are the warnings of the accounts out of the pool, one
// each, naming it by index and the code it was refused with.
func accountWarnings(accts []sheetsio.AccountBudget) []SyncWarning {
	var out []SyncWarning
	for _, a := range accts {
		if a.Out != "" {
			out = append(out, SyncWarning{Reason: ReasonAccountOut, Since: a.OutSince, At: a.OutSince,
				Detail: fmt.Sprintf("account %d of %d out of the pool: %s; the others carry its requests", a.Index, len(accts), a.Out)})
		}
	}
	return out
}
