package engine

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// An observation of a large Input tab is work in proportion to the tab:
// a safety full scan decodes every row, reads its state and decides it.
// Taken in one turn of the single writer it held the writer for seconds
// while every commit, claim and settlement waited (bench/README: 13.95 s
// for the 40,000 rows of row 5c at load 9). So a tab is observed a window
// of rows at a time (observeWindow), each window in a writer turn of its
// own that reads the state of its rows, decides them and commits what it
// decided; the rows of every window but the first are decoded between the
// turns, off the writer (a tab of one window, the usual escalation of a
// poll, is decided in one turn as before). What keeps the observation
// what it was in one turn:
//   - each window's rows are decided against their state as its own turn
//     reads it, and against the tab's inbound stream version and active
//     evidence as that turn reads them (aggregates.TabDecider.Turn). A row
//     a commit or a settlement touched after the read's base is in
//     transition and deferred, as when a read races a dispatch; decisions
//     compare revisions and hashes, never times;
//   - what concerns the whole read (expected rows no window showed,
//     evidence no window found) is decided in the last turn, from every
//     window's rows;
//   - the unchanged mark (unchanged.go) is remembered only when no turn
//     decided anything and the read model did not move from the first
//     turn to the last: every turn then read the state the mark names;
//   - a crash between two turns loses nothing: every turn's decisions are
//     committed before the next one begins, and the next poll observes
//     the rest again (failpoint inbound.after_window).

// tabPass is one observation of one tab, decided a window a turn.
type tabPass struct {
	key    passKey
	base   uint64
	obs    effects.TabObservation
	full   bool
	view   tabView
	window int           // rows a turn decides
	mark   unchangedMark // the read's mark, at the first turn's checkpoint
	src    *shownSource
	dec    *aggregates.TabDecider
	read   aggregates.TabRead
	expect aggregates.TabExpectation
	shape  events.EntityShape
	quiet  bool // no turn decided anything yet
	events int  // events and effects the turns committed
	stats  aggregates.ObserveStats
	// between, when set (tests), runs after each window's turn but the
	// last, off the writer.
	between func()
}

// observeTab observes one tab of a pass of kind k: a first turn skips
// it when its read is the remembered one, or reads what deciding it
// needs of the whole tab and begins the decision; then one turn for each
// window of its shown rows, the last one finishing the decision.
func (e *Engine) observeTab(k passKey, base uint64, o effects.TabObservation, full bool) (aggregates.ObserveStats, error) {
	p := &tabPass{key: k, base: base, obs: o, full: full, quiet: true}
	var skip bool
	err := e.onWriter(func() (err error) {
		skip, err = e.beginTab(p)
		return err
	})
	if err != nil || skip {
		return p.stats, err
	}
	n := p.src.len()
	for from := p.window; from < n; from += p.window {
		p.pause()
		rows := p.src.rows(from, min(from+p.window, n)) // decoded off the writer
		last := from+p.window >= n
		if err := e.onWriter(func() error { return e.windowTurn(p, rows, last, e.cfg.Clock.Now()) }); err != nil {
			return p.stats, err
		}
	}
	return p.stats, nil
}

// pause is where a tab pass is between two turns (off the writer, what
// it decided so far committed).
func (p *tabPass) pause() {
	failpoint.Inject(failpoint.InboundAfterWindow)
	if p.between != nil {
		p.between()
	}
}

// beginTab is a tab pass's first turn: skip reports the read is the one
// the last such pass found nothing to change in (gridSame); otherwise it
// reads the tab's expectation and evidence, begins the decision (a
// blocked tab, a tab suddenly empty are decided at once) and decides the
// first window of rows (decoded in this turn: a tab of one window is
// decided in one turn), finishing the decision when there is no other.
func (e *Engine) beginTab(p *tabPass) (skip bool, err error) {
	m, old, same, err := e.gridSame(p.key, p.base, p.obs.Grid)
	if err != nil || same {
		p.stats = old.observed
		return same, err
	}
	now := e.cfg.Clock.Now()
	p.view = e.currentView(p.key.tab)
	r, ts, err := e.readTab(p.view, p.obs, p.base, p.full)
	if err != nil {
		return false, err
	}
	p.mark, p.read, p.expect, p.window, p.between = m, r, ts.Expect, e.observeRows(), e.betweenWindows
	p.shape, _ = e.reg.Shape(p.view.spec.Entity)
	p.src = newShownSource(p.view.spec, p.obs, r.Blocked != "")
	p.dec = aggregates.NewTabDecider(r, ts, e.sheet, now, p.src.copies, p.src.len())
	n := p.src.len()
	return false, e.windowTurn(p, p.src.rows(0, min(p.window, n)), p.window >= n, now)
}

// windowTurn decides one window of a tab pass's rows in one writer turn,
// against their state and the tab's evidence as this turn reads them.
func (e *Engine) windowTurn(p *tabPass, rows []aggregates.ShownRow, last bool, now time.Time) error {
	version, err := e.writer().Log().StreamVersion(events.InboundStream(p.read.Tab))
	if err != nil {
		return err
	}
	active, err := e.proj.ActiveQuarantine(p.read.Tab)
	if err != nil {
		return err
	}
	p.dec.Turn(version, active, now)
	states, err := e.rowStates(p.read.Tab, p.shape, rows, p.src.copies, p.full, p.expect)
	if err != nil {
		return err
	}
	if err := p.dec.Rows(rows, states); err != nil {
		return err
	}
	return e.endTurn(p, last, now)
}

// endTurn commits what a tab pass decided in this turn; the last turn
// first decides what concerns the whole read and, when no turn decided
// anything, remembers the read as one that changes nothing.
func (e *Engine) endTurn(p *tabPass, last bool, now time.Time) error {
	var c aggregates.Changes
	if last {
		c, p.stats = p.dec.Finish()
	} else {
		c = p.dec.Take()
	}
	n := c.Count() + len(c.Queue)
	p.quiet = p.quiet && n == 0
	if err := e.commitWorker(c, now); err != nil {
		return err
	}
	p.events += n
	p.stats.Events = p.events
	if last && p.quiet {
		m := p.mark
		m.observed = p.stats
		e.remember(p.key, m)
	}
	return nil
}

// observeRows is how many rows a turn of an observation decides:
// observeWindow unless a test set another size.
func (e *Engine) observeRows() int {
	if e.observeSize > 0 {
		return e.observeSize
	}
	return observeWindow
}
