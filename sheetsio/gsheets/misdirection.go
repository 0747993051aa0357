package gsheets

import (
	"sort"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// rowCheck is what verifying an update's written row needs.
type rowCheck struct {
	spec   layout.TabSpec
	anchor string
	title  string
	cols   []int
	// next and hash are the row the update makes (its cells, their
	// hash); guard: planned on kept rows, the response must show exactly
	// that row (drift, knownrows.go).
	next  []any
	hash  string
	guard bool
}

// gridFieldsWritten is the field mask of a batchUpdate response: only the
// effective values of the written rows (responseRanges), by sheetId.
const gridFieldsWritten = "updatedSpreadsheet(sheets(properties(sheetId),data(startRow,rowData(values(effectiveValue)))))"

// finalRow is the 0-based row an update unit's cells are at once the whole
// chunk applied: the chunk's deletes (sent after every update) of rows
// above it on its tab move it up.
func finalRow(u *unit, c []*unit) int {
	row := u.row
	for _, d := range c {
		if d.order == orderDelete && d.sheetID == u.sheetID && d.row < u.row {
			row--
		}
	}
	return row
}

// responseRanges names the rows the chunk's updates wrote, as they are
// after the chunk: one A1 range per run of consecutive rows of a tab, the
// tab's columns only; and the whole header row of each tab a unit
// watches (headerWatch). ok is false when a tab's title is unknown (the
// response is then not requested and the writes are not verified).
func responseRanges(c []*unit) ([]string, bool) {
	type key struct {
		title string
		width int
	}
	rows := map[key][]int{}
	var out []string
	for _, u := range c {
		if u.header != nil && u.header.title != "" {
			out = append(out, u.header.rangeA1())
		}
		if u.check == nil {
			continue
		}
		if u.check.title == "" {
			return nil, false
		}
		k := key{u.check.title, len(u.check.spec.Columns)}
		rows[k] = append(rows[k], finalRow(u, c))
	}
	for k, rs := range rows {
		out = append(out, rowRuns(k.title, k.width, rs)...)
	}
	sort.Strings(out)
	return out, len(out) > 0
}

// rowRuns formats the runs of consecutive rows of rs (0-based) as ranges
// of columns A.. of width on tab title.
func rowRuns(title string, width int, rs []int) []string {
	sort.Ints(rs)
	var out []string
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] <= rs[j]+1 {
			j++
		}
		r := a1.Range{Sheet: title, HasSheet: true, StartRow: rs[i], EndRow: rs[j] + 1, StartCol: 0, EndCol: width}
		out = append(out, r.String())
		i = j + 1
	}
	return out
}

// verifyWritten checks, in the batchUpdate's response, that every update
// unit's row shows its anchor; a unit whose row shows another is marked
// misdirected. A response without the rows (a server that ignored the
// request) verifies nothing.
func verifyWritten(c []*unit, ss *sheets.Spreadsheet) {
	if ss == nil {
		return
	}
	grids := map[int64][][]cell.Observed{}
	for _, sh := range ss.Sheets {
		if sh != nil && sh.Properties != nil {
			grids[sh.Properties.SheetId] = observedRows(sh)
		}
	}
	for _, u := range c {
		if u.check == nil {
			continue
		}
		rows, ok := grids[u.sheetID]
		if !ok {
			continue
		}
		u.misdirected = u.check.verify(rows, finalRow(u, c))
		if u.misdirected == nil && u.check.guard {
			u.drifted = u.check.drift(rows, finalRow(u, c))
		}
	}
	for _, u := range c {
		if rows, ok := grids[u.sheetID]; ok && u.header != nil && u.header.title != "" {
			u.header.seen = []any{}
			if len(rows) > 0 {
				u.header.seen = headerValues(rows[0])
			}
		}
	}
}

// headerWatch is a tab's header row as a batchUpdate's own response
// showed it, after the write.
type headerWatch struct {
	title string // the tab's title ("" when unknown: not asked)
	seen  []any  // nil until a response showed it
}

// rangeA1 is the whole header row of the tab.
func (h *headerWatch) rangeA1() string {
	return a1.Range{Sheet: h.title, HasSheet: true, StartRow: 0, EndRow: 1, StartCol: 0, EndCol: a1.Open}.String()
}

// verify compares the anchor shown at row (0-based) with the intended one.
func (k *rowCheck) verify(rows [][]cell.Observed, row int) *sheetsio.Misdirection {
	var raw []cell.Observed
	if row < len(rows) {
		raw = rows[row]
	}
	got := newGridRow(k.spec, raw, row+1)
	if got.Anchor == k.anchor {
		return nil
	}
	values := make([]any, len(got.Cells))
	for i, o := range got.Cells {
		values[i] = o.Value
	}
	m := &sheetsio.Misdirection{SheetRow: row + 1, DisplacedAnchor: got.Anchor, RowHash: k.spec.RowHash(values)}
	for _, c := range k.cols {
		m.Columns = append(m.Columns, k.spec.Columns[c].Name)
	}
	return m
}
