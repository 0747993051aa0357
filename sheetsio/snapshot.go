package sheetsio

import (
	"context"
	"slices"

	"golang.org/x/text/unicode/norm"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Row is one data row (below the header) as read with UNFORMATTED_VALUE +
// SERIAL_NUMBER. Cells are the raw values cut/padded to the header width
// (C04); Anchor is the NFC text of the anchor cell ("" if blank, not text, or
// the tab has no anchor); Hash is the tab's guard hash, layout.TabSpec.RowHash(Cells). SheetRow is the
// 1-based row number at read time: informational only, never an identity.
type Row struct {
	Anchor   string
	Cells    []any
	Hash     string
	SheetRow int
}

// TabSnapshot is one tab read in full. When Err is non-nil (a *Error with
// CodeHeaderDrift wrapping *layout.HeaderError, or CodeTabMissing) the tab is
// blocked and Rows is empty. Empty is true when the tab returned no values
// at all. Strays lists non-blank cells beyond the header width (ignored).
type TabSnapshot struct {
	Tab     string
	SheetID int64
	Header  layout.HeaderReport
	Err     error
	Empty   bool
	Rows    []Row
	Strays  []layout.Stray
	anchors anchorIndex
	// title is the tab's title as this read saw it ("" when unknown): the
	// dispatch names the rows it writes by it in responseRanges.
	title string
	// partial: only the header and the anchor column were read (a
	// dispatch preflight of appends): Rows is empty, anchors maps to sheet
	// row numbers, and Find returns rows with Anchor and SheetRow only.
	partial bool
	// Digested: the read's RowCheck certified the tab as it streamed
	// (SnapshotChecked), so no row was decoded: Rows, Strays and the
	// anchor index are empty; Header is set.
	Digested bool
}

// Find returns the rows whose anchor is anchor (normally one; more than one
// means a duplicate anchor, I16).
func (t *TabSnapshot) Find(anchor string) []Row {
	idx := t.anchors.get(norm.NFC.String(anchor))
	out := make([]Row, len(idx))
	for i, j := range idx {
		if t.partial {
			out[i] = Row{Anchor: norm.NFC.String(anchor), SheetRow: j}
			continue
		}
		out[i] = t.Rows[j]
	}
	return out
}

// NewTabSnapshot is a full read of tab showing rows, with its anchor
// index (for decisions over snapshots built outside a read, e.g. tests).
func NewTabSnapshot(tab string, rows []Row) *TabSnapshot {
	t := &TabSnapshot{Tab: tab, Rows: rows, anchors: newAnchorIndex(len(rows))}
	for i := range rows {
		if rows[i].Anchor != "" {
			t.anchors.add(rows[i].Anchor, i)
		}
	}
	return t
}

// Shown returns the index in Rows of the first row whose anchor is anchor
// and how many rows show it (n = 0: none, first = -1). anchor must be NFC
// (as Row.Anchor is). For a full read only: a partial read has no Rows.
func (t *TabSnapshot) Shown(anchor string) (first, n int) {
	if pos, ok := t.anchors.one[anchor]; ok {
		return pos, 1
	}
	if pos := t.anchors.more[anchor]; len(pos) > 0 {
		return pos[0], len(pos)
	}
	return -1, 0
}

// Snapshot reads the named logical tabs with one tab enumeration and one
// values.batchGet (two read requests for any number of tabs). Errors are
// read errors (*Error: CodeReadUnavailable, CodeReadRejected,
// CodePermissionDenied, CodeSpreadsheetNotFound) or CodeInvalidBatch for a
// tab name the schema does not declare; per-tab problems are in
// TabSnapshot.Err.
func (p *Provider) Snapshot(ctx context.Context, w *Workbook, tabs ...string) (map[string]*TabSnapshot, error) {
	for _, t := range tabs {
		if _, ok := w.schema.Tab(t); !ok {
			return nil, newErr(CodeInvalidBatch, nil, "unknown tab %s", t)
		}
	}
	infos, err := p.enumerate(ctx, w)
	if err != nil {
		return nil, err
	}
	return p.readTabs(ctx, w, w.resolve(infos), tabs)
}

// readTabs reads every tab in names that resolved to a sheet with a single
// values.batchGet; unresolved tabs get CodeTabMissing. Tabs listed in
// headerOnly are read (and validated) through their header row only.
func (p *Provider) readTabs(ctx context.Context, w *Workbook, resolved map[string]sheetInfo, names []string, headerOnly ...string) (map[string]*TabSnapshot, error) {
	out := map[string]*TabSnapshot{}
	var ranges, order []string
	for _, n := range names {
		s, ok := resolved[n]
		if !ok {
			out[n] = &TabSnapshot{Tab: n, Err: newErr(CodeTabMissing, nil, "tab %s is not in the spreadsheet", n)}
			continue
		}
		if _, seen := out[n]; !seen {
			out[n] = &TabSnapshot{Tab: n, SheetID: s.ID, title: s.Title}
			rng := a1.QuoteSheet(s.Title)
			if slices.Contains(headerOnly, n) {
				rng += "!1:1"
			}
			ranges, order = append(ranges, rng), append(order, n)
		}
	}
	if len(ranges) == 0 {
		return out, nil
	}
	vrs, err := p.batchGet(ctx, w, ranges)
	if err != nil {
		return nil, err
	}
	for i, n := range order {
		spec, _ := w.schema.Tab(n)
		fillSnapshot(out[n], spec, valuesAt(vrs, i))
	}
	return out, nil
}

func valuesAt(vrs []*sheets.ValueRange, i int) [][]any {
	if i < len(vrs) && vrs[i] != nil {
		return vrs[i].Values
	}
	return nil
}

func (p *Provider) batchGet(ctx context.Context, w *Workbook, ranges []string) ([]*sheets.ValueRange, error) {
	var resp *sheets.BatchGetValuesResponse
	err := p.read(ctx, "batch_get", func(ctx context.Context) error {
		var err error
		resp, err = p.svc.Spreadsheets.Values.BatchGet(w.id).Ranges(ranges...).
			ValueRenderOption("UNFORMATTED_VALUE").DateTimeRenderOption("SERIAL_NUMBER").
			MajorDimension("ROWS").Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp.ValueRanges, nil
}

// fillSnapshot validates the header (row 1) and indexes the data rows.
func fillSnapshot(t *TabSnapshot, spec layout.TabSpec, values [][]any) {
	if len(values) == 0 {
		t.Empty = true
	}
	var header []any
	if len(values) > 0 {
		header = values[0]
	}
	rep, err := checkHeader(spec, header)
	if err != nil {
		t.Err = err
		return
	}
	t.Header, t.anchors = rep, newAnchorIndex(len(values))
	if len(values) > 1 {
		t.Strays = layout.StrayCells(values[1:], rep.Width, 2)
		t.Rows = make([]Row, 0, len(values)-1)
	}
	for i := 1; i < len(values); i++ {
		t.addRow(spec, values[i], i+1)
	}
}

// fillDigested fills a tab its RowCheck certified: values holds the
// header row only (already validated by the check's read).
func fillDigested(t *TabSnapshot, spec layout.TabSpec, values [][]any) {
	fillSnapshot(t, spec, values[:min(len(values), 1)])
	t.Digested = true
}

// checkHeader validates a tab's header row; drift blocks the tab with a
// *Error CodeHeaderDrift wrapping the *layout.HeaderError.
func checkHeader(spec layout.TabSpec, header []any) (layout.HeaderReport, error) {
	rep, err := layout.ValidateHeader(spec, header)
	if err != nil {
		return rep, &Error{Code: CodeHeaderDrift, Msg: "tab " + spec.Name + " blocked", Err: err}
	}
	return rep, nil
}

// fillAnchors validates the header and indexes the anchor column (values
// of the anchor column from row 2) of a partial read.
func fillAnchors(t *TabSnapshot, spec layout.TabSpec, header, column [][]any) {
	var h []any
	if len(header) > 0 {
		h = header[0]
	}
	t.Empty = len(header) == 0 && len(column) == 0
	rep, err := checkHeader(spec, h)
	if err != nil {
		t.Err = err
		return
	}
	t.Header, t.anchors, t.partial = rep, newAnchorIndex(len(column)), true
	for i, raw := range column {
		if len(raw) == 0 {
			continue
		}
		if s, ok := raw[0].(string); ok && s != "" {
			t.anchors.add(norm.NFC.String(s), i+2)
		}
	}
}

func (t *TabSnapshot) addRow(spec layout.TabSpec, raw []any, sheetRow int) {
	w := len(spec.Columns)
	// The decoded row is this snapshot's own: pad it in place when short,
	// cut it when long (cells beyond the header are strays), never copy it.
	cells := cell.PadRow(raw, w)[:w:w]
	r := Row{Cells: cells, Hash: spec.RowHash(cells), SheetRow: sheetRow}
	if spec.Anchor >= 0 {
		if s, ok := cells[spec.Anchor].(string); ok {
			r.Anchor = norm.NFC.String(s)
		}
	}
	if r.Anchor != "" {
		t.anchors.add(r.Anchor, len(t.Rows))
	}
	t.Rows = append(t.Rows, r)
}

// anchorIndex maps an anchor to its positions. Almost every anchor shows
// once, so a single position is stored inline and only duplicates (I16)
// get a slice: on a 171,075-row tab that is one small map entry per row
// instead of a slice allocation per row.
type anchorIndex struct {
	one  map[string]int
	more map[string][]int
}

func newAnchorIndex(n int) anchorIndex {
	return anchorIndex{one: make(map[string]int, n)}
}

func (x *anchorIndex) add(anchor string, pos int) {
	if dup, ok := x.more[anchor]; ok {
		x.more[anchor] = append(dup, pos)
		return
	}
	first, ok := x.one[anchor]
	if !ok {
		x.one[anchor] = pos
		return
	}
	if x.more == nil {
		x.more = map[string][]int{}
	}
	delete(x.one, anchor)
	x.more[anchor] = []int{first, pos}
}

func (x *anchorIndex) get(anchor string) []int {
	if pos, ok := x.one[anchor]; ok {
		return []int{pos}
	}
	return x.more[anchor]
}
