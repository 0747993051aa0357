package gsheets

import (
	"context"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"google.golang.org/api/sheets/v4"
)

// chunk splits sorted units into batchUpdate bodies of at most maxBytes
// (estimated JSON size) and maxRequests requests, keeping order. A unit is
// never split; one larger than the limits is sent alone.
func chunk(units []*unit, maxBytes, maxRequests int) [][]*unit {
	var out [][]*unit
	var cur []*unit
	bytes, reqs := 0, 0
	for _, u := range units {
		if len(cur) > 0 && (bytes+u.bytes > maxBytes || reqs+u.requestCount() > maxRequests) {
			out, cur, bytes, reqs = append(out, cur), nil, 0, 0
		}
		cur = append(cur, u)
		bytes, reqs = bytes+u.bytes, reqs+u.requestCount()
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// assemble builds one batchUpdate's requests: every unit's own requests in
// order, then one appendCells per target sheet carrying all its rows, the
// receipt rows of the units that carry receipts last. Errors: as
// receiptMeta.rows.
func assemble(units []*unit, rm receiptMeta) ([]*sheets.Request, error) {
	var reqs []*sheets.Request
	rows := map[int64][]*sheets.RowData{}
	var sheetsOrder []int64
	add := func(id int64, rd ...*sheets.RowData) {
		if _, seen := rows[id]; !seen {
			sheetsOrder = append(sheetsOrder, id)
		}
		rows[id] = append(rows[id], rd...)
	}
	var lines []string
	for _, u := range units {
		reqs = append(reqs, u.reqs...)
		for _, a := range u.appends {
			add(a.sheetID, a.row)
		}
		if u.receipt != "" {
			lines = append(lines, u.receipt)
		}
	}
	receipts, err := rm.rows(lines)
	if err != nil {
		return nil, err
	}
	if len(receipts) > 0 {
		add(rm.sheetID, receipts...)
	}
	for _, id := range sheetsOrder {
		reqs = append(reqs, appendCellsRequest(id, rows[id]))
	}
	return reqs, nil
}

// sendChunks sends chunks in order and stops at the first that is not
// applied (later chunks stay unsent: their preflight may be stale).
func (p *Provider) sendChunks(ctx context.Context, w *sheetsio.Workbook, chunks [][]*unit, rm receiptMeta) {
	for _, c := range chunks {
		if !p.sendSplitting(ctx, w, c, rm) {
			return
		}
	}
}

// sendSplitting sends one chunk; a size rejection (413 or a size-related
// 400: nothing applied) splits it in halves sent in order, never resending
// the same body (C09). It records each unit's outcome and reports success.
func (p *Provider) sendSplitting(ctx context.Context, w *sheetsio.Workbook, c []*unit, rm receiptMeta) bool {
	reqs, err := assemble(c, rm)
	if err == nil && rm.beforeWrite != nil {
		err = rm.beforeWrite()
	}
	var werr *sheetsio.WriteError
	if err != nil {
		werr = &sheetsio.WriteError{Outcome: sheetsio.NotSent, Code: sheetsio.WriteNotSent, Err: err}
	} else {
		werr = p.sendBatch(ctx, w, reqs, c, rm.check)
	}
	if werr != nil && werr.Code == sheetsio.WritePayloadTooLarge && len(c) > 1 {
		p.logger().Info("sheets batch split after size rejection", "units", len(c))
		h := len(c) / 2
		return p.sendSplitting(ctx, w, c[:h], rm) && p.sendSplitting(ctx, w, c[h:], rm)
	}
	if werr != nil && werr.Code == sheetsio.CodeSpreadsheetCapacity {
		w.GridGrew(sheetsio.MaxSpreadsheetCells) // the grid grew past what was read: the next dispatch reads it again
	}
	for _, u := range c {
		u.sent = werr == nil || werr.Outcome != sheetsio.NotSent
		u.err = werr
	}
	return werr == nil
}

// sendBatch sends one spreadsheets.batchUpdate (write class, never
// retried). When the chunk updates rows, the same request asks for those
// rows in its atomic response (responseRanges, effective values only) and
// each update is verified against it (C06, see Misdirection).
//
// A blind append (chk set, see blindCheck) asks instead for the header
// rows and the authority row, verifies them and refreshes or forgets the
// Workbook's trust.
func (p *Provider) sendBatch(ctx context.Context, w *sheetsio.Workbook, reqs []*sheets.Request, c []*unit, chk *blindCheck) *sheetsio.WriteError {
	countChunk(ctx)
	body := &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}
	ranges, verify := responseRanges(c)
	if chk != nil {
		ranges, verify = chk.ranges(), true
	}
	if verify {
		body.IncludeSpreadsheetInResponse, body.ResponseIncludeGridData, body.ResponseRanges = true, true, ranges
	}
	var unverified error
	werr := p.write(ctx, "batch_update", func(ctx context.Context) error {
		call := p.svcOf(ctx).Spreadsheets.BatchUpdate(w.SpreadsheetID(), body).Context(ctx)
		if verify {
			call = call.Fields(gridFieldsWritten)
		}
		resp, err := call.Do()
		switch {
		case err != nil || !verify:
		case chk != nil:
			unverified = chk.verify(resp.UpdatedSpreadsheet)
		default:
			verifyWritten(c, resp.UpdatedSpreadsheet)
		}
		return err
	})
	if chk == nil {
		return werr
	}
	werr = chk.blindOutcome(werr, unverified)
	chk.settleTrust(w, werr, p.cfg.Now())
	return werr
}
