package gsheets

import (
	"context"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Dispatch applies a Batch of row operations to one spreadsheet with a
// constant request count (I19):
//
//  1. one values.batchGetByDataFilter (UNFORMATTED_VALUE, SERIAL_NUMBER)
//     of every affected tab, the authority tab (when Fence is set) and the
//     receipts header, addressed by the sheetIds the Workbook knows (so
//     renamed tabs keep working); only when an id is unknown or stale, one
//     spreadsheets.get enumerating the tabs first, then a values.batchGet.
//     Each tab's header is validated (drift blocks that tab's ops);
//  2. per-op planning against that preflight: rows are found by anchor only
//     (C06), updates/deletes are compare-and-set on the full-row visible
//     hash (I06), appends recognise replays by anchor;
//  3. one spreadsheets.batchUpdate carrying every tab's requests and the
//     receipt rows (a few per batchUpdate, see ReceiptRecord); chunked only
//     beyond MaxBatchBytes/MaxBatchRequests, chunks of new rows only cut
//     to about one size and sent at once (wave.go); a size rejection
//     splits the chunk (C09). Writes are never retried.
//
// Before sending, the units of a tab whose rows would take the spreadsheet
// past MaxSpreadsheetCells are held back (StatusBlocked,
// CodeSpreadsheetCapacity): one more spreadsheets.get only when the grid
// is unknown or the batch would pass the limit as far as it knows
// (fitCapacity).
//
// The returned error is non-nil only when nothing was written: read errors
// (*Error CodeReadUnavailable, CodeReadRejected, CodePermissionDenied,
// CodeSpreadsheetNotFound), CodeAuthorityStale / CodeAuthorityForeign /
// CodeAuthorityInvalid (I05, checked before any write), CodeInvalidBatch.
// Otherwise every op's fate is in DispatchResult.Ops (see OpStatus).
func (p *Provider) Dispatch(ctx context.Context, w *sheetsio.Workbook, b sheetsio.Batch) (*sheetsio.DispatchResult, error) {
	if w == nil {
		return nil, newErr(sheetsio.CodeInvalidBatch, nil, "nil workbook")
	}
	ctx, ctr := withCounter(ctx)
	read := p.cfg.Now()
	snaps, check, blind := p.withoutRead(w, b, read)
	if !blind {
		var err error
		if snaps, err = p.preflight(ctx, w, b); err != nil {
			return nil, err
		}
	}
	return p.sendPlanned(ctx, ctr, w, b, snaps, check, read)
}

// sendPlanned is Dispatch after its read: it plans b against snaps (the
// preflight's, or a blind append's with its check) and sends it, counting
// the requests in ctr (ctx's counter). read is when the read began.
func (p *Provider) sendPlanned(ctx context.Context, ctr *requestCounter, w *sheetsio.Workbook, b sheetsio.Batch,
	snaps map[string]*sheetsio.TabSnapshot, check *blindCheck, read time.Time) (*sheetsio.DispatchResult, error) {
	res := &sheetsio.DispatchResult{Strays: strayCounts(snaps)}
	now := p.cfg.Now() // the authority mirror's and the receipts' time
	units, err := planVerified(w, b, snaps, check, res, read, now)
	if err != nil {
		return nil, err
	}
	rm := receiptMeta{fence: b.Fence, now: now, beforeWrite: b.BeforeWrite, check: check}
	if rs := snaps[layout.ReceiptsTab]; rs != nil {
		rm.sheetID = rs.SheetID
	}
	if units, err = p.fitCapacity(ctx, w, b, units, snaps, res, rm.sheetID); err != nil {
		return nil, err
	}
	p.sendChunks(ctx, w, p.bodies(units, p.headroom(classWrite)), rm)
	keepWritten(w, units)
	noteHead(w, units)
	res.Refreshed = refreshed(units)
	settle(res, units)
	settleNotes(res, units)
	res.Reads, res.Writes, res.Chunks = int(ctr.reads.Load()), int(ctr.writes.Load()), int(ctr.chunks.Load())
	res.BodyBytes = ctr.bytes.Load()
	p.logger().Debug("sheets dispatch", "ops", len(b.Ops), "units", len(units), "chunks", res.Chunks, "reads", res.Reads, "writes", res.Writes,
		"body_bytes", res.BodyBytes)
	return res, nil
}

// preflight reads every tab the batch touches in one read: a tab with
// only appends through its header and anchor column (an append only needs
// to know whether its anchor is there), the receipts tab through its
// header, the rest whole; by the Workbook's known sheetIds when it has
// them all, else (or when an id is stale) after an enumeration that
// rebinds them (that path reads appended-to tabs whole). The rows of a
// partially read tab where an append finds its anchor are then read whole
// (a second read: readAnchoredRows) so the planner can tell a replay from
// a conflict.
func (p *Provider) preflight(ctx context.Context, w *sheetsio.Workbook, b sheetsio.Batch) (map[string]*sheetsio.TabSnapshot, error) {
	tabs, modes := preflightModes(w, b)
	snaps, ok, err := p.readKnown(ctx, w, tabs, modes, nil, sheetsio.BodyDigest{})
	if err != nil {
		return nil, err
	}
	if !ok {
		infos, err := p.enumerate(ctx, w)
		if err != nil {
			return nil, err
		}
		return p.readTabs(ctx, w, resolve(w, infos), tabs, layout.ReceiptsTab)
	}
	tabs, rows := anchoredRows(b, snaps)
	if len(tabs) == 0 {
		return snaps, nil
	}
	if err := p.readAnchoredRows(ctx, w, snaps, tabs, rows); err != nil {
		return nil, err
	}
	return snaps, nil
}

// preflightModes lists the tabs a batch touches and how much of each the
// preflight reads.
func preflightModes(w *sheetsio.Workbook, b sheetsio.Batch) ([]string, map[string]readMode) {
	modes := map[string]readMode{}
	var tabs []string
	add := func(t string, m readMode) {
		if _, ok := w.Schema().Tab(t); !ok {
			return
		}
		if cur, seen := modes[t]; !seen {
			tabs = append(tabs, t)
			modes[t] = m
		} else if cur != m {
			modes[t] = readFull
		}
	}
	for _, op := range b.Ops {
		m := readFull
		if op.Kind == sheetsio.OpAppend {
			m = readAnchors
		}
		add(op.Tab, m)
		if op.Receipt != nil {
			add(layout.ReceiptsTab, readHeader)
		}
	}
	for _, n := range b.Notes {
		add(n.Tab, readFull)
	}
	for _, t := range b.SweepNotes {
		add(t, readHeader)
	}
	if b.Fence != nil {
		add(layout.AuthorityTab, readFull)
	}
	return tabs, modes
}

// planVerified plans a batch. After a preflight read (check nil) it
// records what the read verified in the Workbook's trust (read: when the
// read began) and keeps the System tabs' rows (keepRows); a dispatch
// without a read (check set: a blind append, updates on kept rows) plans
// against the trust alone: no authority to check or mirror, the response
// verifies it, and each update's row (guard).
func planVerified(w *sheetsio.Workbook, b sheetsio.Batch, snaps map[string]*sheetsio.TabSnapshot, check *blindCheck, res *sheetsio.DispatchResult, read, now time.Time) ([]*unit, error) {
	if check != nil {
		res.Authority = check.authority()
		fenced, id := check.fence != nil, check.ids[layout.AuthorityTab]
		b.Fence = nil
		units, err := planWithFence(w, b, snaps, res, now)
		guardRows(units)
		shown, wrote := trustOf(w).heads()
		return withHead(units, headUnit(b, fenced, id, shown, wrote)), err
	}
	trustOf(w).trustSnaps(snaps, read)
	trustOf(w).keepRows(w.Schema(), snaps, read)
	units, err := planWithFence(w, b, snaps, res, now)
	switch {
	case b.Fence == nil:
	case err != nil:
		trustOf(w).distrust()
	case len(units) == 0 || units[0].order != orderAuthority || units[0].refresh: // the authority showed exactly the fence
		trustOf(w).trustFence(*b.Fence, read)
	}
	if err != nil || b.Fence == nil {
		return units, err
	}
	shown := res.Authority.Head
	trustOf(w).shownHead(shown)
	if b.Head != nil {
		res.HeadShown = &shown
	}
	_, wrote := trustOf(w).heads()
	return withHead(units, headUnit(b, true, snaps[layout.AuthorityTab].SheetID, shown, wrote)), nil
}

// planWithFence checks the fence against the authority and plans the ops;
// an authority mirror, when needed, becomes the first unit.
func planWithFence(w *sheetsio.Workbook, b sheetsio.Batch, snaps map[string]*sheetsio.TabSnapshot, res *sheetsio.DispatchResult, now time.Time) ([]*unit, error) {
	mirror, err := fenceUnit(b.Fence, snaps[layout.AuthorityTab], res, now, b.Refresh)
	if err != nil {
		return nil, err
	}
	pl := newPlanner(w.Schema(), snaps, b)
	units := pl.plan(b.Ops)
	res.Ops = pl.results
	pl.units = nil
	res.Swept = pl.planSweeps(b.SweepNotes)
	res.Notes = pl.planNotes(b.Notes)
	units = append(units, pl.units...)
	sortUnits(units)
	if mirror != nil {
		units = append([]*unit{mirror}, units...)
	}
	return units, nil
}

// fenceUnit returns the authority-mirror unit the fence needs (nil if none)
// or the fencing error (I05). It records the observed authority in res.
func fenceUnit(f *sheetsio.Fence, snap *sheetsio.TabSnapshot, res *sheetsio.DispatchResult, now time.Time, refresh bool) (*unit, error) {
	if f == nil {
		return nil, nil
	}
	a, err := parseAuthority(snap)
	if err != nil {
		return nil, err
	}
	res.Authority = a
	need, err := checkFence(a, *f)
	if err != nil || !need && !refresh {
		return nil, err
	}
	req, err := authorityRequest(snap.SheetID, *f, now)
	if err != nil {
		return nil, err
	}
	u := &unit{op: -1, order: orderAuthority, sheetID: snap.SheetID, reqs: []*sheets.Request{req}, refresh: !need}
	u.measure()
	return u, nil
}

// settle copies each sent unit's outcome into its op result.
func settle(r *sheetsio.DispatchResult, units []*unit) {
	for _, u := range units {
		if u.op < 0 {
			continue
		}
		res := &r.Ops[u.op]
		switch {
		case !u.sent && u.err != nil && u.err.Code == sheetsio.CodeSpreadsheetCapacity:
			res.Status, res.Reason, res.Err = sheetsio.StatusBlocked, u.err.Code, u.err
		case !u.sent:
			res.Status, res.Err = sheetsio.StatusNotSent, u.err
		case u.err == nil && u.misdirected != nil:
			res.Status, res.Reason, res.Misdirected = sheetsio.StatusMisdirected, sheetsio.ReasonWriteMisdirected, u.misdirected
		case u.err == nil && u.drifted != "":
			res.Status, res.Reason, res.ObservedHash = sheetsio.StatusGuardFailed, sheetsio.ReasonRowHashMismatch, u.drifted
		case u.err == nil:
			res.Status = sheetsio.StatusApplied
		case u.err.Outcome == sheetsio.Terminal:
			res.Status, res.Reason, res.Err = sheetsio.StatusFailed, u.err.Code, u.err
		default:
			res.Status, res.Reason, res.Err = sheetsio.StatusUncertain, u.err.Code, u.err
		}
	}
}

func strayCounts(snaps map[string]*sheetsio.TabSnapshot) map[string]int {
	out := map[string]int{}
	for n, s := range snaps {
		if len(s.Strays) > 0 {
			out[n] = len(s.Strays)
		}
	}
	return out
}
