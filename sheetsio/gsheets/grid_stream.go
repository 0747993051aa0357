package gsheets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// Grid reads (ReadGrid, ReadGridRows) decode their response as it
// streams, one row at a time, into the observed cells they keep: the
// generated client would read the whole body first and then hold every
// cell as a *sheets.CellData with two *sheets.ExtendedValue (several
// hundred bytes a cell), a peak of many times the tab's size for a
// whole-tab read (the safety full scan and the surplus-row cleanup).

// gridSheet is one sheet of a grid read, as decoded: its id, its merges
// and the observed cells of each row the response carried, by 0-based
// row index (nil: not carried, or refused as ReadGrid refuses it).
type gridSheet struct {
	id     int64
	merges []*sheets.GridRange
	rows   [][]cell.Observed
}

// observed flattens the sheet's rows and marks merges, as observedRows
// does for a *sheets.Sheet.
func (g *gridSheet) observed() [][]cell.Observed {
	for _, m := range g.merges {
		if m != nil {
			markMerged(g.rows, m)
		}
	}
	return g.rows
}

// getGridStream is spreadsheets.get with grid data of ranges (A1, whole
// tabs), fields gridFields, decoded as it streams (or not at all: the
// body digested into h is known, decodeKnown).
func (p *Provider) getGridStream(ctx context.Context, id string, ranges []string, h hash.Hash, known sheetsio.BodyDigest) (gridRead, error) {
	q := url.Values{"includeGridData": {"true"}, "fields": {gridFields}, "alt": {"json"}, "prettyPrint": {"false"}}
	q["ranges"] = ranges
	u := p.base + "v4/spreadsheets/" + url.PathEscape(id) + "?" + q.Encode()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return gridRead{}, err
	}
	return p.sendKnown(hr, h, known)
}

// getGridByFilterStream is spreadsheets.getByDataFilter (fields
// gridFields), decoded as it streams; want, when not nil, says which row
// indexes of a sheet to keep.
func (p *Provider) getGridByFilterStream(ctx context.Context, id string, req *sheets.GetSpreadsheetByDataFilterRequest,
	want func(sheetID int64, at int) bool) ([]*gridSheet, error) {
	hr, err := p.byFilterRequest(ctx, id, req)
	if err != nil {
		return nil, err
	}
	return p.doGrid(hr, want)
}

// getGridByFilterKnown is getGridByFilterStream digesting the body into
// h, decoded only when known is zero (decodeKnown).
func (p *Provider) getGridByFilterKnown(ctx context.Context, id string, req *sheets.GetSpreadsheetByDataFilterRequest,
	h hash.Hash, known sheetsio.BodyDigest) (gridRead, error) {
	hr, err := p.byFilterRequest(ctx, id, req)
	if err != nil {
		return gridRead{}, err
	}
	return p.sendKnown(hr, h, known)
}

// sendKnown sends a grid read and digests its response into h, decoding
// it only when known is zero (decodeKnown).
func (p *Provider) sendKnown(hr *http.Request, h hash.Hash, known sheetsio.BodyDigest) (gridRead, error) {
	res, err := p.send(hr)
	if err != nil {
		return gridRead{}, err
	}
	defer res.Body.Close()
	return decodeKnown(res.Body, h, known, nil)
}

// byFilterRequest is the spreadsheets.getByDataFilter request of req
// (fields gridFields).
func (p *Provider) byFilterRequest(ctx context.Context, id string, req *sheets.GetSpreadsheetByDataFilterRequest) (*http.Request, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	q := url.Values{"fields": {gridFields}, "alt": {"json"}, "prettyPrint": {"false"}}
	u := p.base + "v4/spreadsheets/" + url.PathEscape(id) + ":getByDataFilter?" + q.Encode()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	return hr, nil
}

// doGrid sends a grid read and decodes its response; a failure is the
// same *googleapi.Error the generated client returns.
func (p *Provider) doGrid(hr *http.Request, want func(int64, int) bool) ([]*gridSheet, error) {
	res, err := p.send(hr)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return decodeGrid(res.Body, want)
}

// send sends a grid read; a failure is the same *googleapi.Error the
// generated client returns (the body is closed then).
func (p *Provider) send(hr *http.Request) (*http.Response, error) {
	res, err := p.httpOf(hr.Context()).Do(hr)
	if err != nil {
		return nil, err
	}
	if err := googleapi.CheckResponse(res); err != nil {
		res.Body.Close()
		return nil, err
	}
	return res, nil
}

// decodeGrid decodes {"sheets": [{"properties": {"sheetId": …}, "merges":
// […], "data": [{"startRow": …, "rowData": [{"values": [CellData, …]},
// …]}, …]}, …]} in any key order; fields it does not use are skipped.
// Each row decodes as the generated client decodes it (sheets.RowData),
// then becomes observed cells at once.
func decodeGrid(r io.Reader, want func(int64, int) bool) ([]*gridSheet, error) {
	d := &valuesDecoder{dec: json.NewDecoder(r)}
	var out []*gridSheet
	err := d.object(func(key string) error {
		if key != "sheets" {
			return d.skip()
		}
		return d.array(func() error {
			g, err := d.gridSheet(want)
			if g != nil {
				out = append(out, g)
			}
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: grid response: %w", sheetsio.ErrReadUnavailable, err)
	}
	return out, nil
}

// gridData is one GridData block: its start row and its rows, relative.
type gridData struct {
	start int64
	rows  [][]cell.Observed
}

// gridSheet decodes one Sheet; a null sheet is nil.
func (d *valuesDecoder) gridSheet(want func(int64, int) bool) (*gridSheet, error) {
	g := &gridSheet{}
	var blocks []gridData
	var props *sheets.SheetProperties
	err := d.object(func(key string) error {
		switch key {
		case "properties":
			return d.dec.Decode(&props)
		case "merges":
			return d.dec.Decode(&g.merges)
		case "data":
			return d.array(func() error {
				b, err := d.gridData()
				blocks = append(blocks, b)
				return err
			})
		}
		return d.skip()
	})
	if err != nil || props == nil {
		return nil, err
	}
	g.id = props.SheetId
	for _, b := range blocks {
		g.place(b, want)
	}
	return g, nil
}

// place puts a block's rows at their index, as observedRows does: a
// block or row outside any possible grid is ignored.
func (g *gridSheet) place(b gridData, want func(int64, int) bool) {
	if b.start < 0 || b.start >= a1.MaxRows {
		return
	}
	for i, cells := range b.rows {
		at := int(b.start) + i
		if cells == nil || at >= a1.MaxRows || (want != nil && !want(g.id, at)) {
			continue
		}
		for len(g.rows) <= at {
			g.rows = append(g.rows, nil)
		}
		g.rows[at] = cells
	}
}

// gridData decodes one GridData block row by row.
func (d *valuesDecoder) gridData() (gridData, error) {
	var b gridData
	err := d.object(func(key string) error {
		switch key {
		case "startRow":
			return d.dec.Decode(&b.start)
		case "rowData":
			return d.array(func() error {
				var rd *sheets.RowData
				if err := d.dec.Decode(&rd); err != nil {
					return err
				}
				b.rows = append(b.rows, observedRow(rd))
				return nil
			})
		}
		return d.skip()
	})
	return b, err
}

// observedRow is one row's observed cells; nil for a null row or one
// wider than any grid (ignored, as observedRows ignores it). A row with
// no cells is an empty, non-nil slice: it was carried.
func observedRow(rd *sheets.RowData) []cell.Observed {
	if rd == nil || len(rd.Values) > a1.MaxColumns {
		return nil
	}
	cells := make([]cell.Observed, len(rd.Values))
	for j, cd := range rd.Values {
		cells[j] = observed(cd)
	}
	return cells
}
