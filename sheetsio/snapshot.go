package sheetsio

import (
	"slices"

	"golang.org/x/text/unicode/norm"

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
	// KeepsRetired: a retired column of the tab (layout.IsRetired, after
	// the anchor, outside Cells and Hash) holds a value on this row — a
	// person's, never imported: deleting the row would lose it.
	KeepsRetired bool
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
	// Title is the tab's title as this read saw it ("" when unknown): a
	// dispatch names the rows it writes by it.
	Title string
	// partial: only the header and the anchor column were read (a
	// dispatch preflight of appends): Rows is empty, anchors maps to sheet
	// row numbers, and Find returns rows with Anchor and SheetRow only,
	// but whole for the rows read again (shown, by sheet row: ShowRow).
	partial bool
	shown   map[int]Row
	// Digested: the read's RowCheck certified the tab as it streamed
	// (SnapshotChecked), so no row was decoded: Rows, Strays and the
	// anchor index are empty; Header is set.
	Digested bool
	// HeaderCells is row 1 as read, whatever it holds (a drifted header
	// too; nil for a tab not read).
	HeaderCells []any
	// Body is the digest of the whole values read the tab came from (the
	// request, then the response), the same for every tab of one read;
	// zero when not digested. Undecoded: the read digested to the one the
	// caller knew (SnapshotUnchanged), so nothing was decoded.
	Body      BodyDigest
	Undecoded bool
}

// Find returns the rows whose anchor is anchor (normally one; more than one
// means a duplicate anchor, I16).
func (t *TabSnapshot) Find(anchor string) []Row {
	idx := t.anchors.get(norm.NFC.String(anchor))
	out := make([]Row, len(idx))
	for i, j := range idx {
		if t.partial {
			r, ok := t.shown[j]
			if !ok {
				r = Row{Anchor: norm.NFC.String(anchor), SheetRow: j}
			}
			out[i] = r
			continue
		}
		out[i] = t.Rows[j]
	}
	return out
}

// Partial reports whether t is a partial read (FillAnchors): the header
// and the anchor column only.
func (t *TabSnapshot) Partial() bool { return t.partial }

// Extent is the last sheet row (1-based) the read saw holding anything:
// 1 for a tab that shows its header only, 0 when unknown (the tab was not
// read, its read failed, or it was certified without decoding). A partial
// read sees the anchor column only, so a row holding other cells alone
// is not counted.
func (t *TabSnapshot) Extent() int {
	if t.Err != nil || t.Digested || (t.HeaderCells == nil && !t.Empty) {
		return 0
	}
	n := 1
	for _, r := range t.Rows {
		n = max(n, r.SheetRow)
	}
	for _, s := range t.Strays {
		n = max(n, s.Row)
	}
	if t.partial {
		for _, pos := range t.anchors.one {
			n = max(n, pos)
		}
		for _, more := range t.anchors.more {
			for _, pos := range more {
				n = max(n, pos)
			}
		}
	}
	return n
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

// Fill validates the header (values[0], row 1) against spec and indexes
// the data rows: a Client builds a full read of a tab with it. A drifted
// header sets Err (CodeHeaderDrift) and leaves Rows empty.
func (t *TabSnapshot) Fill(spec layout.TabSpec, values [][]any) {
	if len(values) == 0 {
		t.Empty = true
	}
	var header []any
	if len(values) > 0 {
		header = values[0]
	}
	t.HeaderCells = header
	rep, err := CheckHeader(spec, header)
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

// FillDigested fills a tab its RowCheck certified: values holds the
// header row only (already validated by the check's read).
func (t *TabSnapshot) FillDigested(spec layout.TabSpec, values [][]any) {
	t.Fill(spec, values[:min(len(values), 1)])
	t.Digested = true
}

// CheckHeader validates a tab's header row; drift blocks the tab with a
// *Error CodeHeaderDrift wrapping the *layout.HeaderError.
func CheckHeader(spec layout.TabSpec, header []any) (layout.HeaderReport, error) {
	rep, err := layout.ValidateHeader(spec, header)
	if err != nil {
		return rep, &Error{Code: CodeHeaderDrift, Msg: "tab " + spec.Name + " blocked", Err: err}
	}
	return rep, nil
}

// FillAnchors validates the header and indexes the anchor column (one
// string a row from row 2, "" for a cell that held no text) of a partial
// read: Rows stays empty and Find returns rows with Anchor and SheetRow
// only. The column comes as strings, not rows of cells: a preflight of
// appends reads the whole column of a large tab, and a row of one cell
// ([]any) would cost three allocations a row more, live until the index
// is built.
func (t *TabSnapshot) FillAnchors(spec layout.TabSpec, header [][]any, column []string) {
	var h []any
	if len(header) > 0 {
		h = header[0]
	}
	t.HeaderCells = h
	t.Empty = len(header) == 0 && len(column) == 0
	rep, err := CheckHeader(spec, h)
	if err != nil {
		t.Err = err
		return
	}
	t.Header, t.anchors, t.partial = rep, newAnchorIndex(len(column)), true
	for i, s := range column {
		if s != "" {
			t.anchors.add(norm.NFC.String(s), i+2)
		}
	}
}

// ShowRow decodes raw, sheet row sheetRow of a partial read as a later
// read showed it whole (a dispatch preflight reads again only the rows
// where an append's anchor shows, to tell a replay from a conflict): Find
// then returns it with its cells and hash. ok is false, and nothing is
// kept, when the row does not show there the anchor the partial read
// indexed at it (the tab changed between the reads, e.g. a sort).
func (t *TabSnapshot) ShowRow(spec layout.TabSpec, raw []any, sheetRow int) bool {
	if !t.partial || t.Err != nil {
		return false
	}
	r := t.decodeRow(spec, raw, sheetRow)
	if r.Anchor == "" || !slices.Contains(t.anchors.get(r.Anchor), sheetRow) {
		return false
	}
	if t.shown == nil {
		t.shown = map[int]Row{}
	}
	t.shown[sheetRow] = r
	return true
}

func (t *TabSnapshot) addRow(spec layout.TabSpec, raw []any, sheetRow int) {
	r := t.decodeRow(spec, raw, sheetRow)
	if r.Anchor != "" {
		t.anchors.add(r.Anchor, len(t.Rows))
	}
	t.Rows = append(t.Rows, r)
}

// decodeRow cuts raw to the header's width and hashes it.
func (t *TabSnapshot) decodeRow(spec layout.TabSpec, raw []any, sheetRow int) Row {
	w := len(spec.Columns)
	// The decoded row is this snapshot's own: pad it in place when short,
	// cut it when long (cells beyond the header are strays), never copy it.
	r := Row{SheetRow: sheetRow, KeepsRetired: t.keepsRetired(raw)}
	cells := cell.PadRow(raw, w)[:w:w]
	r.Cells, r.Hash = cells, spec.RowHash(cells)
	if spec.Anchor >= 0 {
		if s, ok := cells[spec.Anchor].(string); ok {
			r.Anchor = norm.NFC.String(s)
		}
	}
	return r
}

// keepsRetired reports whether raw holds a non-blank cell in a retired
// column of the tab (read before the row is cut to the layout's width).
func (t *TabSnapshot) keepsRetired(raw []any) bool {
	for pos := range t.Header.Retired {
		if pos < len(raw) && raw[pos] != nil && raw[pos] != "" {
			return true
		}
	}
	return false
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
