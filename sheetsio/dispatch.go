package sheetsio

import (
	"context"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Dispatch applies a Batch of row operations to one spreadsheet with a
// constant request count (I19, seed 001 "Spreadsheet-scoped batch merging"):
//
//  1. one spreadsheets.get enumerating the tabs (fields mask; tabs are
//     resolved by sheetId, so renamed tabs keep working);
//  2. one values.batchGet (UNFORMATTED_VALUE, SERIAL_NUMBER) of every
//     affected tab, the authority tab (when Fence is set) and the receipts
//     header; each tab's header is validated (drift blocks that tab's ops);
//  3. per-op planning against that preflight: rows are found by anchor only
//     (C06), updates/deletes are compare-and-set on the full-row visible
//     hash (I06), appends recognise replays by anchor;
//  4. one spreadsheets.batchUpdate carrying every tab's requests and the
//     receipt rows (chunked only beyond MaxBatchBytes/MaxBatchRequests; a
//     size rejection splits the chunk, C09). Writes are never retried.
//
// The returned error is non-nil only when nothing was written: read errors
// (*Error CodeReadUnavailable, CodeReadRejected, CodePermissionDenied,
// CodeSpreadsheetNotFound), CodeAuthorityStale / CodeAuthorityForeign /
// CodeAuthorityInvalid (I05, checked before any write), CodeInvalidBatch.
// Otherwise every op's fate is in DispatchResult.Ops (see OpStatus).
func (p *Provider) Dispatch(ctx context.Context, w *Workbook, b Batch) (*DispatchResult, error) {
	if w == nil {
		return nil, newErr(CodeInvalidBatch, nil, "nil workbook")
	}
	ctx, ctr := withCounter(ctx)
	infos, err := p.enumerate(ctx, w)
	if err != nil {
		return nil, err
	}
	snaps, err := p.preflight(ctx, w, b, w.resolve(infos))
	if err != nil {
		return nil, err
	}
	res := &DispatchResult{Strays: strayCounts(snaps)}
	units, err := p.planWithFence(w, b, snaps, res)
	if err != nil {
		return nil, err
	}
	p.sendChunks(ctx, w, chunk(units, p.cfg.MaxBatchBytes, p.cfg.MaxBatchRequests))
	res.settle(units)
	res.Reads, res.Writes, res.Chunks = int(ctr.reads.Load()), int(ctr.writes.Load()), int(ctr.chunks.Load())
	p.log.Debug("sheets dispatch", "ops", len(b.Ops), "units", len(units), "chunks", res.Chunks, "reads", res.Reads, "writes", res.Writes)
	return res, nil
}

// preflight reads every tab the batch touches in one values.batchGet.
func (p *Provider) preflight(ctx context.Context, w *Workbook, b Batch, resolved map[string]sheetInfo) (map[string]*TabSnapshot, error) {
	var tabs []string
	seen := map[string]bool{}
	add := func(t string) {
		if _, ok := w.schema.Tab(t); ok && !seen[t] {
			seen[t] = true
			tabs = append(tabs, t)
		}
	}
	for _, op := range b.Ops {
		add(op.Tab)
		if op.Receipt != nil {
			add(layout.ReceiptsTab)
		}
	}
	if b.Fence != nil {
		add(layout.AuthorityTab)
	}
	return p.readTabs(ctx, w, resolved, tabs, layout.ReceiptsTab)
}

// planWithFence checks the fence against the authority and plans the ops;
// an authority mirror, when needed, becomes the first unit.
func (p *Provider) planWithFence(w *Workbook, b Batch, snaps map[string]*TabSnapshot, res *DispatchResult) ([]*unit, error) {
	now := p.cfg.Now()
	mirror, err := fenceUnit(b.Fence, snaps[layout.AuthorityTab], res, now)
	if err != nil {
		return nil, err
	}
	pl := newPlanner(w.schema, snaps, b, now)
	units := pl.plan(b.Ops)
	res.Ops = pl.results
	if mirror != nil {
		units = append([]*unit{mirror}, units...)
	}
	return units, nil
}

// fenceUnit returns the authority-mirror unit the fence needs (nil if none)
// or the fencing error (I05). It records the observed authority in res.
func fenceUnit(f *Fence, snap *TabSnapshot, res *DispatchResult, now time.Time) (*unit, error) {
	if f == nil {
		return nil, nil
	}
	a, err := parseAuthority(snap)
	if err != nil {
		return nil, err
	}
	res.Authority = a
	need, err := checkFence(a, *f)
	if err != nil || !need {
		return nil, err
	}
	req, err := authorityRequest(snap.SheetID, *f, now)
	if err != nil {
		return nil, err
	}
	u := &unit{op: -1, order: orderAuthority, sheetID: snap.SheetID, reqs: []*sheets.Request{req}}
	u.measure()
	return u, nil
}

// settle copies each sent unit's outcome into its op result.
func (r *DispatchResult) settle(units []*unit) {
	for _, u := range units {
		if u.op < 0 {
			continue
		}
		res := &r.Ops[u.op]
		switch {
		case !u.sent:
			res.Status, res.Err = StatusNotSent, u.err
		case u.err == nil:
			res.Status = StatusApplied
		case u.err.Outcome == Terminal:
			res.Status, res.Reason, res.Err = StatusFailed, u.err.Code, u.err
		default:
			res.Status, res.Reason, res.Err = StatusUncertain, u.err.Code, u.err
		}
	}
}

func strayCounts(snaps map[string]*TabSnapshot) map[string]int {
	out := map[string]int{}
	for n, s := range snaps {
		if len(s.Strays) > 0 {
			out[n] = len(s.Strays)
		}
	}
	return out
}
