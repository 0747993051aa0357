package gsheets

import (
	"context"
	"slices"
	"sync"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Bodies of new rows go out at once.
//
// A dispatch whose batchUpdate bodies (chunks) carry only appended rows
// with their receipts, and at most the chain head and a refresh of an
// authority its read showed exactly (atOnce), sends them in waves: as many
// at once as the write budget lets start now, at least one. Each body is
// what it is when sent alone: its own atomic batchUpdate with its own
// receipt rows (assemble), Batch.BeforeWrite asked right before it, fenced
// as the dispatch is (a blind append's response verifies the authority
// and the headers of each body; a read dispatch sends under the authority
// its read showed). A wave that is not applied whole leaves the later
// bodies unsent, as the one-by-one order does after a body that is not.
//
// No row gets two writers: the ops of a dispatch target distinct rows (the
// planner refuses a second op of one row binding, and a claim never holds
// two unsettled effects of one row, I07); an op is one unit and a unit is
// never split across bodies, so each row is in exactly one body. An
// appendCells addresses no row position: Sheets puts a body's rows after
// the tab's last row when it applies that body, atomically, so bodies
// applied in either order neither overwrite each other nor move a row
// another request addresses. Updates, deletes, cell notes and sweeps do
// address rows (at the preflight's positions, which a delete moves), and
// an authority mirror that takes over or raises the epoch must land before
// the rows it fences: a dispatch with any of them sends its bodies one
// after another (sendChunks).
//
// A row's effects keep their order (I07): the dispatch returns, and its
// effects settle, only after every body answered, so no later effect of a
// row is claimable while the body carrying its append is out.
//
// What may differ from one-by-one sending is only the order of the rows
// in the tab: the bodies' rows land in the order Sheets applies them.
// Every op finds its row by anchor, never by position, and an append
// drops the tab's kept rows (keepWritten).

// bodies cuts a dispatch's units into batchUpdate bodies (chunk). Units
// of appended rows only, which go out at once (sendWaves), are cut into
// as many bodies as the limits need, of about one size each, so a pass's
// rows take about the time of one body: not a full body and a remainder.
// A pass of new rows of at least two spreadBytes goes out as two bodies
// even below the limit while the write budget lets both start now
// (headroom, the provider's write headroom): the emulator's model of
// Google spends a time per written cell, so there two half bodies side by
// side take about half the time of one (whether Google overlaps two
// batchUpdates of one spreadsheet is not verified). That spends a write
// the budget holds unused, never one it must wait for; below that the
// cut adds no request.
func (p *Provider) bodies(units []*unit, headroom int) [][]*unit {
	limit := bodyLimit(p.cfg.MaxBatchBytes)
	chunks := chunk(units, limit, p.cfg.MaxBatchRequests)
	if !appendsOnly(units) {
		return chunks
	}
	total, largest := 0, 0
	for _, u := range units {
		total, largest = total+u.bytes, max(largest, u.bytes)
	}
	n := max(len(chunks), min(maxSpread, headroom, total/spreadBytes))
	if n < 2 {
		return chunks
	}
	if even := chunk(units, min(limit, (total+n-1)/n+largest), p.cfg.MaxBatchRequests); len(even) == n {
		return even
	}
	return chunks
}

// maxSpread is how many bodies a pass of new rows below the body limit is
// cut into at most (bodies): two. More bodies than two at once spend the
// budget's stored writes on one pass, and the next pass then waits for its
// write's turn (measured on 2026-12-04, bench/README.md "bodies of new
// rows sent at once").
const maxSpread = 2

// spreadBytes is the least each body of a pass of new rows cut below the
// limit carries (bytes of units): about 600 city rows, 0.12 s of Google's
// per-cell time, on the scale of a request's own 0.15 s.
const spreadBytes = 256 << 10

// atOnce reports whether a dispatch's chunks may go out at once: more than
// one, each of appended rows only (appendOnly).
func atOnce(chunks [][]*unit) bool {
	if len(chunks) < 2 {
		return false
	}
	for _, c := range chunks {
		if !appendsOnly(c) {
			return false
		}
	}
	return true
}

// appendsOnly reports whether every unit is appendOnly.
func appendsOnly(units []*unit) bool {
	for _, u := range units {
		if !appendOnly(u) {
			return false
		}
	}
	return true
}

// appendOnly reports whether u writes no cell at a row position: an
// appended row with its receipt, the chain head, or a refresh of the
// authority row the read showed exactly.
func appendOnly(u *unit) bool {
	switch u.order {
	case orderAppend:
		return len(u.reqs) == 0 && u.check == nil && u.header == nil
	case orderHead:
		return true
	case orderAuthority:
		return u.refresh
	}
	return false
}

// sendWaves sends chunks in waves of as many as the write budget lets
// start now (at least one), each chunk as sendSplitting sends it alone; a
// wave not applied whole leaves the later chunks unsent.
func (p *Provider) sendWaves(ctx context.Context, w *sheetsio.Workbook, chunks [][]*unit, rm receiptMeta) {
	for len(chunks) > 0 {
		n := min(len(chunks), max(1, p.headroom(classWrite)))
		applied := make([]bool, n)
		var wg sync.WaitGroup
		for i, c := range chunks[:n] {
			wg.Go(func() { applied[i] = p.sendSplitting(ctx, w, c, rm) })
		}
		wg.Wait()
		if slices.Contains(applied, false) {
			return
		}
		chunks = chunks[n:]
	}
}
