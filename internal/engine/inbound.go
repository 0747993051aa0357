package engine

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The engine is the real effects.Inbound: it reads what the inbound
// decisions need (aggregates.DecideTab, DecideCleanup), decodes the sheet's
// cells for them, and appends what they decide as one fenced commit.
var _ effects.Inbound = (*Engine)(nil)

// Expectations implements effects.Inbound.
func (e *Engine) Expectations(tabs []string) (map[string]aggregates.TabExpectation, uint64, error) {
	out := map[string]aggregates.TabExpectation{}
	var base uint64
	err := e.onWriter(func() error {
		base = e.proj.Checkpoint()
		for _, t := range tabs {
			x, err := e.proj.TabExpectation(t)
			if err != nil {
				return err
			}
			out[t] = x
		}
		return nil
	})
	return out, base, err
}

// Observe implements effects.Inbound: every escalated tab is decided and
// the outcome appended in ONE fenced commit.
func (e *Engine) Observe(base uint64, tabs map[string]effects.TabObservation, full bool) (aggregates.ObserveStats, error) {
	st, err := e.observeCurrent(base, tabs, full)
	if err == nil {
		e.act.observed(st)
	}
	return st, err
}

// tabView is how an observation reads a tab's cells: the layout they are
// in, the user fields they show (current names), and how a decoded row's
// values become the current fields' (nil: they already are).
type tabView struct {
	spec      layout.TabSpec
	user      []string
	translate func(*aggregates.GridRow)
}

// currentView reads tab in the current layout.
func (e *Engine) currentView(tab string) tabView {
	spec, _ := e.sheet.Schema.Tab(tab)
	shape, _ := e.reg.Shape(spec.Entity)
	return tabView{spec: spec, user: userFields(shape)}
}

// observeIn is Observe with the tabs read through view.
func (e *Engine) observeIn(view func(string) tabView, base uint64, tabs map[string]effects.TabObservation, full bool) (aggregates.ObserveStats, error) {
	var st aggregates.ObserveStats
	err := e.onWriter(func() error {
		now := e.cfg.Clock.Now()
		var ch aggregates.Changes
		for _, t := range sortedKeys(tabs) {
			c, s, err := e.decideTab(view(t), tabs[t], base, full, now)
			if err != nil {
				return err
			}
			ch.Merge(c)
			st.Add(s)
		}
		st.Events = ch.Count() + len(ch.Queue)
		return e.commitWorker(ch, now)
	})
	return st, err
}

// observeCurrent is Observe in the current layout, each tab decided a
// window of rows a writer turn (observeTab, inboundturns.go), skipping
// each tab whose whole grid read is what the last such pass read and
// found nothing to change in (unchanged.go).
func (e *Engine) observeCurrent(base uint64, tabs map[string]effects.TabObservation, full bool) (aggregates.ObserveStats, error) {
	kind := map[bool]passKind{false: passObserve, true: passObserveFull}[full]
	var st aggregates.ObserveStats
	for _, t := range sortedKeys(tabs) {
		s, err := e.observeTab(passKey{kind: kind, tab: t}, base, tabs[t], full)
		st.Add(s)
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// observeWindow is how many shown rows an observation decodes and reads
// the state of at a time (aggregates.TabDecider): a pass over a large tab
// (a safety full scan of a tab being backfilled) holds one window's
// decoded rows and row states, not the tab's, and decides each window in
// a writer turn of its own (observeTab; observeIn, a tab's poll under an
// older layout before its migration, decides every window in one turn).
const observeWindow = 2048

// decideTab reads one observed tab through v and decides it, a window of
// rows at a time.
func (e *Engine) decideTab(v tabView, o effects.TabObservation, base uint64, full bool, now time.Time) (aggregates.Changes, aggregates.ObserveStats, error) {
	r, ts, err := e.readTab(v, o, base, full)
	if err != nil {
		return aggregates.Changes{}, aggregates.ObserveStats{}, err
	}
	src := newShownSource(v.spec, o, r.Blocked != "")
	d := aggregates.NewTabDecider(r, ts, e.sheet, now, src.copies, src.len())
	shape, _ := e.reg.Shape(v.spec.Entity)
	for from := 0; from < src.len(); from += observeWindow {
		rows := src.rows(from, min(from+observeWindow, src.len()))
		for i := range rows {
			if gr := rows[i].Grid; gr != nil && gr.Values != nil && v.translate != nil {
				v.translate(gr)
			}
		}
		states, err := e.rowStates(r.Tab, shape, rows, src.copies, full, ts.Expect)
		if err != nil {
			return aggregates.Changes{}, aggregates.ObserveStats{}, err
		}
		if err := d.Rows(rows, states); err != nil {
			return aggregates.Changes{}, aggregates.ObserveStats{}, err
		}
	}
	c, st := d.Finish()
	return c, st, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// readTab reads what a TabDecider needs of one observed tab but its rows
// and their states: the expectation and the active evidence.
func (e *Engine) readTab(v tabView, o effects.TabObservation, base uint64, full bool) (aggregates.TabRead, aggregates.TabState, error) {
	g := o.Grid
	spec := v.spec
	shape, _ := e.reg.Shape(spec.Entity)
	r := aggregates.TabRead{Tab: g.Tab, Entity: shape.Name, Key: shape.PK, User: v.user, Full: full, Base: base}
	var ts aggregates.TabState
	var err error
	if ts.InboundVersion, err = e.writer().Log().StreamVersion(events.InboundStream(g.Tab)); err != nil {
		return r, ts, err
	}
	if ts.Active, err = e.proj.ActiveQuarantine(g.Tab); err != nil {
		return r, ts, err
	}
	e.notePolled(g)
	if g.Err != nil {
		r.Blocked = g.Err.Error() // header drift or a missing tab: rows are not read
		if r.Empty = g.Empty; !r.Empty {
			return r, ts, nil
		}
		// Nothing at all, header included: decided against the
		// expectation (a tab that suddenly reads empty, C04).
	}
	if g.Partial && o.Values == nil {
		return r, ts, fmt.Errorf("engine: partial grid read of %s without the values read it completes", g.Tab)
	}
	if ts.Expect, err = e.expectation(g.Tab, o.Expect, base); err != nil {
		return r, ts, err
	}
	return r, ts, nil
}

// notePolled tells health whether a poll found tab g missing (a header
// that drifted is the layout pass's and anti-entropy's to report: a poll
// may read an older layout before its migration; a tab read empty is
// decided against its expectation, C04).
func (e *Engine) notePolled(g *sheetsio.GridSnapshot) {
	reason := failureReason(g.Err)
	if reason != ReasonTabMissing || g.Empty {
		reason = ""
	}
	e.notes.notePolled(e.sheet.TargetOf(g.Tab), g.Tab, reason)
}

// expectation is the tab's expectation: x, the one the pass certified its
// values read against at base, while the read model is still at base (it
// is then the same), else computed afresh. A fresh one may expect rows a
// dispatch applied after the read: they are not Settled at base, so
// DecideTab never takes their absence as deletion evidence.
func (e *Engine) expectation(tab string, x *aggregates.TabExpectation, base uint64) (aggregates.TabExpectation, error) {
	if x != nil && e.proj.Checkpoint() == base {
		return *x, nil
	}
	return e.proj.TabExpectation(tab)
}

func userFields(s events.EntityShape) []string {
	var out []string
	for _, f := range s.Fields {
		if f.Owner == events.OwnerUser {
			out = append(out, f.Name)
		}
	}
	return out
}

// rowStates reads the state of every grid row DecideTab will decide:
// rows with an anchor, except (outside a full scan) single plain rows that
// show exactly the system's last write, unless a later write of the row
// was lost (TabExpectation.Lost). The window's rows are read in bulk
// (rowStatesOf).
func (e *Engine) rowStates(tab string, shape events.EntityShape, rows []aggregates.ShownRow, copies map[string]int, full bool,
	x aggregates.TabExpectation) (map[string]aggregates.RowState, error) {
	var anchors []string
	for _, sr := range rows {
		g := sr.Grid
		if g == nil || g.Anchor == "" || !full && copies[g.Anchor] == 1 && g.Plain && x.Rows[g.Anchor] == g.Hash && !x.Lost[g.Anchor] {
			continue
		}
		anchors = append(anchors, g.Anchor)
	}
	return e.rowStatesOf(tab, shape.Name, anchors)
}

// rowStatesOf reads what the inbound decisions need of the Input rows of
// anchors (a window of them: a few statements for all, projector.RowStates),
// by anchor; each as rowState reads one.
func (e *Engine) rowStatesOf(tab, entity string, anchors []string) (map[string]aggregates.RowState, error) {
	out := make(map[string]aggregates.RowState, len(anchors))
	refs := make([]projector.RowRef, 0, len(anchors))
	for _, a := range anchors {
		if _, dup := out[a]; !dup {
			out[a] = aggregates.RowState{}
			refs = append(refs, projector.RowRef{Anchor: a, Binding: layout.RowBindingID(tab, a)})
		}
	}
	if len(refs) == 0 {
		return out, nil
	}
	e.stats.RowStates += uint64(len(refs))
	states, err := e.proj.RowStates(entity, refs)
	if err != nil {
		return nil, err
	}
	for a, rs := range states {
		e.alignShown(entity, &rs)
		out[a] = rs
	}
	return out, nil
}

// rowState reads what the inbound decisions need of one Input row.
func (e *Engine) rowState(tab, entity, anchor string) (rs aggregates.RowState, err error) {
	e.stats.RowStates++
	rs.Binding = layout.RowBindingID(tab, anchor)
	if rs.VisibleHash, rs.VisibleRevision, rs.VisibleSeq, rs.Bound, err = e.proj.Visible(rs.Binding); err != nil {
		return rs, err
	}
	if rs.Canonical, rs.Exists, err = e.proj.EntityValues(entity, anchor); err != nil {
		return rs, err
	}
	if rs.Entity, err = e.proj.EntityState(entity, anchor); err != nil {
		return rs, err
	}
	if rs.InFlight, err = e.proj.InFlight(rs.Binding); err != nil {
		return rs, err
	}
	if rs.Sheet, err = e.proj.SheetFields(rs.Binding); err != nil {
		return rs, err
	}
	e.alignShown(entity, &rs)
	rs.OpenConflicts, err = e.proj.OpenConflictsOn(rs.Binding)
	return rs, err
}

// alignShown: a cell the store knows to show a field's value in the kind
// an older declaration gave the field (an int shown before an int → float
// retype) shows canonical state when that value is the canonical one
// converted back (events.ConvertValue is exact): its shown hash is read as
// the canonical value's, so a person's edit of it is an edit, not a
// conflict with a change the system never made.
func (e *Engine) alignShown(entity string, rs *aggregates.RowState) {
	if e.lay == nil || len(e.lay.eras) < 2 {
		return
	}
	for f, sf := range rs.Sheet {
		v, ok := rs.Canonical[f]
		if !sf.ShownKnown || !ok {
			continue
		}
		cur, err := aggregates.ShownHash(v)
		if err != nil || cur == sf.ShownHash {
			continue
		}
		to := shapeOf(e.reg, entity, f)
		for _, from := range e.lay.olderShapes(entity, f) {
			if from.Kind == to.Kind {
				continue
			}
			old, err := convertShown(v, to, from)
			if err != nil {
				continue
			}
			if h, err := aggregates.ShownHash(old); err == nil && h == sf.ShownHash {
				sf.ShownHash = cur
				rs.Sheet[f] = sf
				break
			}
		}
	}
}

// Cleanup implements effects.Inbound: the surplus-row cleanup of the Input
// tabs (I21, aggregates.DecideCleanup), every delete an effect guarded by
// the full-row hash read now.
// A tab whose whole grid read is what the last cleanup read and found
// nothing to delete in, at the same checkpoint and base, is skipped
// (unchanged.go).
func (e *Engine) Cleanup(base uint64, grids map[string]*sheetsio.GridSnapshot) (int, error) {
	n := 0
	err := e.onWriter(func() error {
		var ch aggregates.Changes
		marks := map[passKey]unchangedMark{}
		for _, t := range sortedKeys(grids) {
			k := passKey{kind: passCleanup, tab: t}
			m, _, same, err := e.gridSame(k, base, grids[t])
			if err != nil {
				return err
			}
			if same {
				continue
			}
			fx, err := e.cleanupTab(grids[t], base)
			if err != nil {
				return err
			}
			if len(fx) == 0 {
				marks[k] = m
			}
			ch.Queue = append(ch.Queue, fx...)
		}
		n = len(ch.Queue)
		if err := e.commitWorker(ch, e.cfg.Clock.Now()); err != nil {
			return err
		}
		for k, m := range marks {
			e.remember(k, m)
		}
		return nil
	})
	return n, err
}

func (e *Engine) cleanupTab(g *sheetsio.GridSnapshot, base uint64) ([]aggregates.Queue, error) {
	if g.Err != nil {
		return nil, nil
	}
	spec, _ := e.sheet.Schema.Tab(g.Tab)
	rows := make([]aggregates.CleanupRow, len(g.Rows))
	copies := map[string]int{}
	for i, r := range g.Rows {
		rows[i] = aggregates.CleanupRow{Anchor: r.Anchor, Hash: rowHash(r.Cells), Plain: plainCells(r.Cells)}
		copies[r.Anchor]++
	}
	states := map[string]aggregates.RowState{}
	anchors := distinctAnchors(rows)
	for from := 0; from < len(anchors); from += observeWindow {
		need, err := e.cleanupNeedsState(spec.Entity, anchors[from:min(from+observeWindow, len(anchors))], copies)
		if err != nil {
			return nil, err
		}
		got, err := e.rowStatesOf(g.Tab, spec.Entity, need)
		if err != nil {
			return nil, err
		}
		maps.Copy(states, got)
	}
	return aggregates.DecideCleanup(g.Tab, spec.Entity, rows, states, base, e.sheet), nil
}

// distinctAnchors are the anchors rows show, each once, in row order.
func distinctAnchors(rows []aggregates.CleanupRow) []string {
	seen := make(map[string]bool, len(rows))
	var out []string
	for _, r := range rows {
		if r.Anchor != "" && !seen[r.Anchor] {
			seen[r.Anchor] = true
			out = append(out, r.Anchor)
		}
	}
	return out
}

// cleanupNeedsState returns the anchors (a window of them) whose state
// the cleanup needs (aggregates.CleanupNeedsState): a single row of a
// live entity needs none. Whether entities exist is read in bulk.
func (e *Engine) cleanupNeedsState(entity string, anchors []string, copies map[string]int) ([]string, error) {
	var single []string
	for _, a := range anchors {
		if copies[a] == 1 {
			single = append(single, a)
		}
	}
	exist, err := e.proj.ExistingOf(entity, single)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range anchors {
		if aggregates.CleanupNeedsState(copies[a], exist[a]) {
			out = append(out, a)
		}
	}
	return out, nil
}

// decodeGridRow decodes one grid row's cells for the decisions.
func decodeGridRow(spec layout.TabSpec, r *sheetsio.GridRow) *aggregates.GridRow {
	g := &aggregates.GridRow{SheetRow: r.SheetRow, Anchor: r.Anchor, Hash: rowHash(r.Cells), Plain: plainCells(r.Cells)}
	if _, err := cell.DecodeObserved(spec.Columns[spec.Anchor], r.Cells[spec.Anchor]); err != nil {
		g.AnchorReason = reasonOf(err)
		return g
	}
	g.Values = make(map[string]any, len(spec.Columns))
	for i, col := range spec.Columns {
		if i == spec.Anchor {
			continue
		}
		v, err := cell.DecodeObserved(col, r.Cells[i])
		if err != nil {
			g.Malformed, g.Values = &aggregates.CellError{Column: col.Name, Reason: reasonOf(err)}, nil
			return g
		}
		g.Values[col.Name] = v
	}
	return g
}

func reasonOf(err error) string {
	var me *cell.MalformedError
	if errors.As(err, &me) {
		return me.Reason
	}
	return "cell_malformed"
}

// plainCells reports whether no cell of a row is a formula, an error
// value or part of a merge.
func plainCells(cells []cell.Observed) bool {
	for _, c := range cells {
		if c.Formula != "" || c.ErrorType != "" || c.Merged {
			return false
		}
	}
	return true
}

// rowHash is the full-row visible hash of a grid row, as a values read of
// the same row hashes it.
func rowHash(cells []cell.Observed) string {
	vals := make([]any, len(cells))
	for i, c := range cells {
		vals[i] = c.Value
	}
	return cell.VisibleHash(vals)
}
