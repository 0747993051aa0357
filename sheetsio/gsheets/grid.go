package gsheets

import (
	"context"
	"hash"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"golang.org/x/text/unicode/norm"
	"google.golang.org/api/sheets/v4"
)

const gridFields = "sheets(properties(sheetId),merges,data(startRow,rowData(values(userEnteredValue,effectiveValue))))"

// ReadGrid reads the named logical tabs with grid data: one enumeration and
// one spreadsheets.get (includeGridData, fields mask) for any number of tabs.
// A formula the system never writes, an error value or a merged cell shows
// up in cell.Observed so the caller quarantines it instead of importing its
// result (C03). Errors: as Snapshot.
func (p *Provider) ReadGrid(ctx context.Context, w *sheetsio.Workbook, tabs ...string) (map[string]*sheetsio.GridSnapshot, error) {
	if err := knownTabs(w, tabs); err != nil {
		return nil, err
	}
	out, err := p.readGridEnumerated(ctx, w, sheetsio.BodyDigest{}, tabs)
	distrustBlocked(w, out)
	return out, err
}

// distrustBlocked forgets the trust of every tab a grid read found
// unusable (missing, its header drifted or gone with the rest of the tab):
// the next append to it reads first (dispatch) instead of landing blind
// where the header belongs, on a tab a person cleared.
func distrustBlocked(w *sheetsio.Workbook, out map[string]*sheetsio.GridSnapshot) {
	var tabs []string
	for t, g := range out {
		if g != nil && g.Err != nil {
			tabs = append(tabs, t)
		}
	}
	if len(tabs) > 0 {
		trustOf(w).distrust(tabs...)
	}
}

// ReadGridKnown is ReadGrid with the read digested (GridSnapshot.Body):
// a read that digests to known is not decoded, its tabs Undecoded; one
// that does not is read again and decoded (grid_known.go). It is one
// request by sheetId when the workbook knows every tab's, else ReadGrid's
// enumeration and read. Errors: as Snapshot.
func (p *Provider) ReadGridKnown(ctx context.Context, w *sheetsio.Workbook, known sheetsio.BodyDigest, tabs ...string) (map[string]*sheetsio.GridSnapshot, error) {
	if err := knownTabs(w, tabs); err != nil {
		return nil, err
	}
	out, ok, err := p.readGridByIDKnown(ctx, w, known, tabs)
	if !ok && err == nil {
		out, err = p.readGridEnumerated(ctx, w, known, tabs)
	}
	distrustBlocked(w, out)
	return out, err
}

// knownTabs refuses a tab the workbook's schema does not have.
func knownTabs(w *sheetsio.Workbook, tabs []string) error {
	for _, t := range tabs {
		if _, ok := w.Schema().Tab(t); !ok {
			return newErr(sheetsio.CodeInvalidBatch, nil, "unknown tab %s", t)
		}
	}
	return nil
}

// readGridEnumerated is ReadGridKnown by an enumeration of the sheets
// (which rebinds the workbook's sheetIds) and one read by title.
func (p *Provider) readGridEnumerated(ctx context.Context, w *sheetsio.Workbook, known sheetsio.BodyDigest, tabs []string) (map[string]*sheetsio.GridSnapshot, error) {
	infos, err := p.enumerate(ctx, w)
	if err != nil {
		return nil, err
	}
	resolved := resolve(w, infos)
	out := map[string]*sheetsio.GridSnapshot{}
	var read, ranges, titles []string
	var ids []int64
	for _, t := range tabs {
		s, ok := resolved[t]
		out[t] = &sheetsio.GridSnapshot{Tab: t, SheetID: s.ID}
		if !ok {
			out[t].Err = newErr(sheetsio.CodeTabMissing, nil, "tab %s is not in the spreadsheet", t)
			continue
		}
		read, ranges, titles, ids = append(read, t), append(ranges, a1.QuoteSheet(s.Title)), append(titles, s.Title), append(ids, s.ID)
	}
	if len(ranges) == 0 {
		return out, nil
	}
	digest := func() hash.Hash { return resolvedDigest(read, ids, titles) }
	g, err := readDecodingChanged(known, func(known sheetsio.BodyDigest) (gridRead, error) {
		return p.getGrid(ctx, w, ranges, digest, known)
	})
	if err != nil {
		return nil, err
	}
	markRead(out, read, g)
	if g.decoded {
		fillGrids(w.Schema(), out, g.sheets)
	}
	return out, nil
}

// getGrid is one paced, retried grid read of ranges; each attempt
// digests from a fresh digest.
func (p *Provider) getGrid(ctx context.Context, w *sheetsio.Workbook, ranges []string, digest func() hash.Hash, known sheetsio.BodyDigest) (gridRead, error) {
	var g gridRead
	err := p.read(ctx, "grid_get", func(ctx context.Context) error {
		var err error
		g, err = p.getGridStream(ctx, w.SpreadsheetID(), ranges, digest(), known)
		return err
	})
	return g, err
}

func fillGrids(schema *layout.Schema, out map[string]*sheetsio.GridSnapshot, ss []*gridSheet) {
	for _, g := range out {
		if g.Err != nil {
			continue
		}
		spec, _ := schema.Tab(g.Tab)
		for _, sh := range ss {
			if sh.id == g.SheetID {
				fillGrid(g, spec, sh.observed())
			}
		}
	}
}

// fillGrid validates the header (rows[0]) and adds a GridRow for every
// other row; a tab whose cells are all blank is Empty.
func fillGrid(g *sheetsio.GridSnapshot, spec layout.TabSpec, rows [][]cell.Observed) {
	var first []cell.Observed
	if len(rows) > 0 {
		first = rows[0]
	}
	g.Empty = blankGrid(rows)
	rep, err := sheetsio.CheckHeader(spec, headerValues(first))
	if err != nil {
		g.Err = err
		return
	}
	g.Header = rep
	if len(rows) > 1 {
		g.Rows = make([]sheetsio.GridRow, 0, len(rows)-1)
	}
	for i := 1; i < len(rows); i++ {
		g.Rows = append(g.Rows, newGridRow(spec, rows[i], i+1))
		rows[i] = nil // the row's cells are copied: let them go as the rows are filled
	}
}

// blankGrid reports whether no cell of rows holds a value, a formula or
// an error value (a values read of such a tab returns nothing).
func blankGrid(rows [][]cell.Observed) bool {
	for _, r := range rows {
		for _, o := range r {
			s, text := o.Value.(string)
			if blank := o.Value == nil || text && s == ""; !blank || o.Formula != "" || o.ErrorType != "" {
				return false
			}
		}
	}
	return true
}

// headerValues is the values of an observed header row.
func headerValues(row []cell.Observed) []any {
	out := make([]any, 0, len(row))
	for _, o := range row {
		out = append(out, o.Value)
	}
	return out
}

// newGridRow pads or cuts observed cells to the header width and reads the
// row's anchor.
func newGridRow(spec layout.TabSpec, raw []cell.Observed, sheetRow int) sheetsio.GridRow {
	cells := make([]cell.Observed, len(spec.Columns))
	copy(cells, raw)
	return sheetsio.GridRow{Anchor: gridAnchor(spec, cells), Cells: cells, SheetRow: sheetRow}
}

// observedRows flattens a sheet's grid data (from row 1) and marks merges.
// Offsets outside any possible grid (negative, or beyond a1.MaxRows rows /
// a1.MaxColumns columns) can only come from a broken or hostile server; they
// are ignored rather than allowed to panic or allocate without bound.
func observedRows(sh *sheets.Sheet) [][]cell.Observed {
	var rows [][]cell.Observed
	for _, d := range sh.Data {
		if d == nil || d.StartRow < 0 || d.StartRow >= a1.MaxRows {
			continue
		}
		for i, rd := range d.RowData {
			at := int(d.StartRow) + i
			if rd == nil || at >= a1.MaxRows || len(rd.Values) > a1.MaxColumns {
				continue
			}
			for len(rows) <= at {
				rows = append(rows, nil)
			}
			for _, cd := range rd.Values {
				rows[at] = append(rows[at], observed(cd))
			}
		}
	}
	for _, m := range sh.Merges {
		if m != nil {
			markMerged(rows, m)
		}
	}
	return rows
}

func observed(cd *sheets.CellData) cell.Observed {
	var o cell.Observed
	if cd == nil {
		return o
	}
	if u := cd.UserEnteredValue; u != nil && u.FormulaValue != nil {
		o.Formula = *u.FormulaValue
	}
	if ev := cd.EffectiveValue; ev != nil {
		switch {
		case ev.ErrorValue != nil:
			o.ErrorType = ev.ErrorValue.Type
		case ev.StringValue != nil:
			o.Value = *ev.StringValue
		case ev.NumberValue != nil:
			o.Value = *ev.NumberValue
		case ev.BoolValue != nil:
			o.Value = *ev.BoolValue
		}
	}
	return o
}

func markMerged(rows [][]cell.Observed, m *sheets.GridRange) {
	for r := int(max(m.StartRowIndex, 0)); r < int(min(m.EndRowIndex, int64(len(rows)))); r++ {
		rows[r] = mergedCells(rows[r], m)
	}
}

// mergedCells marks the cells of one row that merge m covers (padding the
// row to reach them) and returns the row.
func mergedCells(row []cell.Observed, m *sheets.GridRange) []cell.Observed {
	for c := int(max(m.StartColumnIndex, 0)); c < int(min(m.EndColumnIndex, a1.MaxColumns)); c++ {
		for len(row) <= c {
			row = append(row, cell.Observed{})
		}
		row[c].Merged = true
	}
	return row
}

func gridAnchor(spec layout.TabSpec, cells []cell.Observed) string {
	if spec.Anchor < 0 || cells[spec.Anchor].Formula != "" {
		return ""
	}
	s, _ := cells[spec.Anchor].Value.(string)
	return norm.NFC.String(s)
}
