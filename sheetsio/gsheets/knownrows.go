package gsheets

import (
	"slices"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Known rows: a dispatch of updates to System rows (an application's
// steady commits) plans against the rows a preflight read of their tabs
// showed at most Config.TrustTTL ago, kept current with what this
// client's own verified writes put there, and sends its batchUpdate
// without reading first: no read request. What the preflight protected,
// and what protects it instead:
//
//   - the fence (I05) and the headers: as for a blind append (blindCheck),
//     the authority showed exactly Batch.Fence and each header validated
//     within TrustTTL, and the batchUpdate's own response shows them again,
//     atomically with the write: a newer epoch, another token or store, a
//     drifted header leave the ops uncertain (WriteUnverified: a probe
//     settles them), forget the trust and the kept rows, and the next
//     dispatch reads (and refuses: CodeAuthorityStale). Batch.BeforeWrite
//     still runs right before the batchUpdate;
//   - the row's place (C06): the response shows each written row; another
//     anchor there is a misdirected write, as after a read;
//   - the row's content (I06): each op's row must show exactly its
//     ExpectedHash in the kept rows, or the dispatch reads (a mismatch
//     falls back to the full preflight); the response shows each written
//     row whole, and one that is not the row the write should have made
//     (someone changed another cell of it since the read) fails its guard
//     (row_hash_mismatch, as a read would have found) and its tab's kept
//     rows are forgotten.
//
// Only System tabs (a person's edit of an Input row is read before any
// write over it), only updates (an append or a delete adds or moves
// rows), never with cell notes, sweeps or an authority refresh. Any
// outcome but a verified write of a kept tab forgets that tab's rows.
type keptTab struct {
	tab  string
	snap *sheetsio.TabSnapshot
	at   time.Time // when the read that showed the rows began
}

// keepRows keeps the System tabs a preflight read whole (read: when it
// began), each a copy the later writes patch.
func (tr *trust) keepRows(schema *layout.Schema, snaps map[string]*sheetsio.TabSnapshot, read time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for name, s := range snaps {
		spec, ok := schema.Tab(name)
		if !ok || spec.Role != layout.RoleSystem || s.Err != nil || s.Partial() || s.Digested || s.Undecoded || s.Title == "" {
			continue
		}
		if tr.kept == nil {
			tr.kept = map[int64]keptTab{}
		}
		c := *s
		c.Rows = slices.Clone(s.Rows)
		tr.kept[s.SheetID] = keptTab{tab: name, snap: &c, at: read}
	}
}

// keptRows returns the kept rows of every tab of tabs, bound to ids,
// when each was read within ttl before now.
func (tr *trust) keptRows(tabs []string, ids map[string]int64, now time.Time, ttl time.Duration) (map[string]*sheetsio.TabSnapshot, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make(map[string]*sheetsio.TabSnapshot, len(tabs))
	for _, t := range tabs {
		k, ok := tr.kept[ids[t]]
		if !ok || k.tab != t || now.Before(k.at) || now.Sub(k.at) >= ttl {
			return nil, false
		}
		out[t] = k.snap
	}
	return out, true
}

// anyKept reports whether the rows of some tab were read within ttl
// before now.
func (tr *trust) anyKept(now time.Time, ttl time.Duration) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, k := range tr.kept {
		if !now.Before(k.at) && now.Sub(k.at) < ttl {
			return true
		}
	}
	return false
}

// forgetRows forgets the kept rows of the tabs named (all when none);
// tr.mu is held.
func (tr *trust) forgetRows(tabs ...string) {
	if len(tabs) == 0 {
		tr.kept = nil
		return
	}
	for id, k := range tr.kept {
		if slices.Contains(tabs, k.tab) {
			delete(tr.kept, id)
		}
	}
}

// keepWritten brings the kept rows up to date after a dispatch's units
// were sent: a verified update's row takes the cells it wrote; any other
// unit of a kept tab (an append, a delete, a failed, uncertain,
// misdirected or drifted update) forgets the tab.
func keepWritten(w *sheetsio.Workbook, units []*unit) {
	tr := trustOf(w)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, u := range units {
		k, ok := tr.kept[u.sheetID]
		if !ok || u.op < 0 {
			continue
		}
		if u.check == nil || !u.sent || u.err != nil || u.misdirected != nil || u.drifted != "" || !k.patch(u.check) {
			delete(tr.kept, u.sheetID)
		}
	}
}

// patch sets the row of c's anchor to the cells c wrote; false when the
// kept rows do not show the anchor exactly once.
func (k keptTab) patch(c *rowCheck) bool {
	i, n := k.snap.Shown(c.anchor)
	if n != 1 || c.next == nil {
		return false
	}
	r := &k.snap.Rows[i]
	r.Cells, r.Hash = c.next, c.hash
	return true
}

// knownPlan returns the snapshots a dispatch of updates plans against
// without reading (the kept rows of its tabs, the trusted receipts and
// authority) and its response check, or ok=false when the batch must
// read first.
func (p *Provider) knownPlan(w *sheetsio.Workbook, b sheetsio.Batch, now time.Time) (map[string]*sheetsio.TabSnapshot, *blindCheck, bool) {
	rows, tabs, ok := updateTabs(w, b)
	if p.cfg.TrustTTL < 0 || !ok || nearCapacity(w, b) {
		return nil, nil, false
	}
	tr := trustOf(w)
	titles, ok := tr.trusted(tabs, b.Fence, now, p.cfg.TrustTTL)
	if !ok {
		return nil, nil, false
	}
	kept, ok := tr.keptRows(rows, w.SheetIDs(), now, p.cfg.TrustTTL)
	if !ok || !showsExpected(b.Ops, kept) {
		return nil, nil, false
	}
	c := &blindCheck{tabs: tabs, specs: map[string]layout.TabSpec{}, ids: map[string]int64{}, titles: titles, fence: b.Fence}
	snaps := make(map[string]*sheetsio.TabSnapshot, len(tabs))
	for _, t := range tabs {
		id, ok := w.SheetID(t)
		if !ok || kept[t] != nil && (kept[t].SheetID != id || kept[t].Title != titles[t]) {
			return nil, nil, false
		}
		c.specs[t], _ = w.Schema().Tab(t)
		c.ids[t] = id
		snaps[t] = kept[t]
		if snaps[t] == nil {
			snaps[t] = &sheetsio.TabSnapshot{Tab: t, SheetID: id, Title: titles[t]}
		}
	}
	return snaps, c, true
}

// updateTabs lists the System tabs a batch of updates writes (rows) and
// every tab it relies on (tabs: those, the receipts', the authority's);
// ok is false when the batch needs its preflight.
func updateTabs(w *sheetsio.Workbook, b sheetsio.Batch) (rows, tabs []string, ok bool) {
	if len(b.Ops) == 0 || len(b.Notes) > 0 || len(b.SweepNotes) > 0 || b.Fence == nil || b.Refresh {
		return nil, nil, false
	}
	add := func(list []string, t string) []string {
		if !slices.Contains(list, t) {
			list = append(list, t)
		}
		return list
	}
	for _, op := range b.Ops {
		spec, ok := w.Schema().Tab(op.Tab)
		if op.Kind != sheetsio.OpUpdate || !ok || spec.Role != layout.RoleSystem || spec.Anchor < 0 {
			return nil, nil, false
		}
		rows, tabs = add(rows, op.Tab), add(tabs, op.Tab)
		if op.Receipt != nil {
			tabs = add(tabs, layout.ReceiptsTab)
		}
	}
	return rows, add(tabs, layout.AuthorityTab), true
}

// showsExpected reports whether each op's row shows, in the kept rows,
// exactly once and exactly the hash the op expects.
func showsExpected(ops []sheetsio.Op, kept map[string]*sheetsio.TabSnapshot) bool {
	for _, op := range ops {
		s := kept[op.Tab]
		i, n := s.Shown(norm.NFC.String(op.Anchor))
		if n != 1 || s.Rows[i].Hash != op.ExpectedHash {
			return false
		}
	}
	return true
}

// withoutRead is how a dispatch plans without a preflight read: a blind
// append, or updates against the kept rows; ok=false: it reads.
func (p *Provider) withoutRead(w *sheetsio.Workbook, b sheetsio.Batch, now time.Time) (map[string]*sheetsio.TabSnapshot, *blindCheck, bool) {
	if snaps, c, ok := p.blindPlan(w, b, now); ok {
		return snaps, c, true
	}
	return p.knownPlan(w, b, now)
}

// RowsKnown reports whether a pass of updates fenced by f may go without
// a preflight read now (sheetsio.KnownRows): the authority showed exactly
// f within Config.TrustTTL and rows of some tab are kept as fresh.
func (p *Provider) RowsKnown(w *sheetsio.Workbook, f sheetsio.Fence) bool {
	tr, now, ok := p.fenceTrusted(w, f)
	return ok && tr.anyKept(now, p.cfg.TrustTTL)
}

// fenceTrusted reports whether the authority showed exactly f within
// Config.TrustTTL (never with TrustTTL < 0), with w's trust and now.
func (p *Provider) fenceTrusted(w *sheetsio.Workbook, f sheetsio.Fence) (*trust, time.Time, bool) {
	if p.cfg.TrustTTL < 0 || w == nil {
		return nil, time.Time{}, false
	}
	now := p.cfg.Now()
	tr := trustOf(w)
	_, ok := tr.trusted(nil, &f, now, p.cfg.TrustTTL)
	return tr, now, ok
}

// drift is the hash of the row the response shows at row (0-based) when
// it is not the row the update made ("" when it is).
func (k *rowCheck) drift(rows [][]cell.Observed, row int) string {
	var raw []cell.Observed
	if row < len(rows) {
		raw = rows[row]
	}
	got := newGridRow(k.spec, raw, row+1)
	values := make([]any, len(got.Cells))
	for i, o := range got.Cells {
		values[i] = o.Value
	}
	if h := k.spec.RowHash(values); h != k.hash {
		return h
	}
	return ""
}

// guardRows asks the response of a dispatch planned without a read to
// show each update's row exactly as the update made it (drift).
func guardRows(units []*unit) {
	for _, u := range units {
		if u.check != nil {
			u.check.guard = true
		}
	}
}

// AppendsKnown reports whether a pass of first-send appends fenced by f
// may go without a preflight read now (sheetsio.BlindAppends): the
// authority showed exactly f, and the header of some tab that takes
// appends (an anchored tab other than the receipts') validated, within
// Config.TrustTTL. Each batch still decides on its own (blindPlan): one
// that needs more reads first.
func (p *Provider) AppendsKnown(w *sheetsio.Workbook, f sheetsio.Fence) bool {
	tr, now, ok := p.fenceTrusted(w, f)
	if !ok {
		return false
	}
	for _, t := range w.Schema().Tabs() {
		if t.Anchor < 0 || t.Role == layout.RoleReceipts || t.Role == layout.RoleAuthority {
			continue
		}
		if _, ok := tr.trusted([]string{t.Name}, nil, now, p.cfg.TrustTTL); ok {
			return true
		}
	}
	return false
}
