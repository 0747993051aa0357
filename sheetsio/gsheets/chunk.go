package gsheets

import (
	"context"
	"slices"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"google.golang.org/api/sheets/v4"
)

// chunk splits sorted units into batchUpdate bodies of at most maxBytes
// of units (unit.bytes; callers pass bodyLimit) and maxRequests
// requests, keeping order. Appended rows are no requests of their own:
// a chunk has one appendCells per tab it appends to, and one for its
// receipt rows. A unit is never split; one larger than the limits is sent
// alone.
func chunk(units []*unit, maxBytes, maxRequests int) [][]*unit {
	var out [][]*unit
	var cur []*unit
	bytes, reqs := 0, 0
	in := chunkSheets{}
	for _, u := range units {
		n := in.requests(u)
		if len(cur) > 0 && (bytes+u.bytes > maxBytes || reqs+n > maxRequests) {
			out, cur, bytes, reqs = append(out, cur), nil, 0, 0
			in = chunkSheets{}
			n = in.requests(u)
		}
		in.add(u)
		cur = append(cur, u)
		bytes, reqs = bytes+u.bytes, reqs+n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// chunkSheets are the appendCells requests a chunk has so far: the
// sheets it appends rows to, and whether it has receipt rows.
type chunkSheets struct {
	sheets   map[int64]bool
	receipts bool
}

// requests is how many requests u adds to the chunk: its own, and an
// appendCells for each sheet (or the receipt rows) the chunk has none for.
func (c *chunkSheets) requests(u *unit) int {
	n := len(u.reqs)
	if u.receipt != nil && !c.receipts {
		n++
	}
	for i, a := range u.appends {
		if !c.sheets[a.sheetID] && !slices.ContainsFunc(u.appends[:i], func(b appendRow) bool { return b.sheetID == a.sheetID }) {
			n++
		}
	}
	return n
}

func (c *chunkSheets) add(u *unit) {
	c.receipts = c.receipts || u.receipt != nil
	for _, a := range u.appends {
		if c.sheets == nil {
			c.sheets = map[int64]bool{}
		}
		c.sheets[a.sheetID] = true
	}
}

// assemble builds one batchUpdate's requests: every unit's own requests in
// order, then one appendCells per target sheet carrying all its rows, the
// receipt rows of the units that carry receipts last. The appended rows
// are in raw (their JSON, encoded when planned), the receipt rows in
// their request's Rows. Errors: as receiptMeta.rows.
func assemble(units []*unit, rm receiptMeta) ([]*sheets.Request, rawRows, error) {
	var reqs []*sheets.Request
	rows := map[int64][][]byte{}
	var sheetsOrder []int64
	seen := func(id int64) {
		if _, ok := rows[id]; !ok {
			sheetsOrder = append(sheetsOrder, id)
			rows[id] = nil
		}
	}
	var entries []sheetsio.ReceiptEntry
	for _, u := range units {
		reqs = append(reqs, u.reqs...)
		for _, a := range u.appends {
			seen(a.sheetID)
			rows[a.sheetID] = append(rows[a.sheetID], a.js)
		}
		if u.receipt != nil {
			entries = append(entries, *u.receipt)
		}
	}
	receipts, err := rm.rows(entries)
	if err != nil {
		return nil, nil, err
	}
	if len(receipts) > 0 {
		seen(rm.sheetID)
	}
	raw := rawRows{}
	for _, id := range sheetsOrder {
		req := appendCellsRequest(id, nil)
		if id == rm.sheetID {
			req.AppendCells.Rows = receipts
		}
		raw[req.AppendCells] = rows[id]
		reqs = append(reqs, req)
	}
	return reqs, raw, nil
}

// sendChunks sends chunks in order and stops at the first that is not
// applied (later chunks stay unsent: their preflight may be stale).
// Chunks of appended rows only go out at once instead (sendWaves, atOnce).
func (p *Provider) sendChunks(ctx context.Context, w *sheetsio.Workbook, chunks [][]*unit, rm receiptMeta) {
	if atOnce(chunks) {
		p.sendWaves(ctx, w, chunks, rm)
		return
	}
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
	reqs, raw, err := assemble(c, rm)
	if err == nil && rm.beforeWrite != nil {
		err = rm.beforeWrite()
	}
	var werr *sheetsio.WriteError
	if err != nil {
		werr = &sheetsio.WriteError{Outcome: sheetsio.NotSent, Code: sheetsio.WriteNotSent, Err: err}
	} else {
		werr = p.sendBatch(ctx, w, reqs, raw, c, rm.check)
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
// retried; its body encoded in one pass with the rows of raw, see
// postBatchUpdate). When the chunk updates rows, the same request asks for those
// rows in its atomic response (responseRanges, effective values only) and
// each update is verified against it (C06, see Misdirection).
//
// A dispatch without a read (chk set: a blind append, see blindCheck, or
// updates on kept rows, knownrows.go) asks also for the header rows and
// the authority row, verifies them and refreshes or forgets the
// Workbook's trust.
func (p *Provider) sendBatch(ctx context.Context, w *sheetsio.Workbook, reqs []*sheets.Request, raw rawRows, c []*unit, chk *blindCheck) *sheetsio.WriteError {
	countChunk(ctx)
	body := &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}
	ranges, verify := responseRanges(c)
	if chk != nil {
		ranges, verify = append(chk.ranges(), ranges...), true
	}
	if verify {
		body.IncludeSpreadsheetInResponse, body.ResponseIncludeGridData, body.ResponseRanges = true, true, ranges
	}
	var unverified error
	werr := p.write(ctx, "batch_update", func(ctx context.Context) error {
		fields := ""
		if verify {
			fields = gridFieldsWritten
		}
		resp, err := p.postBatchUpdate(ctx, w.SpreadsheetID(), body, raw, fields, bodySize(c))
		switch {
		case err != nil || !verify:
		case chk != nil:
			unverified = chk.verify(resp.UpdatedSpreadsheet)
			verifyWritten(c, resp.UpdatedSpreadsheet) // updates on kept rows
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

// bodySize is a first capacity for the body of units c: their sizes and
// room for the request's own members.
func bodySize(c []*unit) int {
	n := 1024
	for _, u := range c {
		n += u.bytes
	}
	return n
}
