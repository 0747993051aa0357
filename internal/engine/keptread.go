package engine

import (
	"fmt"
	"sort"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The kept read of anti-entropy. An idle store's
// reconciliation reads the same bytes pass after pass while its canonical
// window walks the tab. A pass that queued nothing keeps what the next
// passes need of its read: the digest of the whole values read
// (SeenTab.Body), the rows that showed the store's last write (clean:
// one copy, the expected hash, no effect in flight, not held), sorted
// by anchor, and the report of every other row. A later pass whose read
// digests the same (effects.KnownRepairs, SeenTab.Undecoded) at the same
// checkpoint sees the same rows, so every row that is not clean decides
// what it decided then and queued nothing; only the next canonical window
// of clean rows is compared with canonical state — no row is decoded,
// and the tab's rows are not read from the read model. A person's edit
// changes the read's digest: the pass then reads again and decides every
// row; a commit moves the checkpoint: the kept read is stale
// (ErrReadUndecoded), and so is any pass that queued a correction.

// keptRead is what a repair pass over one tab kept of its read.
type keptRead struct {
	body  [32]byte
	clean keptRows                // anchor and expected hash, sorted by anchor
	rest  aggregates.RepairReport // the rows that were not clean
}

// keep keeps, after a decoded pass at c.mark that compared window w with
// the expected hashes of rows, queued nothing and left no row for a later
// pass (again false), what a pass reading the same bytes needs; any other
// pass, or a read not digested, keeps nothing.
func (c *canonicalCursor) keep(body [32]byte, w canonicalWindow, expected map[string]string, rest aggregates.RepairReport, again bool) {
	c.kept = nil
	if again || body == ([32]byte{}) || !c.mark.valid {
		return
	}
	clean, ok := packRows(w.anchors, w.clean, expected, w.total)
	if !ok {
		return
	}
	c.kept = &keptRead{body: body, rest: rest, clean: clean}
}

// keptFor reports whether c kept the read body at the read model's
// checkpoint now.
func (e *Engine) keptFor(c *canonicalCursor, body [32]byte) bool {
	m := c.mark
	return c.kept != nil && c.kept.body == body && body != ([32]byte{}) &&
		m.valid && m.proj == e.proj && m.checkpoint == e.proj.Checkpoint()
}

// KnownRepair implements effects.KnownRepairs: the digest of the read
// every tab of tabs kept (one read of them all), at the checkpoint now;
// zero when a tab kept none.
func (e *Engine) KnownRepair(spreadsheet string, tabs []string) (sheetsio.BodyDigest, error) {
	var body sheetsio.BodyDigest
	err := e.onWriter(func() error {
		body = e.knownRepair(spreadsheet, tabs)
		return nil
	})
	return body, err
}

func (e *Engine) knownRepair(spreadsheet string, tabs []string) (body sheetsio.BodyDigest) {
	for i, t := range tabs {
		c, ok := e.cursors[passKey{kind: passRepair, spreadsheet: spreadsheet, tab: t}]
		if !ok || c.kept == nil || (i > 0 && c.kept.body != body) || !e.keptFor(c, c.kept.body) {
			return sheetsio.BodyDigest{}
		}
		body = c.kept.body
	}
	return body
}

// repairKept is repairTab for a read not decoded (seen.Undecoded): the
// kept read's next canonical window is compared, or, once the passes at
// this mark compared every clean row, the pass is skipped. A read the
// tab did not keep is ErrReadUndecoded (the pass reads again), and so is
// a read whose base is behind the read model: a row written since may be
// newer than the read, and the kept rows are not read again to tell
// (a pass that left such rows kept nothing: keep).
func (e *Engine) repairKept(spreadsheet string, spec layout.TabSpec, base uint64, seen aggregates.SeenTab) (aggregates.RepairReport, error) {
	k := passKey{kind: passRepair, spreadsheet: spreadsheet, tab: seen.Tab}
	c := e.canonicalCursorOf(k)
	if !e.keptFor(c, seen.Body) || base != e.proj.Checkpoint() {
		return aggregates.RepairReport{}, fmt.Errorf("engine: %w: tab %s", effects.ErrReadUndecoded, seen.Tab)
	}
	e.stats.Kept++
	m := c.mark
	if old, same := e.same(k, m); same {
		return old.repaired, e.commitWorker(aggregates.Changes{}, e.cfg.Clock.Now())
	}
	window, cw := e.keptWindow(c)
	rep, q, err := e.repairClean(spec, window, c.kept.rest)
	if err != nil {
		return rep, err
	}
	if err := e.commitWorker(aggregates.Changes{Queue: q}, e.cfg.Clock.Now()); err != nil {
		return rep, err
	}
	if len(q) > 0 {
		c.kept = nil
	}
	if m.repaired = rep; c.swept(m, cw, len(q) > 0) {
		e.remember(k, m)
	}
	return rep, nil
}

// keptWindow is this pass's canonical window over the kept clean rows
// (the next ones from c.next, wrapping, as canonicalWindowOf picks them)
// and moves c past it.
func (e *Engine) keptWindow(c *canonicalCursor) ([]aggregates.SeenRow, canonicalWindow) {
	clean, size := &c.kept.clean, e.canonicalEvery()
	n := clean.len()
	w := canonicalWindow{total: n, compared: min(n, size)}
	from, take := 0, n
	if n > size {
		from = sort.Search(n, func(i int) bool { return string(clean.anchor(i)) >= c.next }) % n
		take = size
	}
	out := make([]aggregates.SeenRow, 0, take)
	for j := range take {
		out = append(out, clean.row((from+j)%n))
	}
	if n > size {
		c.next = string(clean.anchor((from + size) % n))
	}
	return out, w
}

// repairClean compares clean rows (each showing the store's last write)
// with canonical state: rest plus their divergences, and the corrections.
func (e *Engine) repairClean(spec layout.TabSpec, clean []aggregates.SeenRow, rest aggregates.RepairReport) (aggregates.RepairReport, []aggregates.Queue, error) {
	rep, policy := rest, aggregates.TabPolicy{Input: spec.Role == layout.RoleInput, Columns: e.sheet.Columns(spec.Name)}
	rep.Queued = 0
	var out []aggregates.Queue
	for from := 0; from < len(clean); from += observeWindow {
		window := clean[from:min(from+observeWindow, len(clean))]
		ids := make([]string, len(window))
		for i, r := range window {
			ids[i] = r.Anchor
		}
		e.stats.RowStates += uint64(len(ids))
		vals, err := e.proj.EntityValuesOf(spec.Entity, ids)
		if err != nil {
			return rep, nil, err
		}
		for _, s := range window {
			r := aggregates.RepairRow{Target: e.sheet.Target(spec.Name, s.Anchor), Entity: spec.Entity, ID: s.Anchor,
				Expected: s.Hash, Observed: s.Hash, Copies: 1, CopyHashes: []string{s.Hash}}
			e.repairValues(spec, policy.Columns, &r, vals)
			q, d, write := aggregates.DecideRepair(r, policy)
			rep.Count(d)
			if write {
				out, rep.Queued = append(out, q), rep.Queued+1
			}
		}
	}
	return rep, out, nil
}
