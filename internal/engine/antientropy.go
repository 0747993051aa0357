package engine

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// RepairBase implements effects.Outbox: the read model's checkpoint now,
// the base of an anti-entropy pass's read.
func (e *Engine) RepairBase() (uint64, error) {
	var base uint64
	err := e.onWriter(func() error { base = e.proj.Checkpoint(); return nil })
	return base, err
}

// Repair compares one tab as a reconciliation pass read it at checkpoint
// base with what the store says it shows, and queues the corrections in
// one fenced commit (effects.Outbox, I28). The divergence it finds is
// noted for sync health.
func (e *Engine) Repair(spreadsheet string, base uint64, seen aggregates.SeenTab) (aggregates.RepairReport, error) {
	var rep aggregates.RepairReport
	spec, ok := e.sheet.Schema.Tab(seen.Tab)
	if !ok || (spec.Role != layout.RoleSystem && spec.Role != layout.RoleInput) {
		return rep, fmt.Errorf("%w: tab %s holds no entity rows", ErrNotARowTab, seen.Tab)
	}
	if seen.Blocked != "" {
		e.notes.noteBlocked(spreadsheet, seen.Tab, codeReasons[seen.Blocked], e.cfg.Clock.Now())
		return rep, nil
	}
	err := e.onWriter(func() (err error) {
		rep, err = e.repairTab(spreadsheet, spec, base, seen)
		return err
	})
	if err == nil {
		e.NoteReconcile(spreadsheet, seen.Tab, rep.Diverged(), e.cfg.Clock.Now())
	}
	return rep, err
}

// canonicalHash is the full-row hash of the row showing canonical state
// vals on tab spec ("" when it cannot be computed: not compared).
func canonicalHash(spec layout.TabSpec, columns []string, anchor string, vals map[string]any) string {
	row := make(map[string]any, len(columns))
	for _, c := range columns {
		if v, ok := vals[c]; ok {
			row[c] = v
		}
	}
	h, err := sheetsio.ExpectedRowHash(spec, anchor, row)
	if err != nil {
		return ""
	}
	return h
}

// repairValues sets the canonical state of r's entity from vals (a
// window's, read in bulk: repairWindow), unless r is in flight (or
// written after the pass's base) or held: anti-entropy leaves those rows
// alone whatever the store holds (classify, in aggregates), so a pass
// during a backfill reads only the rows it can compare.
func (e *Engine) repairValues(spec layout.TabSpec, columns []string, r *aggregates.RepairRow, vals map[string]map[string]any) {
	if r.InFlight || r.Held {
		return
	}
	r.Values = vals[r.ID]
	if r.Exists = r.Values != nil; r.Exists {
		r.Canonical = e.canonicalHash(spec, columns, r.ID, r.Values)
	}
}

// repairWindow reads in bulk the canonical values of a window of anchors
// that are neither pending (TabRows.Pending) nor held, nor clean rows
// outside the pass's canonical window (at is the index of anchors[0] in
// the pass's anchors).
func (e *Engine) repairWindow(spec layout.TabSpec, anchors []string, at int, rows projector.TabRows, cw canonicalWindow) (map[string]map[string]any, error) {
	var ids []string
	for i, a := range anchors {
		if !rows.Pending(a) && !rows.Held[a] && cw.in(at+i) {
			ids = append(ids, a)
		}
	}
	e.stats.RowStates += uint64(len(ids))
	return e.proj.EntityValuesOf(spec.Entity, ids)
}

// repairRows decides every anchor the tab shows or should show, a window
// of anchors at a time, except the clean rows outside this pass's
// canonical window (canonicalwindow.go): it returns the window too.
// rest is the report of the rows that are not clean.
func (e *Engine) repairRows(c *canonicalCursor, spec layout.TabSpec, seen aggregates.SeenTab, rows projector.TabRows, rest *aggregates.RepairReport) (aggregates.RepairReport, []aggregates.Queue, canonicalWindow, error) {
	var rep aggregates.RepairReport
	var out []aggregates.Queue
	observed, copies := seen.Index()
	policy := aggregates.TabPolicy{Input: spec.Role == layout.RoleInput, Columns: e.sheet.Columns(spec.Name)}
	if !policy.Input {
		rep.Surplus += seen.Anchorless // unaddressable: reported for an operator (Input tabs quarantine them)
		rest.Surplus += seen.Anchorless
	}
	anchors := aggregates.Anchors(rows.Expected, observed)
	clean, total := cleanRows(anchors, rows, observed, copies)
	cw := e.canonicalWindowOf(c, anchors, clean, total)
	for from := 0; from < len(anchors); from += observeWindow {
		window := anchors[from:min(from+observeWindow, len(anchors))]
		vals, err := e.repairWindow(spec, window, from, rows, cw)
		if err != nil {
			return rep, nil, cw, err
		}
		for i, anchor := range window {
			if !cw.in(from + i) {
				continue // shows the store's last write: compared in a later pass
			}
			r := aggregates.RepairRow{Target: e.sheet.Target(spec.Name, anchor), Entity: spec.Entity, ID: anchor,
				Expected: rows.Expected[anchor], Observed: observed[anchor], InFlight: rows.Pending(anchor), Held: rows.Held[anchor]}
			r.Copies, r.CopyHashes = aggregates.SeenCopies(observed, copies, anchor)
			e.repairValues(spec, policy.Columns, &r, vals)
			p := policy
			p.Restore = seen.Recreated || rows.MassDeleted || rows.Deleted[anchor]
			q, d, write := aggregates.DecideRepair(r, p)
			rep.Count(d)
			if !cw.clean[from+i] {
				rest.Count(d)
			}
			if write {
				out, rep.Queued = append(out, q), rep.Queued+1
			}
		}
	}
	return rep, out, cw, nil
}

// repairTab is Repair's comparison on the writer goroutine. A read whose
// anchors and hashes are what the last passes over the tab read and
// queued nothing for, at the same checkpoint, once they compared every
// row with canonical state (canonicalwindow.go), is that pass again: its
// report is returned without reading a row's canonical state
// (unchanged.go). A row the store wrote after base is left for a later
// pass (TabRows.Pending), and a pass that left one is neither remembered
// nor kept, as one that queued. So the mark leaves base out: a pass that
// is remembered left no row, its read showed every row's last write, and
// the same rows read at the same checkpoint decide the same whatever the
// base.
func (e *Engine) repairTab(spreadsheet string, spec layout.TabSpec, base uint64, seen aggregates.SeenTab) (aggregates.RepairReport, error) {
	if seen.Undecoded {
		return e.repairKept(spreadsheet, spec, base, seen)
	}
	k := passKey{kind: passRepair, spreadsheet: spreadsheet, tab: seen.Tab}
	m := e.mark(0, seenDigest(seen), true)
	if old, same := e.same(k, m); same {
		if c := e.canonicalCursorOf(k); c.kept != nil && seen.Body != ([32]byte{}) {
			c.kept.body = seen.Body // the same rows, read as other bytes
		}
		return old.repaired, e.commitWorker(aggregates.Changes{}, e.cfg.Clock.Now())
	}
	rows, err := e.proj.TabRowsOf(spreadsheet, seen.Tab, base)
	if err != nil {
		return aggregates.RepairReport{}, err
	}
	var ch aggregates.Changes
	c := e.canonicalCursorOf(k)
	var rest aggregates.RepairReport
	rep, q, cw, err := e.repairRows(c, spec, seen, rows, &rest)
	if err != nil {
		return rep, err
	}
	ch.Queue = q
	if err := e.commitWorker(ch, e.cfg.Clock.Now()); err != nil {
		return rep, err
	}
	again := len(q) > 0 || len(rows.Newer) > 0 // queued, or left rows for a later pass
	if m.repaired = rep; c.swept(m, cw, again) {
		e.remember(k, m)
	}
	c.keep(seen.Body, cw, rows.Expected, rest, again)
	return rep, nil
}
