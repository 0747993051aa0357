package effects

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// DefaultReconcileInterval is the reconciliation scanner's cadence when
// Config.ReconcileInterval is zero.
const DefaultReconcileInterval = 30 * time.Second

// DefaultMaxBatch is how many effects a pass claims at most when
// Config.MaxBatch is zero: about 4 MB of city-sized rows, half of one
// batchUpdate body (the provider chunks by bytes, up to 8 MiB), so a
// backlog goes out in few write requests (a pass of 2,000 city-sized
// effects was a body of 0.75 MB); a larger pass would hold more of the
// backlog in memory at once.
const DefaultMaxBatch = 10000

// Config configures a Dispatcher for one spreadsheet.
type Config struct {
	Spreadsheet string             // the sync target's name (used in the outbox)
	Provider    sheetsio.Client    // the only code that talks to Sheets
	Workbook    *sheetsio.Workbook // the provisioned spreadsheet
	Outbox      Outbox
	Clock       events.Clock // default wall clock
	Logger      *slog.Logger // never receives ids or cell values
	// MaxBatch bounds the effects of one dispatch (default
	// DefaultMaxBatch); the provider sends them in as few batchUpdate
	// bodies as their bytes need.
	MaxBatch int
	// Interval is the timer fallback between passes (default 1 s); wake-ups
	// arrive earlier on Wake.
	Interval time.Duration
	// Wake delivers wake-up hints (e.g. from NATS); nil = timer only.
	Wake <-chan struct{}
	// ProbeDelay is how long after an uncertain delivery its first probe is
	// due (default 2 s); later probes back off up to RetryMax.
	ProbeDelay time.Duration
	// MaxProbes bounds probing of one uncertain effect (default 10), then it
	// fails with delivery_uncertain_timeout (I08).
	MaxProbes int64
	// RetryBase and RetryMax bound the capped, jittered exponential backoff
	// of recoverable failures (defaults 1 s and 1 min).
	RetryBase, RetryMax time.Duration
	// ReconcileInterval is the reconciliation scanner's own cadence
	// (default 30 s), independent of how busy the dispatcher is (I21).
	ReconcileInterval time.Duration
	// ReconcileRows bounds what one anti-entropy pass reads: whole row
	// tabs up to this many data rows in all (default 50,000; at least one
	// tab per pass).
	ReconcileRows int
	// AuthorityTTL: a spreadsheet authority not refreshed for this long
	// may be taken over by another store (default DefaultAuthorityTTL; the
	// owner refreshes it every TTL/3, in a pass's dispatch while it sends
	// effects).
	AuthorityTTL time.Duration
	// WriteGuard, when set, is asked right before each batchUpdate of a
	// dispatch (sheetsio.Batch.BeforeWrite): an error (this writer may
	// have been deposed) sends nothing, and the effects go back on the
	// retry path.
	WriteGuard func() error
	// Notes tells the cell notes the Input cells should carry (nil = no
	// notes); they ride in the passes' dispatches.
	Notes NoteSource
	// Tracer traces each dispatch (SpanDispatch); nil: no tracing.
	Tracer trace.Tracer
	// Layouts, when set, migrates the tabs that show an older layout of
	// the entities before each pass claims (see Migrator).
	Layouts Migrator
	// ChainHead, when set, gives the store's hash-chain head, sampled
	// before each dispatch and published in the spreadsheet's authority
	// row (sheetsio.Batch.Head); an error publishes nothing that time.
	ChainHead func() (sheetsio.ChainHead, error)
	// HeadShown, when set, is told after each dispatch that read the
	// authority row's chain_head cell what the cell showed and the head
	// the dispatch published (sheetsio.DispatchResult.HeadShown): a shown
	// head past the published one is no head of the log (a person typed
	// it; the dispatch rewrote it). It must not block.
	HeadShown func(shown, published sheetsio.ChainHead)
	// Workers bounds how many batches one pass sends in parallel, each
	// carrying whole tabs (default DefaultWorkers; 1: one batch a pass);
	// a provider that is a sheetsio.LaneDispatcher reads for all of them
	// at once.
	// The provider's quota budget bounds it further: a pass fans out
	// only as far as the budget lets requests start now.
	Workers int
	// LaneLoad is the work (effects and cell notes) each parallel batch
	// of a pass carries at least (default DefaultLaneLoad): a pass of
	// less than twice that goes out as one batch.
	LaneLoad int
	// Reconciled, when set, is told how each reconciliation pass
	// (Reconcile) ended: nil, or the error that stopped it (a pass cut
	// short by its context ending is not told). It must not block.
	Reconciled func(err error)
}

func (c Config) withDefaults() (Config, error) {
	if c.Provider == nil || c.Workbook == nil || c.Outbox == nil || c.Spreadsheet == "" {
		return c, fmt.Errorf("%w: provider, workbook, outbox and spreadsheet are required", ErrConfig)
	}
	if c.Clock == nil {
		c.Clock = events.SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.MaxBatch = cmp(c.MaxBatch, DefaultMaxBatch)
	c.Interval = cmpD(c.Interval, time.Second)
	c.ProbeDelay = cmpD(c.ProbeDelay, 2*time.Second)
	c.RetryBase = cmpD(c.RetryBase, time.Second)
	c.RetryMax = cmpD(c.RetryMax, time.Minute)
	c.ReconcileInterval = cmpD(c.ReconcileInterval, DefaultReconcileInterval)
	c.ReconcileRows = cmp(c.ReconcileRows, 50000)
	c.Workers = cmp(c.Workers, DefaultWorkers)
	c.LaneLoad = cmp(c.LaneLoad, DefaultLaneLoad)
	c.AuthorityTTL = cmpD(c.AuthorityTTL, DefaultAuthorityTTL)
	if c.MaxProbes <= 0 {
		c.MaxProbes = 10
	}
	return c, nil
}

func cmp(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func cmpD(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Counters are the dispatcher's running totals (for status and metrics).
type Counters struct {
	Passes, Dispatches, Claimed, Applied, Uncertain, Failed, Retried, Conflicts, Probes, Superseded, Backfilled, Repaired atomic.Int64
	// Deferred counts the tabs scheduled anti-entropy passes left out
	// while they were being filled (entropyCursor.atRest).
	Deferred atomic.Int64
	// Misdirected counts updates whose cells landed on another row (C06).
	Misdirected atomic.Int64
	// Notes counts cell notes written or removed.
	Notes atomic.Int64
	// Held is whether the last authority check found another store's
	// live authority on the spreadsheet (ErrAuthorityHeld): the
	// dispatcher writes nothing until it expires.
	Held atomic.Bool
}

// Totals is a copy of the counters by kind, as Stats and the metrics
// show them.
func (c *Counters) Totals() map[string]int64 {
	return map[string]int64{"passes": c.Passes.Load(), "dispatches": c.Dispatches.Load(), "claimed": c.Claimed.Load(),
		"applied": c.Applied.Load(), "uncertain": c.Uncertain.Load(), "failed": c.Failed.Load(), "retried": c.Retried.Load(),
		"conflicts": c.Conflicts.Load(), "probes": c.Probes.Load(), "superseded": c.Superseded.Load(), "backfilled": c.Backfilled.Load(),
		"repaired": c.Repaired.Load(), "misdirected": c.Misdirected.Load(), "notes": c.Notes.Load(),
		"tabs_deferred": c.Deferred.Load()}
}

// Dispatcher moves effects from the outbox to one spreadsheet.
type Dispatcher struct {
	cfg  Config
	C    Counters
	auth authority // only the pass loop touches it
	// batch is the adaptive batch size: halved after a dispatch with an
	// uncertain or failed outcome, doubled back towards MaxBatch after a
	// clean one (0 = MaxBatch).
	batch int
	// settling carries the outcome of the previous batch's settlement while
	// the pass loop sends the next one (nil = none in flight).
	settling chan error
	// next carries the batch claimed ahead while the current one is in
	// flight (nil = none).
	next chan claimResult
	// checkedAt is when a pass last asked the store for due probes and
	// cell notes (zero = never; only the pass loop touches it).
	checkedAt time.Time
	// ae is the anti-entropy cursor (which tabs the next pass reads).
	ae entropyCursor
	// notes are the cell notes this run wrote, by cell, and swept the
	// Input tabs whose notes this run knows (only the pass loop touches
	// them).
	notes map[string]aggregates.CellNote
	swept map[string]bool
	// readLast is whether the last dispatch read (or failed): false
	// before the first, so the first pass after provisioning waits for
	// its write's turn when its appends may go blind (readTurn). Only
	// the pass loop touches it.
	readLast bool
	// kept are settlements whose commit failed, for the next pass.
	kept keptSettlements
}

// minBatch is the smallest adaptive batch.
const minBatch = 16

func (d *Dispatcher) batchSize() int {
	if d.batch <= 0 {
		d.batch = d.cfg.MaxBatch
	}
	return d.batch
}

// adapt shrinks the batch after trouble and grows it after a clean dispatch.
func (d *Dispatcher) adapt(trouble bool) {
	if trouble {
		d.batch = max(d.batchSize()/2, min(minBatch, d.cfg.MaxBatch))
		return
	}
	d.batch = min(d.batchSize()*2, d.cfg.MaxBatch)
}

// NewDispatcher validates cfg. Errors: ErrConfig.
func NewDispatcher(cfg Config) (*Dispatcher, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Dispatcher{cfg: cfg}, nil
}

// Run recovers effects a previous run left in processing, then runs passes
// on wake-ups and on the timer, and the reconciliation scanner on its own
// schedule, until ctx ends (nil) or the writer is displaced / the
// spreadsheet diverged (ErrDisplaced, ErrDivergence).
func (d *Dispatcher) Run(ctx context.Context) error {
	start := d.cfg.Clock.Now() // the reconciliation's slots count from here
	err := d.untilDone(ctx, "recover processing effects", func() error {
		_, err := d.cfg.Outbox.RecoverProcessing(d.cfg.Spreadsheet, d.cfg.Clock.Now())
		return fenced(err)
	})
	if err == nil {
		err = d.untilDone(ctx, "backfill", d.backfill)
	}
	if err != nil || ctx.Err() != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	recDone := make(chan error, 1)
	go func() { recDone <- d.reconcileLoop(ctx, start) }()
	err = d.passLoop(ctx)
	cancel()
	return errors.Join(err, <-recDone)
}

// untilDone runs step until it succeeds, ctx ends (nil) or it fails
// with displacement (returned): a failure that may pass — a full disk or
// a failing write refusing the commit (log_write_failed), too many open
// files — is logged and tried again after a backoff (Interval, doubling
// up to a minute), so the dispatcher starts once the resource is back
// instead of stopping sync for good; the store's Health names the
// failure meanwhile.
func (d *Dispatcher) untilDone(ctx context.Context, what string, step func() error) error {
	wait := d.cfg.Interval
	for failed := 0; ; failed++ {
		err := step()
		if err == nil && failed > 0 {
			d.cfg.Logger.Info("dispatcher recovered: started", "step", what, "failed_attempts", failed)
		}
		if err == nil || errors.Is(err, ErrDisplaced) {
			return err
		}
		d.cfg.Logger.Warn("dispatcher start failed; retrying", "step", what, "err", err.Error(), "in", wait.String())
		select {
		case <-ctx.Done():
			return nil
		case <-d.cfg.Clock.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

// backfill queues every entity the spreadsheet never received before the
// first pass (a store whose sync was just turned on).
func (d *Dispatcher) backfill() error {
	for {
		n, err := d.cfg.Outbox.QueueUnsynced(d.cfg.Spreadsheet, d.cfg.MaxBatch)
		d.C.Backfilled.Add(int64(n))
		if err != nil || n < d.cfg.MaxBatch {
			return fenced(err)
		}
	}
}

func (d *Dispatcher) passLoop(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, d.awaitSettle(), d.releasePrefetch()) }()
	failed := 0 // dispatch passes failed in a row
	for {
		busy, err := d.pass(ctx, true)
		if err != nil && ctx.Err() == nil {
			if errors.Is(err, ErrDisplaced) || errors.Is(err, ErrDivergence) {
				return err
			}
			d.cfg.Logger.Warn("dispatch pass failed", "err", err.Error())
			failed++
		} else if err == nil && failed > 0 {
			d.cfg.Logger.Info("dispatcher recovered: a dispatch pass succeeded", "failed_passes", failed)
			failed = 0
		}
		if busy {
			continue // more work is claimable now
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.cfg.Wake:
		case <-d.cfg.Clock.After(d.cfg.Interval):
		}
	}
}

// reconcileLoop runs Reconcile on its slots from start (NextSlot at
// PhasesOf(ReconcileInterval).Reconcile): every ReconcileInterval
// whatever a pass took, half a period apart from the poller's cleanup and
// full scan (which count from the poller's start, the same moment).
func (d *Dispatcher) reconcileLoop(ctx context.Context, start time.Time) error {
	failed := 0 // reconciliations failed in a row
	period := d.cfg.ReconcileInterval
	for {
		now := d.cfg.Clock.Now()
		select {
		case <-ctx.Done():
			return nil
		case <-d.cfg.Clock.After(NextSlot(now, start, period, PhasesOf(period).Reconcile).Sub(now)):
		}
		if _, err := d.reconcileNow(sheetsio.WithReadPriority(ctx, sheetsio.PriorityBackground), true); err != nil { // spaced between the passes' reads
			d.cfg.Logger.Warn("reconciliation failed", "err", err.Error())
			failed++
		} else if failed > 0 {
			d.cfg.Logger.Info("reconciliation recovered", "failed_passes", failed)
			failed = 0
		}
	}
}

// Reconcile runs one reconciliation scan: terminal failed heads are
// superseded, fenced, in the same commit as their replacement (I10),
// entities the spreadsheet never received get their rows queued, and an
// anti-entropy pass compares every row tab with canonical state and
// queues corrections (I28). It returns how many heads it superseded.
func (d *Dispatcher) Reconcile(ctx context.Context) (int, error) { return d.reconcileNow(ctx, false) }

// reconcileNow is Reconcile; a scheduled one (the cadence's) leaves the
// tabs being filled to a later anti-entropy pass.
func (d *Dispatcher) reconcileNow(ctx context.Context, scheduled bool) (int, error) {
	n, err := d.reconcile(ctx, scheduled)
	if d.cfg.Reconciled != nil && ctx.Err() == nil {
		d.cfg.Reconciled(err)
	}
	return n, err
}

// reconcile is Reconcile's pass.
func (d *Dispatcher) reconcile(ctx context.Context, scheduled bool) (int, error) {
	n, err := d.cfg.Outbox.SupersedeTerminal(d.cfg.Spreadsheet, d.cfg.MaxBatch)
	d.C.Superseded.Add(int64(n))
	if err != nil {
		return n, err
	}
	queued, err := d.cfg.Outbox.QueueUnsynced(d.cfg.Spreadsheet, d.cfg.MaxBatch)
	d.C.Backfilled.Add(int64(queued))
	if err != nil {
		return n, err
	}
	reps, err := d.antiEntropy(ctx, scheduled)
	for _, r := range reps {
		d.C.Repaired.Add(int64(r.Queued))
	}
	if err == nil {
		d.refreshGrid(ctx)
	}
	return n, err
}

// gridRefresher is a Client that reads the spreadsheet's grid sizes for
// capacity health when its last read is old (gsheets.Provider).
type gridRefresher interface {
	RefreshGrid(ctx context.Context, w *sheetsio.Workbook) error
}

// refreshGrid lets the provider read the grid's sizes (sync health's
// spreadsheet_capacity); a failure is the provider's last failure, and
// the next pass tries again.
func (d *Dispatcher) refreshGrid(ctx context.Context) {
	g, ok := d.cfg.Provider.(gridRefresher)
	if !ok {
		return
	}
	if err := g.RefreshGrid(ctx, d.cfg.Workbook); err != nil {
		d.cfg.Logger.Debug("reading the spreadsheet's grid sizes failed", "err", err)
	}
}

// Pass probes due uncertain effects, then claims and dispatches one batch
// and settles it before returning. It reports whether a full batch was
// dispatched (more may be waiting).
func (d *Dispatcher) Pass(ctx context.Context) (bool, error) { return d.pass(ctx, false) }

// pass is Pass; when pipelined (the Run loop), a sent batch's settlement
// commits in the background while the next pass sends the next batch,
// claimed before that settlement enters the store's writer (claimAhead),
// and that pass waits for it before settling its own. Claims never take
// an effect whose binding has an unsettled earlier one (I07), so neither
// overlap can reorder writes to one row.
func (d *Dispatcher) pass(ctx context.Context, pipelined bool) (bool, error) {
	d.C.Passes.Add(1)
	if err := d.settleKept(); err != nil {
		return false, errors.Join(err, d.awaitSettle())
	}
	size := d.batchSize()
	checks := d.checksDue()
	claimed, turned, err := d.claim(ctx, size, checks)
	if err != nil {
		return false, errors.Join(err, d.awaitSettle())
	}
	var notes noteWork
	if checks {
		notes, err = d.noteChanges()
	}
	if err == nil && len(claimed) == 0 {
		err = d.checkAuthority(ctx) // nothing to send: the refresh rides in no dispatch
	}
	if err != nil || len(claimed) == 0 {
		return false, errors.Join(err, d.sendNotes(ctx, notes), d.awaitSettle())
	}
	d.C.Claimed.Add(int64(len(claimed)))
	failpoint.Inject(failpoint.DispatchAfterClaim)
	if pipelined && len(claimed) == size {
		d.prefetch(size)
	}
	if turned {
		ctx = sheetsio.WithReadTurn(ctx) // the preflight read is the one the turn was for
	}
	out, derr := d.dispatch(ctx, claimed, notes)
	d.adapt(derr != nil || troubled(out))
	if again(pipelined, len(claimed), size, derr) {
		d.claimAhead() // before the previous settlement may have ended: the writer takes them in turn
	}
	if err := d.awaitSettle(); err != nil {
		return false, errors.Join(err, d.finish(out, derr))
	}
	if again(pipelined, len(claimed), size, derr) {
		d.settleAsync(out)
		return true, nil
	}
	return len(claimed) == size && derr == nil, d.finish(out, derr)
}

// again decides whether the pass loop runs its next pass at once, with
// this batch's settlement committing in the background: after any batch
// that was sent, not only a full one (whose successor was claimed ahead),
// since effects committed while it was in flight are claimable now; a
// pass that finds none simply waits for a wake-up. Only a full batch
// claims its successor ahead: a claim taken as the write starts would
// split the effects committed meanwhile into more, smaller batches (more
// requests, more store commits). Pass (unpipelined) settles before
// returning, reporting a full batch.
func again(pipelined bool, claimed, size int, derr error) bool {
	return pipelined && claimed > 0 && derr == nil
}

// claim renews the lease before any remote call of the pass (I04: a
// displaced writer stops here, even with probes due), probes due uncertain
// effects (when checks), checks the spreadsheet authority (its refresh
// left to the pass's dispatch while it may ride there: refreshDue) and
// claims the next batch. turned reports that the claim followed the
// pass's read turn (readTurn): the dispatch's first read takes it.
func (d *Dispatcher) claim(ctx context.Context, size int, checks bool) (claimed []aggregates.Effect, turned bool, err error) {
	if err := d.cfg.Outbox.Renew(); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrDisplaced, err)
	}
	if checks {
		if err := d.probe(ctx); err != nil {
			return nil, false, err
		}
	}
	if err := d.checkAuthorityAfter(ctx, rideAge(d.cfg.AuthorityTTL)); err != nil {
		return nil, false, err
	}
	if err := d.migrate(ctx); err != nil {
		return nil, false, err
	}
	if r := d.takePrefetch(); r.err != nil || len(r.claimed) > 0 {
		return r.claimed, false, r.err
	}
	turned, err = d.readTurn(ctx)
	if err != nil {
		return nil, false, err
	}
	claimed, err = d.cfg.Outbox.Claim(d.cfg.Spreadsheet, size)
	return claimed, turned, fenced(err)
}

// readTurn waits, before a claim, until the provider's read budget lets
// the pass's preflight start (sheetsio.ReadPacer): the effects committed
// while the pass waits for its read ride in it, instead of waiting in
// the outbox for the pass after it. The preflight then takes that turn
// (sheetsio.WithReadTurn): it starts on one token even if another read
// (a woken poll's, reconciliation's) took one while the pass claimed,
// instead of waiting for the budget to hold the reserve again. A
// provider without a read budget does not wait.
//
// While the provider may send a pass of updates without a read
// (sheetsio.KnownRows: the fence and the rows it keeps are fresh), the
// pass waits for its write's turn instead, and reports no read turn
// (turned false): it does not queue behind the woken polls' reads, and a
// batch that needs a read after all reads as any other.
//
// So does a pass after a dispatch that read nothing (the first pass
// included) while the provider may append blind (sheetsio.BlindAppends):
// a stream of new rows, the first after provisioning's reads, does not
// wait for the read budget it does not use.
func (d *Dispatcher) readTurn(ctx context.Context) (turned bool, err error) {
	if kr, ok := d.cfg.Provider.(sheetsio.KnownRows); ok && kr.RowsKnown(d.cfg.Workbook, d.cfg.Outbox.Fence()) {
		return false, kr.AwaitWrite(ctx)
	}
	if ba, ok := d.cfg.Provider.(sheetsio.BlindAppends); ok && !d.readLast && ba.AppendsKnown(d.cfg.Workbook, d.cfg.Outbox.Fence()) {
		return false, ba.AwaitWrite(ctx)
	}
	rp, ok := d.cfg.Provider.(sheetsio.ReadPacer)
	if !ok {
		return true, nil
	}
	return true, rp.AwaitRead(ctx)
}

// checksDue reports whether this pass asks the store for due probes and
// cell notes (see checkNow), and notes the time when it does.
func (d *Dispatcher) checksDue() bool {
	now := d.cfg.Clock.Now()
	if !checkNow(d.settling != nil, d.checkedAt, now, checkEvery*d.cfg.ProbeDelay) {
		return false
	}
	d.checkedAt = now
	return true
}

// checkEvery bounds, in probe delays, how long a stream of pipelined
// batches may defer the store's questions (see checkNow).
const checkEvery = 5

// checkNow decides whether a pass asks the store for due probes and cell
// notes. Both questions queue behind the previous batch's settlement in
// the store, so while one is in flight the pass sends its next batch
// first, unless the last check is every old. A pass with no settlement in
// flight (the first after a pause, every unpipelined one) always asks, so
// a due probe or a note change waits at most every while batches stream.
func checkNow(settling bool, last, now time.Time, every time.Duration) bool {
	return !settling || last.IsZero() || now.Sub(last) >= every
}

// claimResult is a batch claimed ahead of its dispatch.
type claimResult struct {
	claimed []aggregates.Effect
	err     error
}

// prefetch claims the next batch on a goroutine while the current one is
// in flight, so the claim's commit overlaps the remote round trip. The
// next pass takes it after its own probe, renewal and authority check.
// When the loop stops, releasePrefetch returns an unsent prefetched batch
// to the retry path; after a crash RecoverProcessing finds it instead.
func (d *Dispatcher) prefetch(size int) {
	ch := make(chan claimResult, 1)
	d.next = ch
	go func() {
		c, err := d.cfg.Outbox.Claim(d.cfg.Spreadsheet, size)
		ch <- claimResult{c, fenced(err)}
	}()
}

// claimAhead claims the next batch as a pipelined batch's write returns,
// before that batch's settlement enters the store's single writer: the
// next write then waits for its own claim only, and the settlement (the
// larger of the two turns: it reads and moves every settled effect's rows
// in the read model) commits while that write is out. The next pass takes
// the batch after its renewal, probe and authority check, as it takes a
// prefetched one; when the claim found nothing the pass claims again
// after its read turn. Nothing else changes hands early: the claim sees
// the settling batch's effects still processing, so it takes no effect
// queued behind one of them on its row (I07), which the pass after the
// settlement claims; a crash between the two turns leaves both batches
// processing, as a crash after a full batch's prefetch does, and
// RecoverProcessing finds them. A batch already prefetched while the
// write was out (a full one) is not claimed again.
func (d *Dispatcher) claimAhead() {
	if d.next != nil {
		return
	}
	c, err := d.cfg.Outbox.Claim(d.cfg.Spreadsheet, d.batchSize())
	ch := make(chan claimResult, 1)
	ch <- claimResult{c, fenced(err)}
	d.next = ch
	if len(c) > 0 {
		failpoint.Inject(failpoint.DispatchAfterClaimAhead)
	}
}

// takePrefetch waits for the batch claimed ahead, if any, and clears it.
func (d *Dispatcher) takePrefetch() claimResult {
	if d.next == nil {
		return claimResult{}
	}
	r := <-d.next
	d.next = nil
	return r
}

// releasePrefetch waits for a claim in flight when the loop stops and puts
// its effects straight back on the retry path (code claim_released), so a
// clean stop leaves nothing processing.
func (d *Dispatcher) releasePrefetch() error {
	r := d.takePrefetch()
	if r.err != nil || len(r.claimed) == 0 {
		return r.err
	}
	out := make([]Settlement, len(r.claimed))
	for i, c := range r.claimed {
		out[i] = Settlement{ID: c.ID, ClaimToken: c.ClaimToken,
			Outcome: aggregates.Outcome{Kind: aggregates.OutcomeRetry, Code: "claim_released", RetryAt: d.cfg.Clock.Now(), Via: "dispatch"}}
	}
	return fenced(d.cfg.Outbox.Settle(out))
}

// troubled reports whether a dispatch left any effect uncertain, failed or
// on the retry path (the adaptive batch then shrinks).
func troubled(out []Settlement) bool {
	for _, s := range out {
		if s.Outcome.Troubled() {
			return true
		}
	}
	return false
}

// settleAsync commits out on a goroutine; awaitSettle collects its error.
func (d *Dispatcher) settleAsync(out []Settlement) {
	ch := make(chan error, 1)
	d.settling = ch
	go func() { ch <- d.finish(out, nil) }()
}

func (d *Dispatcher) awaitSettle() error {
	if d.settling == nil {
		return nil
	}
	err := <-d.settling
	d.settling = nil
	return err
}

// fenced maps a fencing failure of a store decision to ErrDisplaced.
func fenced(err error) error {
	if errors.Is(err, events.ErrStaleWriterFence) || errors.Is(err, events.ErrLeaseExpired) {
		return fmt.Errorf("%w: %w", ErrDisplaced, err)
	}
	return err
}

// dispatch sends claimed and returns the settlement of each effect, plus
// the error of each lane that wrote nothing (its effects go back on the
// retry path). The work goes out in lanes of whole tabs, in parallel as
// far as Config.Workers and the quota budget allow (see fanOut): a row's
// effects are one tab's, so no two lanes write one row, and claims never
// hold two unsettled effects of one row (I07), so a row's effects keep
// their order.
func (d *Dispatcher) dispatch(ctx context.Context, claimed []aggregates.Effect, notes noteWork) (out []Settlement, err error) {
	ctx, span := startSpan(ctx, d.cfg.Tracer, SpanDispatch)
	defer func() { endDispatch(span, len(claimed), out, err) }()
	ops := toOps(claimed)
	lanes := d.lanes(claimed, ops, notes)
	d.prepare(lanes, ops)
	refresh := d.rideRefresh(lanes)
	d.sendLanes(ctx, lanes)
	d.readLast = lanesRead(lanes)
	d.rodeRefresh(lanes, refresh)
	out = make([]Settlement, len(claimed))
	wrote := false
	for _, l := range lanes {
		d.settleLane(l, claimed, out)
		wrote = wrote || l.err == nil
	}
	if wrote {
		failpoint.Inject(failpoint.DispatchAfterRemoteApply)
	}
	return out, lanesErr(lanes)
}

// prepare builds each lane's batch: its ops (of the pass's ops, built
// once), its notes, the fence (every lane's batch is fenced), the write
// guard, and the chain head (the first lane's only).
func (d *Dispatcher) prepare(lanes []*lane, ops []sheetsio.Op) {
	fence := d.cfg.Outbox.Fence()
	for _, l := range lanes {
		mine := make([]sheetsio.Op, len(l.idx))
		for i, j := range l.idx {
			mine[i] = ops[j]
		}
		d.C.Dispatches.Add(1)
		f := fence
		l.batch = l.notes.batch(&f, mine)
		l.batch.BeforeWrite = d.cfg.WriteGuard
		if l.head {
			l.batch.Head = d.chainHead()
		}
	}
}

// settleLane writes the settlements of a sent lane's effects into out.
func (d *Dispatcher) settleLane(l *lane, claimed []aggregates.Effect, out []Settlement) {
	if l.err != nil {
		sub := make([]aggregates.Effect, len(l.idx))
		for i, j := range l.idx {
			sub[i] = claimed[j]
		}
		for i, s := range d.failedSettlements(sub, l.err) {
			out[l.idx[i]] = s
		}
		return
	}
	d.headShown(l.batch, l.res)
	d.noted(l.notes, l.res)
	for i, j := range l.idx {
		c := claimed[j]
		out[j] = Settlement{ID: c.ID, ClaimToken: c.ClaimToken, Outcome: d.outcome(c, l.res.Ops[i])}
	}
}

// finish commits out. After a dispatch that wrote nothing (derr), a
// divergence stops the worker (ErrDivergence); anything else is returned.
func (d *Dispatcher) finish(out []Settlement, derr error) error {
	if err := fenced(d.cfg.Outbox.Settle(out)); err != nil {
		d.kept.keep(out, err)
		return errors.Join(derr, err)
	}
	if errors.Is(derr, sheetsio.ErrAuthorityStale) || errors.Is(derr, sheetsio.ErrAuthorityForeign) {
		return d.diverged(derr.Error())
	}
	return derr
}

// toOps is the ops of claimed, in their order: built once a pass, for
// the capacity gate and the lanes alike.
func toOps(claimed []aggregates.Effect) []sheetsio.Op {
	ops := make([]sheetsio.Op, len(claimed))
	for i, c := range claimed {
		ops[i] = toOp(c)
	}
	return ops
}

func toOp(c aggregates.Effect) sheetsio.Op {
	op := sheetsio.Op{ID: c.ID, Tab: c.Target.Tab, Anchor: c.Target.Anchor, Values: c.Values, ExpectedHash: c.ExpectedHash,
		Receipt: &sheetsio.Receipt{EffectID: c.ID, PayloadHash: c.PayloadHash}}
	switch c.Op {
	case events.OpAppend:
		// Only the first claim of the row's first effect cannot have
		// landed before: it may skip the preflight read. Every later
		// claim (a retry, after a probe, a recovered claim) and every
		// later append of the row (a backfill or repair queued while an
		// earlier write's outcome was unknown) reads, so a landed row is
		// recognised, never appended twice.
		op.Kind, op.FirstSend = sheetsio.OpAppend, c.Attempts <= 1 && c.StreamSeq <= 1
	case events.OpUpdate:
		op.Kind = sheetsio.OpUpdate
	default:
		op.Kind = sheetsio.OpDelete
	}
	return op
}

// failedSettlements puts the effects of a dispatch that wrote nothing back
// on the retry path.
func (d *Dispatcher) failedSettlements(claimed []aggregates.Effect, err error) []Settlement {
	var code string
	var se *sheetsio.Error
	if errors.As(err, &se) {
		code = se.Code
	}
	out := make([]Settlement, len(claimed))
	for i, c := range claimed {
		out[i] = Settlement{ID: c.ID, ClaimToken: c.ClaimToken, Outcome: d.retry(code, c)}
	}
	d.C.Retried.Add(int64(len(claimed)))
	return out
}

func (d *Dispatcher) retry(code string, c aggregates.Effect) aggregates.Outcome {
	if code == "" {
		code = "dispatch_failed"
	}
	return aggregates.Outcome{Kind: aggregates.OutcomeRetry, Code: code, RetryAt: d.backoff(c), Via: "dispatch"}
}

// backoff is capped exponential with full jitter over the effect's attempts.
func (d *Dispatcher) backoff(c aggregates.Effect) time.Time {
	wait := min(d.cfg.RetryBase<<min(max(c.Attempts-1, 0), 16), d.cfg.RetryMax)
	return d.cfg.Clock.Now().Add(wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1)))
}

// outcome maps one op's fate to a settlement (I24: only a structured refusal proves a failure).
func (d *Dispatcher) outcome(c aggregates.Effect, r sheetsio.OpResult) aggregates.Outcome {
	o := aggregates.Outcome{Via: "dispatch", Code: r.Reason}
	switch r.Status {
	case sheetsio.StatusApplied, sheetsio.StatusUnchanged:
		d.C.Applied.Add(1)
		if r.Status == sheetsio.StatusApplied { // a row the sheet already showed changed nothing
			d.ae.wrote(c.Target.Tab)
		}
		o.Kind, o.WrittenHash, o.Unwritable = aggregates.OutcomeApplied, r.WrittenHash, unwritable(r.Marked)
	case sheetsio.StatusUncertain:
		d.C.Uncertain.Add(1)
		o.Kind, o.Code, o.RetryAt = aggregates.OutcomeUncertain, writeCode(r.Err), d.cfg.Clock.Now().Add(d.cfg.ProbeDelay)
	case sheetsio.StatusNotSent, sheetsio.StatusBlocked:
		d.C.Retried.Add(1)
		o = d.retry(r.Reason, c)
	case sheetsio.StatusGuardFailed:
		o = d.guardFailed(c, r)
	case sheetsio.StatusMisdirected:
		d.C.Misdirected.Add(1)
		o.Kind, o.Misdirected = aggregates.OutcomeMisdirected, misdirected(r.Misdirected)
	default: // invalid, failed (explicit structured rejection): terminal (I24)
		d.C.Failed.Add(1)
		o.Kind, o.Terminal = aggregates.OutcomeFailed, true
		if o.Code == "" {
			o.Code = writeCode(r.Err)
		}
	}
	return o
}

// guardFailed: a System row that no longer shows what we wrote drifted —
// terminal, so reconciliation corrects it; an Input row a person edited is
// a conflict for the poller to examine.
func (d *Dispatcher) guardFailed(c aggregates.Effect, r sheetsio.OpResult) aggregates.Outcome {
	if spec, ok := d.cfg.Workbook.Schema().Tab(c.Target.Tab); ok && spec.Role == layout.RoleInput {
		d.C.Conflicts.Add(1)
		return aggregates.Outcome{Kind: aggregates.OutcomeConflict, Code: r.Reason, Via: "dispatch", WrittenHash: r.ObservedHash}
	}
	d.C.Failed.Add(1)
	return aggregates.Outcome{Kind: aggregates.OutcomeFailed, Code: r.Reason, Terminal: true, Via: "dispatch", WrittenHash: r.ObservedHash}
}

// unwritable is the record of the cells a write left as markers.
func unwritable(marked []sheetsio.MarkedCell) []events.UnwritableField {
	var out []events.UnwritableField
	for _, m := range marked {
		out = append(out, events.UnwritableField{Field: m.Column, Reason: string(m.Reason), Chars: m.Chars})
	}
	return out
}

// misdirected is the store's view of where a misdirected write landed (C06).
func misdirected(m *sheetsio.Misdirection) *aggregates.Misdirected {
	if m == nil {
		return nil
	}
	return &aggregates.Misdirected{SheetRow: m.SheetRow, DisplacedAnchor: m.DisplacedAnchor,
		Columns: append([]string(nil), m.Columns...), RowHash: m.RowHash}
}

func writeCode(err error) string {
	var we *sheetsio.WriteError
	if errors.As(err, &we) && we.Code != "" {
		return we.Code
	}
	return "write_uncertain"
}
