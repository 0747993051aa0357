package effects

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Inbound is the store side of the poller. Every method is a decision of
// the store's single writer.
type Inbound interface {
	// Expectations returns the expectation of each tab and the read model
	// checkpoint they were read at (the observation's base: rows changed by
	// an effect applied after base are deferred, so a read that raced a
	// dispatch is never mistaken for a human edit).
	Expectations(tabs []string) (map[string]aggregates.TabExpectation, uint64, error)
	// Observe decides on grid reads (formulas, merges and error values
	// visible) of tabs that could not be certified unchanged, by logical
	// tab name (see TabObservation for partial grid reads). full marks a
	// safety full scan.
	Observe(base uint64, tabs map[string]TabObservation, full bool) (aggregates.ObserveStats, error)
	// Cleanup queues full-row CAS delete effects for surplus rows of the
	// Input tabs read in grids (I21); it returns how many it queued.
	Cleanup(base uint64, grids map[string]*sheetsio.GridSnapshot) (int, error)
	// WatchesChoices reports whether a poll reads Sync_Conflicts (while
	// a conflict is open).
	WatchesChoices() (bool, error)
	// Choose decides on the Sync_Conflicts rows read at checkpoint base,
	// by anchor (a row the store wrote after base is left for the next
	// poll): the resolutions people chose, and the rows of open conflicts
	// people deleted or copied. It returns how many ended each way.
	Choose(base uint64, rows map[string][]aggregates.SheetChoice) (map[aggregates.ChoiceOutcome]int, error)
}

// PollerConfig configures a Poller for one spreadsheet.
type PollerConfig struct {
	Provider sheetsio.Client
	Workbook *sheetsio.Workbook
	Inbound  Inbound
	Tabs     []string     // the registered Input tabs (logical names)
	Clock    events.Clock // default wall clock
	Logger   *slog.Logger
	// Interval is the adaptive poll cadence (default 60 s).
	Interval time.Duration
	// FullScanInterval is the safety full scan's cadence (default 60 s).
	FullScanInterval time.Duration
	// CleanupInterval is the surplus-row cleanup cadence: the
	// reconciliation schedule (default 30 s), independent of the other
	// passes and of the dispatcher (I21).
	CleanupInterval time.Duration
	// Wake delivers poll hints (e.g. NATS wake.poll); nil = timer only.
	Wake <-chan struct{}
	// Tracer traces each poll (SpanPoll); nil: no tracing.
	Tracer trace.Tracer
	// Layouts, when set, tells the tabs waiting for their layout
	// migration: a pass leaves them out (the migration polls them under
	// their old layout first).
	Layouts Migrator
	// Named, when set, gives the sheetIds the wake-ups since its last
	// call named (the wake hook's script names the tab a person edited);
	// nil or empty: every tab. A woken pass then reads only the named
	// Input tabs (PollNamed).
	Named func() []int64
	// NamedWholeRows is the most rows a named tab may be expected to hold
	// for a woken poll to read it whole with grid data in one request
	// (default 2,000); a larger tab takes Poll's adaptive reads instead,
	// limited to the named tabs: a values read, then a grid read sized to
	// the rows it could not certify.
	NamedWholeRows int
}

// PollCounters are the poller's running totals.
type PollCounters struct {
	Passes, Certified, Escalated, FullScans, Cleanups, Deletes atomic.Int64
	// Choices counts resolutions chosen in the sheet that were decided
	// (applied or rejected).
	Choices atomic.Int64
}

// Poller reads the registered Input tabs and hands what changed to the
// store (docs/invariants.md "People's edits").
type Poller struct {
	cfg   PollerConfig
	mu    sync.Mutex // one pass at a time: observations are decided in read order
	C     PollCounters
	quiet quietPoll // the last poll, when it certified every tab (under mu)
}

// quietPoll is a poll that certified every tab it read: the tabs, the
// read model's checkpoint it was certified at and its read's digest. A
// poll of the same tabs at the same checkpoint whose read digests the
// same is certified again (the expectation is the read model's at the
// checkpoint, the read is the same bytes): it computes no expectation
// and decodes nothing.
type quietPoll struct {
	tabs []string
	base uint64
	body sheetsio.BodyDigest
}

// certifiedAgain reports whether a poll of tabs is the quiet poll again;
// it costs one values read, digested only.
func (p *Poller) certifiedAgain(ctx context.Context, tabs []string) (bool, error) {
	q := p.quiet
	if q.body.IsZero() || !slices.Equal(q.tabs, tabs) {
		return false, nil
	}
	_, base, err := p.cfg.Inbound.Expectations(nil)
	if err != nil || base != q.base {
		return false, fenced(err)
	}
	return p.cfg.Provider.SnapshotUnchanged(ctx, p.cfg.Workbook, q.body, tabs...)
}

// quietResult is a poll's result when it ended at certifiedAgain: every
// tab certified (same), or none (a failed read).
func (p *Poller) quietResult(tabs []string, same bool) PollResult {
	if !same {
		return PollResult{Tabs: len(tabs)}
	}
	p.C.Certified.Add(int64(len(tabs)))
	return PollResult{Tabs: len(tabs), Certified: len(tabs)}
}

// noteQuiet remembers a poll at base that certified every tab of its
// read (snaps); Poll forgot the last one before it.
func (p *Poller) noteQuiet(tabs []string, base uint64, res PollResult, snaps map[string]*sheetsio.TabSnapshot) {
	if res.Certified != len(tabs) || res.Escalated != 0 || len(snaps) != len(tabs) {
		return
	}
	var body sheetsio.BodyDigest
	for _, t := range tabs {
		s := snaps[t]
		if s == nil || s.Body.IsZero() || (!body.IsZero() && s.Body != body) {
			return
		}
		body = s.Body
	}
	p.quiet = quietPoll{tabs: slices.Clone(tabs), base: base, body: body}
}

// NewPoller validates cfg. Errors: ErrConfig.
func NewPoller(cfg PollerConfig) (*Poller, error) {
	if cfg.Provider == nil || cfg.Workbook == nil || cfg.Inbound == nil {
		return nil, fmt.Errorf("%w: poller needs a provider, a workbook and the store", ErrConfig)
	}
	if cfg.Clock == nil {
		cfg.Clock = events.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Interval = cmpD(cfg.Interval, time.Minute)
	cfg.FullScanInterval = cmpD(cfg.FullScanInterval, time.Minute)
	cfg.CleanupInterval = cmpD(cfg.CleanupInterval, 30*time.Second)
	return &Poller{cfg: cfg}, nil
}

// PollResult describes one pass.
type PollResult struct {
	Tabs      int  // Input tabs read
	Certified int  // tabs certified unchanged from values alone
	Escalated int  // tabs escalated to the metadata (grid) read
	Full      bool // a safety full scan
	Stats     aggregates.ObserveStats
	// Choices counts the resolutions chosen in Sync_Conflicts, by outcome.
	Choices map[aggregates.ChoiceOutcome]int
}

// Poll runs one adaptive pass: ONE values read of every Input tab
// (sheetsio.SnapshotChecked: a single request once the sheetIds are
// known), a hash comparison of each row with the store's expectation as
// the read streams (Certifier: an unchanged tab is never decoded), and one grid
// read of only the tabs it cannot certify unchanged, limited to their
// header and the rows the values read could not certify (gridPlan,
// sheetsio.ReadGridRows: one request by sheetId). An unchanged spreadsheet
// costs one read request and no write; an escalated pass two, whatever the
// tab size (three when every escalated tab is read whole, one more when a
// cached sheetId or a row number went stale and the read falls back).
// While a conflict is open the same values read includes Sync_Conflicts,
// whose rows are decided after the Input tabs (Inbound.Choose), after one
// more grid read of the rows with a choice still pending (checkChoices).
func (p *Poller) Poll(ctx context.Context) (res PollResult, err error) {
	ctx, span := startSpan(ctx, p.cfg.Tracer, SpanPoll)
	defer func() { endPoll(span, res, err) }()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.C.Passes.Add(1)
	tabs := p.tabs()
	if len(tabs) == 0 {
		return PollResult{}, nil
	}
	watch, err := p.cfg.Inbound.WatchesChoices()
	if err != nil {
		return PollResult{Tabs: len(tabs)}, fenced(err)
	}
	if !watch {
		if same, err := p.certifiedAgain(ctx, tabs); err != nil || same {
			return p.quietResult(tabs, same), err
		}
	}
	exp, base, err := p.cfg.Inbound.Expectations(tabs)
	if err != nil {
		return PollResult{Tabs: len(tabs)}, fenced(err)
	}
	res, snaps, err := p.adaptive(ctx, tabs, exp, base, watch)
	if p.quiet = (quietPoll{}); err == nil && !watch {
		p.noteQuiet(tabs, base, res, snaps)
	}
	if err != nil || !watch {
		return res, err
	}
	rows, ok := conflictRows(snaps[layout.ConflictsTab], p.cfg.Workbook.Schema())
	if !ok {
		return res, nil
	}
	if err := p.checkChoices(ctx, rows); err != nil {
		return res, err
	}
	res.Choices, err = p.cfg.Inbound.Choose(base, rows)
	p.C.Choices.Add(int64(res.Choices[aggregates.ChoiceApplied] + res.Choices[aggregates.ChoiceRejected]))
	return res, fenced(err)
}

// adaptive is a poll's reads of tabs against their expectation exp at
// base: ONE values read (with Sync_Conflicts when watch), then the
// escalation of what it could not certify (observe).
func (p *Poller) adaptive(ctx context.Context, tabs []string, exp map[string]aggregates.TabExpectation, base uint64,
	watch bool) (PollResult, map[string]*sheetsio.TabSnapshot, error) {
	res := PollResult{Tabs: len(tabs)}
	snaps, err := p.cfg.Provider.SnapshotChecked(ctx, p.cfg.Workbook, certifiers(tabs, exp), readTabs(tabs, watch)...)
	if err != nil {
		return res, nil, err
	}
	res, err = p.observe(ctx, res, tabs, base, snaps, exp)
	return res, snaps, err
}

// tabs are the Input tabs a pass reads: those not waiting for their
// layout migration.
func (p *Poller) tabs() []string { return unmigrating(p.cfg.Layouts, p.cfg.Tabs) }

// certifiers certify each Input tab against its expectation as the values
// read streams (a tab they certify is Digested: no row decoded).
func certifiers(tabs []string, exp map[string]aggregates.TabExpectation) map[string]sheetsio.RowCheck {
	out := make(map[string]sheetsio.RowCheck, len(tabs))
	for _, t := range tabs {
		out[t] = NewCertifier(exp[t])
	}
	return out
}

// readTabs are the tabs a poll reads: the Input tabs, and Sync_Conflicts
// when watch.
func readTabs(tabs []string, watch bool) []string {
	if !watch {
		return tabs
	}
	return append(slices.Clip(tabs), layout.ConflictsTab)
}

// observe certifies the Input tabs read and escalates the others.
func (p *Poller) observe(ctx context.Context, res PollResult, tabs []string, base uint64, snaps map[string]*sheetsio.TabSnapshot,
	exp map[string]aggregates.TabExpectation) (PollResult, error) {
	var escalate []string
	for _, t := range tabs {
		if s := snaps[t]; (s != nil && s.Digested) || Certify(s, exp[t]) {
			res.Certified++
			continue
		}
		escalate = append(escalate, t)
	}
	p.C.Certified.Add(int64(res.Certified))
	if len(escalate) == 0 {
		return res, nil
	}
	res.Escalated = len(escalate)
	p.C.Escalated.Add(int64(len(escalate)))
	return p.escalate(ctx, res, base, escalate, snaps, exp)
}

// escalate reads the uncertified tabs with grid data as gridPlan says and
// hands them, with the values read and the expectation they were checked
// against, to the store.
func (p *Poller) escalate(ctx context.Context, res PollResult, base uint64, tabs []string,
	snaps map[string]*sheetsio.TabSnapshot, exp map[string]aggregates.TabExpectation) (PollResult, error) {
	reqs := make(map[string]sheetsio.GridRequest, len(tabs))
	for _, t := range tabs {
		reqs[t] = gridPlan(snaps[t], exp[t])
	}
	grids, err := p.cfg.Provider.ReadGridRows(ctx, p.cfg.Workbook, reqs)
	if err != nil {
		return res, err
	}
	obs := make(map[string]TabObservation, len(tabs))
	for _, t := range tabs {
		x := exp[t]
		obs[t] = TabObservation{Grid: grids[t], Values: snaps[t], Expect: &x}
	}
	res.Stats, err = p.cfg.Inbound.Observe(base, obs, false)
	return res, fenced(err)
}

// FullScan reads every Input tab with grid data and observes it, whatever
// the values say: it catches what a values read cannot (a formula whose
// result equals the expected value, a merge) and structural drift.
func (p *Poller) FullScan(ctx context.Context) (PollResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.C.FullScans.Add(1)
	tabs := p.tabs()
	res := PollResult{Tabs: len(tabs), Full: true, Escalated: len(tabs)}
	if len(tabs) == 0 {
		return res, nil
	}
	err := p.gridPass(ctx, tabs, true, false, func(base uint64, grids map[string]*sheetsio.GridSnapshot) (err error) {
		res.Stats, err = p.cfg.Inbound.Observe(base, observations(grids), true)
		return err
	})
	return res, err
}

// ScanAndCleanup runs a safety full scan and the surplus-row cleanup on
// ONE grid read of the Input tabs (Run, when both are due at once): the
// full scan observes the read, then the cleanup decides on the same read
// at the same base (its deletes are full-row CAS effects, so a row
// changed since the read is never deleted). It returns the full scan's
// result and the deletes queued.
func (p *Poller) ScanAndCleanup(ctx context.Context) (PollResult, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.C.FullScans.Add(1)
	p.C.Cleanups.Add(1)
	tabs := p.tabs()
	res := PollResult{Tabs: len(tabs), Full: true, Escalated: len(tabs)}
	if len(tabs) == 0 {
		return res, 0, nil
	}
	n := 0
	err := p.gridPass(ctx, tabs, true, true, func(base uint64, grids map[string]*sheetsio.GridSnapshot) (err error) {
		if res.Stats, err = p.cfg.Inbound.Observe(base, observations(grids), true); err != nil {
			return err
		}
		n, err = p.cfg.Inbound.Cleanup(base, grids)
		p.C.Deletes.Add(int64(n))
		return err
	})
	return res, n, err
}

// Cleanup runs the surplus-row cleanup of the reconciliation schedule
// (I21): one grid read of every Input tab, then the store queues full-row
// CAS deletes for what is unambiguously surplus. It returns how many
// deletes were queued (the dispatcher delivers them).
func (p *Poller) Cleanup(ctx context.Context) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.C.Cleanups.Add(1)
	tabs := p.tabs()
	if len(tabs) == 0 {
		return 0, nil
	}
	n := 0
	err := p.gridPass(ctx, tabs, false, true, func(base uint64, grids map[string]*sheetsio.GridSnapshot) (err error) {
		n, err = p.cfg.Inbound.Cleanup(base, grids)
		p.C.Deletes.Add(int64(n))
		return err
	})
	return n, err
}

// KnownGrids is what an Inbound may also answer: the digest of the whole
// grid read of tabs that its last full scan (full) and cleanup (cleanup)
// made and found nothing to change in, still valid at base (zero when
// none). A read that digests to it is not decoded (ReadGridKnown); the
// store then skips those passes, or answers ErrReadUndecoded when its
// read model moved meanwhile.
type KnownGrids interface {
	KnownGrid(base uint64, tabs []string, full, cleanup bool) (sheetsio.BodyDigest, error)
}

// gridPass runs a pass's decisions (decide) on one grid read of tabs at
// the store's checkpoint. The read is not decoded when the store knows
// it (KnownGrids); if the store's read model moved before it decided
// (ErrReadUndecoded), the pass reads again and decodes.
func (p *Poller) gridPass(ctx context.Context, tabs []string, full, cleanup bool,
	decide func(base uint64, grids map[string]*sheetsio.GridSnapshot) error) error {
	for _, known := range []bool{true, false} {
		_, base, err := p.cfg.Inbound.Expectations(nil)
		if err != nil {
			return fenced(err)
		}
		grids, err := p.readGrids(ctx, base, tabs, full, cleanup, known)
		if err != nil {
			return err
		}
		if err = decide(base, grids); !errors.Is(err, ErrReadUndecoded) {
			return fenced(err)
		}
	}
	return fmt.Errorf("effects: %w after a decoded read", ErrReadUndecoded)
}

// readGrids reads tabs with grid data, telling the provider the digest
// of the read the store knows when known (KnownGrids).
func (p *Poller) readGrids(ctx context.Context, base uint64, tabs []string, full, cleanup, known bool) (map[string]*sheetsio.GridSnapshot, error) {
	var body sheetsio.BodyDigest
	if kg, ok := p.cfg.Inbound.(KnownGrids); ok && known {
		var err error
		if body, err = kg.KnownGrid(base, tabs, full, cleanup); err != nil {
			return nil, fenced(err)
		}
	}
	return p.cfg.Provider.ReadGridKnown(ctx, p.cfg.Workbook, body, tabs...)
}

// observations are a full scan's observations of its grid reads.
func observations(grids map[string]*sheetsio.GridSnapshot) map[string]TabObservation {
	obs := make(map[string]TabObservation, len(grids))
	for t, g := range grids {
		obs[t] = TabObservation{Grid: g}
	}
	return obs
}

// Certify reports whether a values read of one tab proves it shows exactly
// what the store expects: every non-blank row is either the expected row
// of its anchor (same full-row hash, anchor seen once), a row whose anchor
// has an effect in flight (the store is writing it: decided once the
// effect settles) or already recorded evidence, and every expected anchor
// is present or (exclusively) its deletion recorded: a restored row's
// deletion evidence is to clear.
// Row order is irrelevant (a sort is not a change, C06). A blocked tab
// (header drift) is never certified.
func Certify(snap *sheetsio.TabSnapshot, x aggregates.TabExpectation) bool {
	if snap == nil || snap.Err != nil {
		return false
	}
	// Every row with an anchor is non-blank, so an anchor was "seen" before
	// row i exactly when its first row is not i: the snapshot's anchor
	// index answers that without a map of its own.
	data := 0
	for i := range snap.Rows {
		r := &snap.Rows[i]
		if blankRow(r.Cells) {
			continue
		}
		data++
		if x.Evidence[r.Hash] {
			continue
		}
		if r.Anchor == "" || x.Lost[r.Anchor] || x.Rows[r.Anchor] != r.Hash && !x.InFlight[r.Anchor] {
			return false
		}
		if first, _ := snap.Shown(r.Anchor); first != i {
			return false // a second copy of the anchor
		}
	}
	if data == 0 && len(x.Rows) > 0 {
		return x.Flagged
	}
	if x.Flagged {
		return false // rows are back: the mass-deletion evidence is to clear
	}
	if !showsAll(snap, x.Quarantined) {
		return false // a quarantined row changed (fixed, dismissed): its evidence is to clear
	}
	for a := range x.Rows {
		if _, n := snap.Shown(a); (n > 0) == x.Missing[a] {
			return false // absent without recorded evidence, or restored with it
		}
	}
	return true
}

// showsAll reports whether every hash in hashes is the hash of a
// non-blank row of snap.
func showsAll(snap *sheetsio.TabSnapshot, hashes map[string]bool) bool {
	if len(hashes) == 0 {
		return true
	}
	shown := make(map[string]bool, len(hashes))
	for i := range snap.Rows {
		if r := &snap.Rows[i]; hashes[r.Hash] && !blankRow(r.Cells) {
			shown[r.Hash] = true
		}
	}
	return len(shown) == len(hashes)
}

func blankRow(cells []any) bool {
	for _, c := range cells {
		if s, ok := c.(string); c != nil && (!ok || s != "") {
			return false
		}
	}
	return true
}

// Run runs adaptive polls on the interval (and on wake-ups), safety full
// scans and the surplus-row cleanup on their own cadences (both on one
// grid read when they fall due together: ScanAndCleanup), from ONE
// goroutine waiting on the earliest due time (one clock timer), until ctx
// ends (nil) or the writer is displaced (ErrDisplaced). Each cadence runs
// on its slots from Run's start (NextSlot), whatever a pass took, early
// by its phase within the reconciliation period (PhasesOf(CleanupInterval)):
// the cleanup and the full scan half a period apart from the
// dispatcher's reconciliation, the timer's poll a quarter, so their reads
// do not come in one burst. A failed pass is logged and retried at its
// next slot. A wake-up polls at once, its reads urgent (passCtx), and
// leaves the timer's poll due at its slot; one that named tabs
// (PollerConfig.Named) polls only those (PollNamed).
func (p *Poller) Run(ctx context.Context) error {
	ph := PhasesOf(p.cfg.CleanupInterval)
	every := [3]time.Duration{p.cfg.Interval, p.cfg.FullScanInterval, p.cfg.CleanupInterval}
	phase := [3]time.Duration{ph.Poll, ph.Cleanup, ph.Cleanup}
	var next [3]time.Time
	start := p.cfg.Clock.Now()
	for i := range next {
		next[i] = NextSlot(start, start, every[i], phase[i])
	}
	passes := [3]func(context.Context) error{
		func(ctx context.Context) error { _, err := p.Poll(ctx); return err },
		func(ctx context.Context) error { _, err := p.FullScan(ctx); return err },
		func(ctx context.Context) error { _, err := p.Cleanup(ctx); return err },
	}
	var failed [3]int // passes of each kind failed in a row
	names := [3]string{"poll", "full scan", "cleanup"}
	for {
		due := earliest(next[:])
		woken := false
		select {
		case <-ctx.Done():
			return nil
		case <-p.cfg.Wake:
			woken = true
		case <-p.cfg.Clock.After(due.Sub(p.cfg.Clock.Now())):
		}
		now := p.cfg.Clock.Now()
		shared := !now.Before(next[1]) && !now.Before(next[2]) // one grid read for both
		// the tabs a wake-up named, polled alone unless the timer's poll is due
		var named []string
		if woken {
			named = p.namedTabs()
		}
		for i, pass := range passes {
			isDue := !now.Before(next[i])
			if !isDue && !(woken && i == 0) {
				continue
			}
			alone := i == 0 && !isDue && named != nil
			if isDue {
				next[i] = NextSlot(now, start, every[i], phase[i])
			}
			switch {
			case shared && i == 1:
				pass = func(ctx context.Context) error { _, _, err := p.ScanAndCleanup(ctx); return err }
			case shared && i == 2:
				continue // done with the full scan; a failure was counted there
			case alone:
				pass = func(ctx context.Context) error { _, err := p.PollNamed(ctx, named); return err }
			}
			if err := pass(passCtx(ctx, i, woken)); err != nil && ctx.Err() == nil {
				if errors.Is(err, ErrDisplaced) {
					return err
				}
				p.cfg.Logger.Warn("inbound pass failed", "err", err.Error())
				failed[i]++
			} else if err == nil && failed[i] > 0 {
				p.cfg.Logger.Info("inbound poller recovered: a pass succeeded", "pass", names[i], "failed_passes", failed[i])
				failed[i] = 0
			}
		}
	}
}

// namedTabs are the Input tabs the wake-ups since the last call named
// (PollerConfig.Named, NamedTabs): nil for every tab.
func (p *Poller) namedTabs() []string {
	if p.cfg.Named == nil {
		return nil
	}
	return NamedTabs(p.tabs(), p.cfg.Workbook.SheetIDs(), p.cfg.Named())
}

// NamedTabs are the Input tabs a woken poll reads when its wake-ups
// named the sheets named: those of tabs (logical names, bound to their
// sheetIds by ids) whose sheetId was named, sorted; nil, every tab, when
// nothing was named or a named sheet is none of them (Sync_Conflicts, a
// tab waiting for its layout migration, a sheet the store does not know).
func NamedTabs(tabs []string, ids map[string]int64, named []int64) []string {
	if len(named) == 0 {
		return nil
	}
	byID := make(map[int64]string, len(tabs))
	for _, t := range tabs {
		if id, ok := ids[t]; ok {
			byID[id] = t
		}
	}
	out := make([]string, 0, len(named))
	for _, id := range named {
		t, ok := byID[id]
		if !ok {
			return nil
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// PollNamed polls only tabs, Input tabs a wake named: ONE grid read of
// them whole by sheetId (sheetsio.GridRequest.ByID), decided as an
// escalated poll's tabs are, against their expectation at the read's
// base. The wake says which tab changed, so the values read that
// certifies the others is skipped: it costs one read request where Poll
// costs two once it finds an edit. A tab expected to hold more than
// PollerConfig.NamedWholeRows rows is not read whole: it takes Poll's
// adaptive reads, limited to the named tabs (wholeFits). Sync_Conflicts
// and the other tabs wait for the next Poll (the timer's, or a wake that
// names no tab).
func (p *Poller) PollNamed(ctx context.Context, tabs []string) (res PollResult, err error) {
	ctx, span := startSpan(ctx, p.cfg.Tracer, SpanPoll)
	defer func() { endPoll(span, res, err) }()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.C.Passes.Add(1)
	res = PollResult{Tabs: len(tabs), Escalated: len(tabs)}
	exp, base, err := p.cfg.Inbound.Expectations(tabs)
	if err != nil {
		return res, fenced(err)
	}
	if !wholeFits(exp, tabs, p.cfg.NamedWholeRows) {
		res, _, err = p.adaptive(ctx, tabs, exp, base, false)
		return res, err
	}
	reqs := make(map[string]sheetsio.GridRequest, len(tabs))
	for _, t := range tabs {
		reqs[t] = sheetsio.GridRequest{Whole: true, ByID: true}
	}
	grids, err := p.cfg.Provider.ReadGridRows(ctx, p.cfg.Workbook, reqs)
	if err != nil {
		return res, err
	}
	p.C.Escalated.Add(int64(len(tabs)))
	obs := make(map[string]TabObservation, len(tabs))
	for _, t := range tabs {
		if x := exp[t]; grids[t] != nil {
			obs[t] = TabObservation{Grid: grids[t], Expect: &x}
		}
	}
	res.Stats, err = p.cfg.Inbound.Observe(base, obs, false)
	return res, fenced(err)
}

// wholeFits reports whether every tab of tabs is expected to hold at most
// limit rows (0: defaultNamedWholeRows), so a woken poll may read them
// whole with grid data: a grid read of a large tab costs seconds and
// memory in proportion to the tab, not to the edit.
func wholeFits(exp map[string]aggregates.TabExpectation, tabs []string, limit int) bool {
	if limit <= 0 {
		limit = defaultNamedWholeRows
	}
	for _, t := range tabs {
		if len(exp[t].Rows) > limit {
			return false
		}
	}
	return true
}

// defaultNamedWholeRows is PollerConfig.NamedWholeRows's default.
const defaultNamedWholeRows = 2000

// passCtx is the context of pass i of Run (0 the poll, 1 the full scan,
// 2 the cleanup): a poll a wake started reads urgently
// (sheetsio.PriorityUrgent), ahead of the dispatcher's reads, since a
// person's edit waits on it. The full scan and the cleanup read as the
// dispatcher does, not spaced out as background reads are: the woken
// polls wait for them in this one goroutine.
func passCtx(ctx context.Context, i int, woken bool) context.Context {
	if i == 0 && woken {
		return sheetsio.WithReadPriority(ctx, sheetsio.PriorityUrgent)
	}
	return ctx
}

func earliest(ts []time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.Before(m) {
			m = t
		}
	}
	return m
}
