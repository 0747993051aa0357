package gsheets

import (
	"context"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"google.golang.org/api/sheets/v4"
)

// parseAuthority decodes row 2 of the authority tab strictly; a malformed
// row is CodeAuthorityInvalid (the dispatch fails closed on it).
func parseAuthority(snap *sheetsio.TabSnapshot) (sheetsio.Authority, error) {
	if snap.Err != nil {
		return sheetsio.Authority{}, snap.Err
	}
	if len(snap.Rows) == 0 {
		return sheetsio.Authority{}, nil
	}
	spec := authoritySpec()
	fenceCells, head := splitAuthorityRow(spec, snap.Rows[0].Cells)
	if cell.VisibleHash(fenceCells) == cell.VisibleHash(nil) {
		return sheetsio.Authority{Head: head}, nil
	}
	vals, err := cell.DecodeRow(spec.Columns[:len(fenceCells)], fenceCells)
	if err != nil {
		return sheetsio.Authority{}, newErr(sheetsio.CodeAuthorityInvalid, err, "authority row")
	}
	a := sheetsio.Authority{Present: true, Head: head}
	a.StoreID, _ = vals[0].(string)
	a.Epoch, _ = vals[1].(int64)
	a.Token, _ = vals[2].(string)
	a.UpdatedAt, _ = vals[3].(time.Time)
	return a, nil
}

func authoritySpec() layout.TabSpec {
	s, _ := layout.NewSchema()
	spec, _ := s.Tab(layout.AuthorityTab)
	return spec
}

// checkFence decides whether f may mutate a spreadsheet whose authority is
// a: it returns mirror=true when the authority row must be (re)written with
// f, or an *Error CodeAuthorityForeign / CodeAuthorityStale.
func checkFence(a sheetsio.Authority, f sheetsio.Fence) (mirror bool, err error) {
	switch {
	case !a.Present:
		return true, nil
	case a.StoreID != f.StoreID:
		return false, newErr(sheetsio.CodeAuthorityForeign, nil, "the spreadsheet belongs to another store")
	case a.Epoch > f.Epoch, a.Epoch == f.Epoch && a.Token != f.Token:
		return false, newErr(sheetsio.CodeAuthorityStale, nil, "remote authority epoch %d is newer than or fences writer epoch %d", a.Epoch, f.Epoch)
	}
	return a.Epoch < f.Epoch, nil
}

// authorityRequest overwrites the fence cells of authority row 2 with f
// (the chain_head cell after them is left as it is).
func authorityRequest(sheetID int64, f sheetsio.Fence, now time.Time) (*sheets.Request, error) {
	spec := authoritySpec()
	enc, err := cell.EncodeRow(spec.Columns[:headColumn(spec)], []any{f.StoreID, f.Epoch, f.Token, now})
	if err != nil {
		return nil, newErr(sheetsio.CodeInvalidBatch, err, "fence")
	}
	return updateCellsRequest(sheetID, 1, 0, rowData(spec, enc)), nil
}

// ReadAuthority reads the authority row (one enumeration + one batchGet).
// Errors: read errors, CodeTabMissing / CodeHeaderDrift for the tab,
// CodeAuthorityInvalid for a malformed row.
func (p *Provider) ReadAuthority(ctx context.Context, w *sheetsio.Workbook) (sheetsio.Authority, error) {
	snaps, err := p.Snapshot(ctx, w, layout.AuthorityTab)
	if err != nil {
		return sheetsio.Authority{}, err
	}
	return parseAuthority(snaps[layout.AuthorityTab])
}

// WriteAuthority unconditionally writes f into the authority row with one
// batchUpdate addressed by sheetId (it needs the tab bound, e.g. by
// Provision). Use it when a writer takes over; Dispatch mirrors the fence
// itself. A write that was applied counts as a verification of f from
// when it started (trust.go), as a read that showed f would: the first
// appends after a claim may go blind, their own response checking the
// authority again. Errors: CodeTabMissing when the tab is unbound;
// otherwise a *WriteError (Uncertain or Terminal).
func (p *Provider) WriteAuthority(ctx context.Context, w *sheetsio.Workbook, f sheetsio.Fence) error {
	id, ok := w.SheetID(layout.AuthorityTab)
	if !ok {
		return newErr(sheetsio.CodeTabMissing, nil, "authority tab not bound; run Provision")
	}
	now := p.cfg.Now()
	req, err := authorityRequest(id, f, now)
	if err != nil {
		return err
	}
	if werr := p.sendBatch(ctx, w, []*sheets.Request{req}, nil, nil, nil); werr != nil {
		return werr
	}
	trustOf(w).trustFence(f, now)
	return nil
}

// refreshed reports whether units' authority mirror, if any, was written:
// the fence cells show the writer's fence with the dispatch's time.
func refreshed(units []*unit) bool {
	for _, u := range units {
		if u.op == -1 && u.order == orderAuthority {
			return u.sent && u.err == nil
		}
	}
	return false
}
