package gsheets

import (
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The authority row publishes the writer's hash-chain head in its
// chain_head cell (Batch.Head), for a third party to pin. The cell rides
// in a dispatch's first batchUpdate as one more updateCells request (no
// request of its own). It is written whenever the cell does not show
// exactly the head — the one the dispatch's preflight read showed, or,
// for a blind append (no read), the one the Workbook's trust last read or
// wrote — whatever the cell says: blank, an older head, or anything a
// person typed, a SEQ:HASH past the log's head included (it is no head
// of the log, and the dispatch reports it: DispatchResult.HeadShown). It
// never moves back below a head this client wrote: one dispatcher sends
// one dispatch at a time and samples its head, from a log that only
// grows, before each, so the heads it sends rise in sending order; a
// deposed writer is stopped by the fence and BeforeWrite like its other
// writes. The fence never reads the cell.

// headColumn is the authority row's chain_head column (the fence cells
// are the ones before it).
func headColumn(spec layout.TabSpec) int { return spec.ColumnIndex(layout.AuthorityChainHead) }

// splitAuthorityRow splits an authority row into its fence cells and the
// head its chain_head cell publishes (zero unless it reads as SEQ:HASH).
func splitAuthorityRow(spec layout.TabSpec, cells []any) ([]any, sheetsio.ChainHead) {
	hc := headColumn(spec)
	if len(cells) <= hc {
		return cells, sheetsio.ChainHead{}
	}
	s, _ := cells[hc].(string)
	h, _ := sheetsio.ParseChainHead(s)
	return cells[:hc], h
}

// headUnit returns the unit writing b.Head into the authority row of
// sheetID unless shown, what the cell last showed this client, is exactly
// that head, or this client already wrote a higher one (wrote); nil too
// when the batch has no fence: a head is only published under the
// writer's authority.
func headUnit(b sheetsio.Batch, fenced bool, sheetID int64, shown sheetsio.ChainHead, wrote uint64) *unit {
	if b.Head == nil || !fenced || *b.Head == shown || b.Head.Seq < wrote {
		return nil
	}
	spec := authoritySpec()
	hc := headColumn(spec)
	rd := &sheets.RowData{Values: []*sheets.CellData{cellData(spec.Columns[hc], b.Head.String())}}
	u := &unit{op: -1, order: orderHead, sheetID: sheetID, reqs: []*sheets.Request{updateCellsRequest(sheetID, 1, hc, rd)}, head: b.Head}
	u.measure()
	return u
}

// withHead puts the head unit after the authority mirror, when the batch
// writes anything else (the head never costs a request of its own).
func withHead(units []*unit, h *unit) []*unit {
	if h == nil || len(units) == 0 {
		return units
	}
	at := 0
	if units[0].order == orderAuthority {
		at = 1
	}
	return append(units[:at], append([]*unit{h}, units[at:]...)...)
}

// noteHead records in the trust the head a sent batchUpdate wrote.
func noteHead(w *sheetsio.Workbook, units []*unit) {
	for _, u := range units {
		if u.head != nil && u.sent && u.err == nil {
			trustOf(w).wroteHead(*u.head)
		}
	}
}
