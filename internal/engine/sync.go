package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// LegacySyncName is the sync target name every store used before targets
// were keyed by spreadsheet; such a store adopts its effects (see
// aggregates.TargetBinding).
const LegacySyncName = "sheets"

// TargetKey is the sync target of a spreadsheet: a digest of its id, so
// the outbox and all sync state are keyed by spreadsheet while the id
// itself never enters the log, the read model or a message.
func TargetKey(spreadsheetID string) string {
	sum := sha256.Sum256([]byte("hikoutei-sync-target\x00" + spreadsheetID))
	return "ss-" + hex.EncodeToString(sum[:8])
}

func syncName(c *SyncConfig) string {
	switch {
	case c == nil:
		return ""
	case c.Name != "":
		return c.Name
	}
	return TargetKey(c.SpreadsheetID)
}

// Target is the sync target the store's outbox serves ("" without sync).
func (e *Engine) Target() string {
	if e.sync == nil {
		return ""
	}
	return e.sync.cfg.Name
}

// bindTarget records, before any worker starts, which target the outbox
// serves: a store from before targets were keyed by spreadsheet adopts
// its effects; a switched spreadsheet supersedes the old target's
// unsettled effects, and the new one is backfilled completely.
func (e *Engine) bindTarget(target string) error {
	return e.onWriter(func() error {
		bound, err := e.proj.BoundTarget()
		if err != nil || bound == target {
			return err
		}
		legacy, err := e.proj.OutboxTargets()
		if err != nil {
			return err
		}
		now := e.cfg.Clock.Now()
		var ch aggregates.Changes
		d, _ := aggregates.TargetBinding(bound, target, legacy, now)
		ch.AddDecision(d)
		if err := e.abandon(&ch, bound, now); err != nil {
			return err
		}
		return e.commitWorker(ch, now)
	})
}

// abandon supersedes the unsettled effects of a target no longer served.
func (e *Engine) abandon(ch *aggregates.Changes, old string, now time.Time) error {
	if old == "" {
		return nil
	}
	stale, err := e.proj.UnsettledOf(old)
	for _, fx := range stale {
		d, derr := aggregates.DecideAbandon(fx, now)
		if derr != nil {
			return derr
		}
		ch.AddDecision(d)
	}
	return err
}

// syncState is the store's sync side for one spreadsheet (the default one,
// or a route's), set at Open when Config.Sync is set.
//
// Health, Stats and the metrics read it: no lock they take is ever held
// across a network call. provision serialises provisioning (network
// calls, retries) and is never taken by a reader; mu only guards the
// published fields and is held for field copies only.
type syncState struct {
	cfg       SyncConfig
	schema    *layout.Schema // the tabs this spreadsheet shows
	inputs    []string       // its Input tabs
	provision sync.Mutex     // serialises Provision; readers never take it
	mu        sync.Mutex     // guards workbook, disp, poller, stopped and provSince/provErr (never held across I/O)
	workbook  *sheetsio.Workbook
	disp      *effects.Dispatcher
	poller    *effects.Poller
	stopped   error     // why the workers stopped (divergence, displaced)
	provSince time.Time // the first provisioning attempt's start (zero: none yet)
	provErr   error     // the last provisioning attempt's error
	cancel    context.CancelFunc
	done      chan error
	pollHint  chan struct{} // in-process poll requests (RequestPoll) when the wake-ups stay in process; nil otherwise
	named     pollNames     // the tabs the pending in-process poll requests named (the default target's)
	pollEnded atomic.Bool   // the poller returned while the workers were to run (WakeReady)
	// writer goroutine only
	noteDone chan struct{}
	noteSeq  uint64 // last conflict notice delivered (no duplicates after a repaired projection)
}

// attempting records the start of a provisioning attempt of s (the
// first one's time is kept).
func (s *syncState) attempting(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provSince.IsZero() {
		s.provSince = at
	}
}

// provisioned records how the last provisioning attempt of s ended.
func (s *syncState) provisioned(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.provErr = err
}

// provisioning is when the first provisioning attempt of s started
// (zero: none yet) and the last attempt's error.
func (s *syncState) provisioning() (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.provSince, s.provErr
}

func (e *Engine) setupSync() {
	if c := e.cfg.Sync; c != nil {
		cfg := *c
		cfg.Name, cfg.Routes = syncName(c), nil
		e.sync = &syncState{cfg: cfg, schema: e.sheet.Schema, inputs: e.sheet.inputs, done: make(chan error, 1)}
	}
}

// Provision creates the spreadsheet's tabs and headers (idempotent) and
// mirrors this writer's authority into it, then builds the dispatcher and
// the poller. Errors: ErrSyncStartup without sync; provider errors.
func (e *Engine) Provision(ctx context.Context) (*effects.Dispatcher, error) {
	if e.sync == nil {
		return nil, fmt.Errorf("%w: sync is not configured", ErrSyncStartup)
	}
	return e.provisionTarget(ctx, e.sync)
}

// provisionTarget is Provision for target s, after the outbox is bound
// to the default spreadsheet and each entity tab to its target.
func (e *Engine) provisionTarget(ctx context.Context, s *syncState) (*effects.Dispatcher, error) {
	if err := e.bindTarget(e.sync.cfg.Name); err != nil {
		return nil, err
	}
	if err := e.bindRoutes(); err != nil {
		return nil, err
	}
	s.provision.Lock()
	defer s.provision.Unlock()
	s.mu.Lock()
	d := s.disp
	s.mu.Unlock()
	if d != nil {
		return d, nil
	}
	s.attempting(e.cfg.Clock.Now())
	disp, poller, wb, err := e.provision(ctx, s)
	s.provisioned(err)
	if err != nil {
		e.keepAuthorityEpoch(err)
		return nil, err
	}
	s.mu.Lock()
	s.workbook, s.disp, s.poller = wb, disp, poller
	s.mu.Unlock()
	return disp, nil
}

// provision does Provision's network work without any lock a reader
// takes: the spreadsheet's tabs, the dispatcher, the authority claim and
// the poller.
func (e *Engine) provision(ctx context.Context, s *syncState) (*effects.Dispatcher, *effects.Poller, *sheetsio.Workbook, error) {
	c := s.cfg
	wb, err := c.Provider.Provision(ctx, c.SpreadsheetID, s.schema)
	if err != nil && wb == nil {
		return nil, nil, nil, err
	}
	if err != nil && e.lay != nil { // header drift: an older layout (migrated before the first claim) or a person's change
		e.lay.toCheck(e.targetTabs(s)...)
	}
	if err := e.noteRecreatedTabs(s, wb); err != nil {
		return nil, nil, nil, err
	}
	disp, err := effects.NewDispatcher(effects.Config{Spreadsheet: c.Name, Provider: c.Provider, Workbook: wb, Outbox: e,
		Clock: e.cfg.Clock, Logger: e.log, MaxBatch: c.MaxBatch, Interval: c.Interval, Wake: c.Wake, ProbeDelay: c.ProbeDelay,
		MaxProbes: c.MaxProbes, RetryBase: c.RetryBase, RetryMax: c.RetryMax, ReconcileInterval: c.ReconcileInterval,
		AuthorityTTL: c.AuthorityTTL, Notes: e, WriteGuard: e.writeGuard, Tracer: c.Tracer, ChainHead: e.sheetChainHead,
		HeadShown: e.headShown, Layouts: e.layoutsOf(s), Reconciled: e.reconciled(c.Name), Workers: c.Workers,
		LaneLoad: c.LaneLoad})
	if err != nil {
		return nil, nil, nil, err
	}
	// Claim the authority before the first write of the run (I05);
	// while another store holds it, the dispatcher keeps refusing.
	if err := disp.ClaimAuthority(ctx); err != nil && !errors.Is(err, effects.ErrAuthorityHeld) {
		return nil, nil, nil, err
	}
	var in effects.Inbound = e
	if s != e.sync {
		in = routeInbound{e}
	}
	poller, err := effects.NewPoller(effects.PollerConfig{Provider: c.Provider, Workbook: wb, Inbound: in, Tabs: s.inputs,
		Clock: e.cfg.Clock, Logger: e.log, Interval: c.PollingInterval, FullScanInterval: c.FullScanInterval,
		CleanupInterval: c.ReconcileInterval, Wake: c.PollWake, Tracer: c.Tracer, Layouts: e.layoutsOf(s), Named: e.pollNamed(s)})
	if err != nil {
		return nil, nil, nil, err
	}
	return disp, poller, wb, nil
}

// noteRecreatedTabs tells health which of target s's tabs provisioning
// created again although they had shown rows the store wrote or accepted
// (deleted while the store was down): they are missing those rows until
// the next reconciliation pass refills them, and health says so from the
// start instead of ok until a poll reads one empty.
func (e *Engine) noteRecreatedTabs(s *syncState, wb *sheetsio.Workbook) error {
	for _, tab := range e.targetTabs(s) {
		if !wb.Created(tab) {
			continue
		}
		var shown bool
		if err := e.onWriter(func() (err error) { shown, err = e.proj.ShownBefore(tab, math.MaxInt64); return err }); err != nil {
			return err
		}
		if shown {
			e.notes.noteRecreated(s.cfg.Name, tab)
		}
	}
	return nil
}

// pollNamed is how target s's poller learns the tabs its wake-ups named
// (effects.PollerConfig.Named): only the default target's of a store
// without routes (a sheetId names a tab of one spreadsheet), nil else.
func (e *Engine) pollNamed(s *syncState) func() []int64 {
	if s != e.sync || len(e.routes) > 0 {
		return nil
	}
	return s.named.take
}

// Manual reports whether sync is on with its workers left to the caller.
func (e *Engine) Manual() bool { return e.sync != nil && e.sync.cfg.Manual }

// Workers returns the provisioned dispatcher, poller and spreadsheet
// binding (nil before Provision, or without sync).
func (e *Engine) Workers() (*effects.Dispatcher, *effects.Poller, *sheetsio.Workbook) {
	if e.sync == nil {
		return nil, nil, nil
	}
	e.sync.mu.Lock()
	defer e.sync.mu.Unlock()
	return e.sync.disp, e.sync.poller, e.sync.workbook
}

// startSync runs provisioning (retried with backoff until it succeeds) and
// then the dispatcher and the poller of every target, in the background,
// until Close.
func (e *Engine) startSync() {
	e.enableNotices()
	if e.sync == nil || e.sync.cfg.Manual {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.shareWakes(ctx)
	ts := e.targets()
	setCancel(ts, cancel)
	for _, s := range ts {
		go func() { s.done <- e.superviseSync(ctx, s) }()
	}
}

// setCancel gives every target the cancel of their shared run.
func setCancel(ts []*syncState, cancel context.CancelFunc) {
	for _, s := range ts {
		s.mu.Lock()
		s.cancel = cancel
		s.mu.Unlock()
	}
}

// shareWakes hands the default target's wake-ups to every routed target
// too (each dispatcher and poller reads its own channel). The first run
// gives each target its channels; every run fans the wake-ups out until
// ctx ends.
func (e *Engine) shareWakes(ctx context.Context) {
	if len(e.routes) == 0 {
		return
	}
	if e.wakes == nil {
		e.wakes = e.wakeFans()
	}
	for _, f := range e.wakes {
		go fanOut(ctx, f.src, f.outs)
	}
}

// wakeFans takes the default target's dispatch and poll wake-up channels
// as the sources and gives every target a channel of its own for each.
func (e *Engine) wakeFans() []wakeFan {
	var fans []wakeFan
	for _, pick := range []func(*SyncConfig) *<-chan struct{}{
		func(c *SyncConfig) *<-chan struct{} { return &c.Wake },
		func(c *SyncConfig) *<-chan struct{} { return &c.PollWake },
	} {
		f := wakeFan{src: *pick(&e.sync.cfg)}
		if f.src == nil {
			continue
		}
		for _, s := range e.targets() {
			ch := make(chan struct{}, 1)
			*pick(&s.cfg) = ch
			f.outs = append(f.outs, ch)
		}
		fans = append(fans, f)
	}
	return fans
}

func (e *Engine) superviseSync(ctx context.Context, s *syncState) error {
	wait := time.Second
	for failed := 0; ; failed++ {
		disp, err := e.provisionTarget(ctx, s)
		if err == nil {
			if failed > 0 {
				e.log.Info("sync recovered: the spreadsheet is provisioned", "target", s.cfg.Name, "failed_attempts", failed)
			}
			return e.runWorkers(ctx, s, disp)
		}
		if errors.Is(err, sheetsio.ErrCredentialsRejected) {
			e.stopOnCredentials(s, err)
			return nil
		}
		if errors.Is(err, effects.ErrDivergence) {
			// The authority names a newer writer (I05): retrying cannot
			// help, and it is no unreachable spreadsheet.
			e.stopOnDivergence(s, err)
			return nil
		}
		e.log.Warn("sync provisioning failed; retrying", "target", s.cfg.Name, "err", err.Error(), "in", wait.String())
		select {
		case <-ctx.Done():
			return nil
		case <-e.cfg.Clock.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

// runWorkers runs the poller next to the dispatcher until ctx ends or the
// dispatcher stops (displaced, diverged), recording why.
func (e *Engine) runWorkers(ctx context.Context, s *syncState, disp *effects.Dispatcher) error {
	s.mu.Lock()
	poller := s.poller
	s.mu.Unlock()
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := poller.Run(pctx)
		s.pollEnded.Store(pctx.Err() == nil)
		if err != nil {
			e.log.Error("inbound poller stopped", "target", s.cfg.Name, "err", err.Error())
		}
	}()
	err := disp.Run(ctx)
	cancel()
	<-done
	if err != nil {
		e.keepAuthorityEpoch(err)
		e.log.Error("sync stopped", "target", s.cfg.Name, "err", err.Error())
		s.mu.Lock()
		s.stopped = cmp.Or(s.stopped, err) // haltSync's reason stands
		s.mu.Unlock()
	}
	return err
}

// stopOnDivergence stops sync of target s for good when provisioning
// found the spreadsheet authority naming a newer writer
// (effects.ErrDivergence): health reports authority_diverged (never
// sheets_unreachable), the divergence is recorded once, the store keeps
// committing.
func (e *Engine) stopOnDivergence(s *syncState, err error) {
	e.log.Error("sync stopped: the spreadsheet authority names a newer writer", "target", s.cfg.Name, "err", err.Error())
	s.mu.Lock()
	s.stopped = cmp.Or(s.stopped, err)
	s.mu.Unlock()
}

// keepAuthorityEpoch records, when err says the spreadsheet authority
// names this store at an epoch not below the writer's
// (*effects.AuthorityAheadError), that epoch as handed out
// (events.Log.RaiseEpochFloor): the next lease of this store is taken
// above it, so a restart claims the authority instead of diverging again.
// Not in replicated mode, where the lease across hosts numbers epochs.
func (e *Engine) keepAuthorityEpoch(err error) {
	var ahead *effects.AuthorityAheadError
	w := e.writer()
	if !errors.As(err, &ahead) || ahead.Epoch <= 0 || e.repl != nil || w == nil {
		return
	}
	if _, ferr := w.Log().RaiseEpochFloor(w.Lease().Role, uint64(ahead.Epoch)); ferr != nil {
		e.log.Warn("could not record the epoch the spreadsheet authority names", "epoch", ahead.Epoch, "err", ferr.Error())
	}
}

// stopOnCredentials stops sync of target s for good when Google refused
// the credentials: retrying cannot help until someone replaces the key.
// Health reports credentials_rejected; the store keeps committing.
func (e *Engine) stopOnCredentials(s *syncState, err error) {
	e.log.Error("sync stopped: Google rejected the credentials; replace the service-account key and restart", "code", sheetsio.CodeCredentialsRejected)
	s.mu.Lock()
	s.stopped = cmp.Or(s.stopped, fmt.Errorf("sync stopped: %w", err))
	s.mu.Unlock()
}

// haltSync stops the workers of every target for good, recording why (a
// displaced replicated primary); Close then only waits for them.
func (e *Engine) haltSync(why error) {
	for _, s := range e.targets() {
		s.mu.Lock()
		s.stopped = why
		cancel := s.cancel
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

func (e *Engine) stopSync() error {
	var first error
	for _, s := range e.targets() {
		s.mu.Lock()
		cancel := s.cancel
		s.cancel = nil
		s.mu.Unlock()
		if cancel == nil {
			continue
		}
		cancel()
		err := <-s.done
		if !errors.Is(err, context.Canceled) && !errors.Is(err, events.ErrReplicaFenced) {
			first = cmp.Or(first, err)
		}
	}
	return first
}

// Health separates local health (the store can commit) from sync health
// (the spreadsheet is being materialised). A nil error field is healthy.
type Health struct {
	Local error // commits fail: the lease was lost, the store is closed, the log or read model cannot be written
	// Sync: the workers stopped (divergence, displaced), the spreadsheet is
	// not provisioned yet, or SyncHealth is blocked or diverged (its Err).
	Sync error
	// SyncHealth is the spreadsheet's sync health by tab (nil without
	// sync, or when the read model could not be read: Sync says why).
	SyncHealth *SyncHealth
	// Routes is each routed spreadsheet's (SyncConfig.Routes), in order.
	Routes []*SyncHealth
	// Integrity is damage the store found in itself at open (records lost
	// from the log); it does not stop commits.
	Integrity error
	// Mirror: the NATS event mirror is failing (its last attempt's
	// error), or trails the log past its bound (*MirrorLagError,
	// ErrMirrorBehind). Nil when the mirror is off or within its bound.
	Mirror error
	// MirrorLag is how far the mirror trails the log, in records and
	// seconds (nil when the mirror is off).
	MirrorLag *MirrorLag
	// Replication is the role of a replicated store (nil when not
	// replicated); a standby's Local is ErrStandby, a displaced primary's
	// events.ErrReplicaFenced.
	Replication *ReplicationHealth
	// Admin is why the administrative channel cannot accept connections
	// now (admin_accept_failed); the root package fills it.
	Admin error
	// Retention is the background sealing's state (off without a
	// policy; not_running on a replicated store; failing with Err
	// wrapping ErrRetentionFailing).
	Retention RetentionStatus
}

// Health reports the store's current health, from local state only: it
// never waits on the network nor on a lock held across a network call
// (I29).
func (e *Engine) Health() Health {
	h := Health{Replication: e.replicationHealth(), Retention: e.RetentionStatus()}
	if h.Replication != nil && h.Replication.Role == RoleStandby { // until a takeover finished
		h.Local = e.standbyHealth()
		if e.isClosed() {
			h.Local = ErrStoreClosed
		}
		return h
	}
	e.checkLogFile()
	h.Mirror, h.MirrorLag = e.mirrorHealth(), e.mirrorLag()
	if h.Mirror == nil && h.MirrorLag.Behind() {
		h.Mirror = &MirrorLagError{Lag: *h.MirrorLag}
	}
	switch {
	case e.isClosed():
		h.Local = ErrStoreClosed
	case e.writer().Lost():
		h.Local = fmt.Errorf("writer lease lost")
	case e.fault.Load() != nil:
		h.Local = *e.fault.Load()
	default:
		h.Local = e.replicationStale()
	}
	if e.gap != nil {
		h.Integrity = &LogGapError{Gap: *e.gap}
	}
	if e.sync == nil || h.Local == ErrStoreClosed {
		return h
	}
	h.Sync = e.workersErr(e.sync)
	sh, err := e.SyncHealth()
	h.SyncHealth = sh
	if h.Sync == nil {
		h.Sync = cmp.Or(err, sh.Err())
	}
	routes, err := e.RouteHealth()
	h.Routes = routes
	for i, rh := range routes {
		h.Sync = cmp.Or(h.Sync, e.workersErr(e.routes[i]), rh.Err())
	}
	h.Sync = cmp.Or(h.Sync, err)
	return h
}

// workersErr says why the workers are not running: stopped, or not
// provisioned yet (with the last provisioning error).
func (e *Engine) workersErr(s *syncState) error {
	s.mu.Lock()
	stopped, provisioned := s.stopped, s.disp != nil
	s.mu.Unlock()
	switch {
	case stopped != nil:
		return stopped
	case provisioned:
		return nil
	}
	if _, err := s.provisioning(); err != nil {
		return fmt.Errorf("%w: spreadsheet not provisioned yet: %w", ErrSyncNotProvisioned, err)
	}
	return fmt.Errorf("%w: spreadsheet not provisioned yet", ErrSyncNotProvisioned)
}
