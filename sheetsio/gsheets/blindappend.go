package gsheets

import (
	"sync"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// A blind append is a batch of first-send appends (Op.FirstSend) sent
// without a preflight read: one batchUpdate, no read. What the preflight
// protected, and what protects it instead:
//
//   - header drift: the Workbook's trust (trust.go) holds the header each
//     tab showed at its last verification, at most Config.TrustTTL old; the
//     batchUpdate asks for the header rows in its own response, rendered
//     in the same atomic step as the appends. A drifted header there
//     forgets the trust (the next dispatch reads and blocks the tab) and
//     leaves the ops uncertain (WriteUnverified), so a probe settles them;
//   - an anchor already present: a first send cannot have landed before,
//     so its anchor is absent unless the sheet is ahead of the store (a
//     person pasted the row, a restored store). Every resend reads first
//     and recognises its landed row (anchorFree); a duplicate that still
//     lands is found by anchor (I16) and its surplus copy removed by
//     full-row compare-and-set (SurplusCopy, DistinctCopy; I21);
//   - the fence (I05): the authority must have shown exactly Batch.Fence
//     within TrustTTL, and the response shows the authority row as it
//     stood atomically with the write: a newer epoch, another token or
//     store forgets the trust, leaves the ops uncertain, and the next
//     dispatch's read refuses (CodeAuthorityStale). Batch.BeforeWrite
//     still runs right before the batchUpdate.
//
// A stale title (a person renamed a tab) makes the response range
// unparsable and Sheets rejects the whole batchUpdate (nothing applied):
// the ops end StatusNotSent (WriteRejectedUnread) and the next dispatch
// reads, which rebinds the title.
type blindCheck struct {
	tabs   []string // every tab the batch relies on, the authority's included
	specs  map[string]layout.TabSpec
	ids    map[string]int64
	titles map[string]string
	fence  *sheetsio.Fence
	// mu and failed order the trust's settlement of bodies sent at once
	// (sendWaves): once one body failed or did not verify, a body
	// answered later does not trust again what that one forgot.
	mu     sync.Mutex
	failed bool
}

// blindTabs lists the tabs a batch of first-send appends relies on; ok is
// false when the batch needs its preflight (any other op, notes, sweeps,
// an op the preflight path must reject).
func blindTabs(w *sheetsio.Workbook, b sheetsio.Batch) ([]string, bool) {
	if len(b.Ops) == 0 || len(b.Notes) > 0 || len(b.SweepNotes) > 0 {
		return nil, false
	}
	var tabs []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t], tabs = true, append(tabs, t)
		}
	}
	for _, op := range b.Ops {
		spec, ok := w.Schema().Tab(op.Tab)
		if op.Kind != sheetsio.OpAppend || !op.FirstSend || !ok || spec.Anchor < 0 || spec.Role == layout.RoleReceipts {
			return nil, false
		}
		add(op.Tab)
		if op.Receipt != nil {
			add(layout.ReceiptsTab)
		}
	}
	if b.Fence != nil {
		add(layout.AuthorityTab)
	}
	return tabs, true
}

// blindPlan returns the snapshots a blind append plans against (bound,
// verified tabs with no rows) and its response check, or ok=false when the
// batch must read first.
func (p *Provider) blindPlan(w *sheetsio.Workbook, b sheetsio.Batch, now time.Time) (map[string]*sheetsio.TabSnapshot, *blindCheck, bool) {
	if p.cfg.TrustTTL < 0 {
		return nil, nil, false
	}
	tabs, ok := blindTabs(w, b)
	if !ok || nearCapacity(w, b) {
		return nil, nil, false
	}
	titles, ok := trustOf(w).trusted(tabs, b.Fence, now, p.cfg.TrustTTL)
	if !ok {
		return nil, nil, false
	}
	c := &blindCheck{tabs: tabs, specs: map[string]layout.TabSpec{}, ids: map[string]int64{}, titles: titles, fence: b.Fence}
	snaps := make(map[string]*sheetsio.TabSnapshot, len(tabs))
	for _, t := range tabs {
		id, ok := w.SheetID(t)
		if !ok {
			return nil, nil, false
		}
		c.specs[t], _ = w.Schema().Tab(t)
		c.ids[t] = id
		snaps[t] = &sheetsio.TabSnapshot{Tab: t, SheetID: id, Title: titles[t]}
	}
	return snaps, c, true
}

// authority is the authority the trust vouches for.
func (c *blindCheck) authority() sheetsio.Authority {
	if c.fence == nil {
		return sheetsio.Authority{}
	}
	return sheetsio.Authority{Present: true, StoreID: c.fence.StoreID, Epoch: c.fence.Epoch, Token: c.fence.Token}
}

// ranges names, for the batchUpdate's response, the header row of every
// tab the batch relies on and the authority row.
func (c *blindCheck) ranges() []string {
	out := make([]string, 0, len(c.tabs))
	for _, t := range c.tabs {
		rows := 1
		if t == layout.AuthorityTab {
			rows = 2
		}
		r := a1.Range{Sheet: c.titles[t], HasSheet: true, StartRow: 0, EndRow: rows, StartCol: 0, EndCol: len(c.specs[t].Columns)}
		out = append(out, r.String())
	}
	return out
}

// verify checks the response of the blind batchUpdate: every header still
// valid, the authority still exactly the fence. Errors: the header's
// CodeHeaderDrift, CodeTabMissing for a tab the response lacks, or the
// authority's (CodeAuthorityStale, CodeAuthorityForeign, ...).
func (c *blindCheck) verify(ss *sheets.Spreadsheet) error {
	grids := map[int64][][]any{}
	if ss != nil {
		for _, sh := range ss.Sheets {
			if sh != nil && sh.Properties != nil {
				grids[sh.Properties.SheetId] = observedValues(c.specsByID(sh.Properties.SheetId), sh)
			}
		}
	}
	for _, t := range c.tabs {
		rows, ok := grids[c.ids[t]]
		if !ok {
			return newErr(sheetsio.CodeTabMissing, nil, "tab %s missing from the write's response", t)
		}
		if _, err := sheetsio.CheckHeader(c.specs[t], rows[0]); err != nil {
			return err
		}
		if t == layout.AuthorityTab && c.fence != nil {
			if err := c.verifyFence(rows[1:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// verifyFence checks the authority row the response showed.
func (c *blindCheck) verifyFence(rows [][]any) error {
	snap := &sheetsio.TabSnapshot{Tab: layout.AuthorityTab}
	if len(rows) > 0 {
		snap.Rows = []sheetsio.Row{{Cells: rows[0], SheetRow: 2}}
	}
	a, err := parseAuthority(snap)
	if err != nil {
		return err
	}
	mirror, err := checkFence(a, *c.fence)
	if err == nil && mirror {
		err = newErr(sheetsio.CodeAuthorityStale, nil, "remote authority epoch %d is older than writer epoch %d", a.Epoch, c.fence.Epoch)
	}
	return err
}

func (c *blindCheck) specsByID(id int64) layout.TabSpec {
	for t, i := range c.ids {
		if i == id {
			return c.specs[t]
		}
	}
	return layout.TabSpec{}
}

// observedValues is the values of a response sheet's first two rows, each
// padded to the tab's width (always two rows, possibly blank).
func observedValues(spec layout.TabSpec, sh *sheets.Sheet) [][]any {
	rows := observedRows(sh)
	out := make([][]any, 2)
	for i := range out {
		var raw []cell.Observed
		if i < len(rows) {
			raw = rows[i]
		}
		out[i] = headerValues(newGridRow(spec, raw, i+1).Cells)
	}
	return out
}

// settleTrust refreshes or forgets the trust after a blind batchUpdate:
// werr nil means its response verified every header and the authority.
func (c *blindCheck) settleTrust(w *sheetsio.Workbook, werr *sheetsio.WriteError, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = c.failed || werr != nil
	if c.failed {
		trustOf(w).distrust(c.tabs...)
		return
	}
	snaps := make(map[string]*sheetsio.TabSnapshot, len(c.tabs))
	for _, t := range c.tabs {
		snaps[t] = &sheetsio.TabSnapshot{Tab: t, Title: c.titles[t]}
	}
	trustOf(w).trustSnaps(snaps, now)
	if c.fence != nil {
		trustOf(w).trustFence(*c.fence, now)
	}
}

// blindOutcome classifies a blind batchUpdate: a verification failure
// leaves the applied ops uncertain (a probe settles them); an explicit
// rejection (nothing applied: a stale title in the response ranges, say)
// is not terminal for the ops, which go back to be resent after a read.
func (c *blindCheck) blindOutcome(werr *sheetsio.WriteError, unverified error) *sheetsio.WriteError {
	switch {
	case werr == nil && unverified != nil:
		return &sheetsio.WriteError{Outcome: sheetsio.Uncertain, Code: sheetsio.WriteUnverified, Err: unverified}
	case werr != nil && werr.Outcome == sheetsio.Terminal && werr.Code != sheetsio.WritePayloadTooLarge:
		return &sheetsio.WriteError{Outcome: sheetsio.NotSent, Code: sheetsio.WriteRejectedUnread, Status: werr.Status, Err: werr}
	}
	return werr
}
