package gsheets

import (
	"context"
	"errors"
	"slices"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// SnapshotKnown is Snapshot for pollers: when the Workbook already knows
// the sheetId of every named tab it reads them all with ONE
// values.batchGetByDataFilter addressed by sheetId (one read request for any
// number of tabs; a renamed tab keeps working). When a sheetId is unknown,
// or the cached ids are rejected (a tab was deleted), it falls back to
// Snapshot (enumeration + batchGet, two requests), which rebinds the ids.
// Errors: as Snapshot.
func (p *Provider) SnapshotKnown(ctx context.Context, w *sheetsio.Workbook, tabs ...string) (map[string]*sheetsio.TabSnapshot, error) {
	return p.SnapshotChecked(ctx, w, nil, tabs...)
}

// SnapshotChecked is SnapshotKnown where the tabs with a RowCheck in
// checks are certified by it as the read streams (TabSnapshot.Digested:
// no row decoded) or, when it cannot certify them, decoded in full as
// SnapshotKnown decodes them. The fallback read (an unknown or stale
// sheetId) decodes every tab in full.
func (p *Provider) SnapshotChecked(ctx context.Context, w *sheetsio.Workbook, checks map[string]sheetsio.RowCheck, tabs ...string) (map[string]*sheetsio.TabSnapshot, error) {
	for _, t := range tabs {
		if _, ok := w.Schema().Tab(t); !ok {
			return nil, newErr(sheetsio.CodeInvalidBatch, nil, "unknown tab %s", t)
		}
	}
	out, ok, err := p.readKnown(ctx, w, tabs, nil, checks, sheetsio.BodyDigest{})
	if ok || err != nil {
		return out, err
	}
	return p.Snapshot(ctx, w, tabs...)
}

// SnapshotUnchanged reports whether a read of tabs as SnapshotChecked
// reads them (one values read by the known sheetIds) digests to known,
// a TabSnapshot.Body an earlier read of the same tabs had; it decodes
// nothing. An unknown or stale sheetId is not unchanged. Errors: as
// Snapshot.
func (p *Provider) SnapshotUnchanged(ctx context.Context, w *sheetsio.Workbook, known sheetsio.BodyDigest, tabs ...string) (bool, error) {
	if known.IsZero() {
		return false, nil
	}
	out, ok, err := p.readKnown(ctx, w, tabs, nil, nil, known)
	if !ok || err != nil {
		return false, err
	}
	for _, s := range out {
		if !s.Undecoded {
			return false, nil
		}
	}
	return len(out) > 0, nil
}

// readMode is how much of a tab one read covers.
type readMode uint8

const (
	readFull    readMode = iota
	readHeader           // row 1 only
	readAnchors          // row 1 and the anchor column: enough to find rows by anchor
)

// readKnown reads tabs (each once, as modes says; absent = readFull) with
// one values.batchGetByDataFilter addressed by the Workbook's known
// sheetIds, certifying the tabs read in full that have a RowCheck in
// checks as they stream. ok is false, with nothing read or a rejected read, when a
// sheetId is unknown or stale: the caller falls back to enumeration.
func (p *Provider) readKnown(ctx context.Context, w *sheetsio.Workbook, tabs []string, modes map[string]readMode,
	checks map[string]sheetsio.RowCheck, known sheetsio.BodyDigest) (map[string]*sheetsio.TabSnapshot, bool, error) {
	out := make(map[string]*sheetsio.TabSnapshot, len(tabs))
	req := &sheets.BatchGetValuesByDataFilterRequest{MajorDimension: "ROWS", ValueRenderOption: "UNFORMATTED_VALUE",
		DateTimeRenderOption: "SERIAL_NUMBER"}
	var order []string
	for _, t := range tabs {
		id, ok := w.SheetID(t)
		if !ok {
			return nil, false, nil
		}
		if _, dup := out[t]; !dup {
			spec, _ := w.Schema().Tab(t)
			out[t], order = &sheetsio.TabSnapshot{Tab: t, SheetID: id}, append(order, t)
			req.DataFilters = append(req.DataFilters, idFilters(id, spec, modes[t])...)
		}
	}
	if len(order) == 0 {
		return out, true, nil
	}
	var v valuesRead
	err := p.read(ctx, "batch_get_by_sheet_id", func(ctx context.Context) error {
		var err error
		v, err = p.streamBatchGetByDataFilter(ctx, w.SpreadsheetID(), req, digestRanges(w, order, modes, checks), anchorColumns(w, order, modes), known)
		return err
	})
	if errors.Is(err, sheetsio.ErrReadRejected) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for _, t := range order {
		out[t].Body, out[t].Undecoded = v.body, v.known
	}
	if v.resp != nil {
		fillKnown(w, out, order, modes, v)
	}
	return out, true, nil
}

// digestRanges are the digest states of one read attempt, by value range
// (nil: decoded in full): one for each tab read in full with a check.
func digestRanges(w *sheetsio.Workbook, order []string, modes map[string]readMode, checks map[string]sheetsio.RowCheck) []*digestRange {
	if len(checks) == 0 {
		return nil
	}
	var out []*digestRange
	for _, t := range order {
		spec, _ := w.Schema().Tab(t)
		if modes[t] == readAnchors && spec.Anchor >= 0 {
			out = append(out, nil, nil)
			continue
		}
		var dr *digestRange
		if c, ok := checks[t]; ok && modes[t] == readFull {
			dr = newDigestRange(spec, c)
		}
		out = append(out, dr)
	}
	return out
}

// anchorColumns marks, by value range, the anchor columns of the tabs
// read as readAnchors (the range after each one's header row): they are
// kept as strings (decodeFiltered), nil when the read has none.
func anchorColumns(w *sheetsio.Workbook, order []string, modes map[string]readMode) []bool {
	var out []bool
	for _, t := range order {
		spec, _ := w.Schema().Tab(t)
		if modes[t] == readAnchors && spec.Anchor >= 0 {
			out = append(out, false, true)
			continue
		}
		out = append(out, false)
	}
	if !slices.Contains(out, true) {
		return nil
	}
	return out
}

// fillKnown fills the snapshots from the read, whose value ranges follow
// the data filters in order: an anchor column is taken from v.columns.
// A range its RowCheck certified holds the header only: the tab is
// Digested.
func fillKnown(w *sheetsio.Workbook, out map[string]*sheetsio.TabSnapshot, order []string, modes map[string]readMode, v valuesRead) {
	resp, certified := v.resp, v.certified
	i := 0
	for _, t := range order {
		spec, _ := w.Schema().Tab(t)
		out[t].Title = filteredTitle(resp, i)
		if modes[t] == readAnchors && spec.Anchor >= 0 {
			out[t].FillAnchors(spec, filteredValues(resp, i), filteredColumn(v.columns, i+1))
			i += 2
			continue
		}
		if i < len(certified) && certified[i] {
			out[t].FillDigested(spec, filteredValues(resp, i))
			i++
			continue
		}
		out[t].Fill(spec, filteredValues(resp, i))
		i++
	}
}

// idFilters selects a sheet by id: whole, its header row, or its header
// row and anchor column (two filters).
func idFilters(id int64, spec layout.TabSpec, mode readMode) []*sheets.DataFilter {
	g := &sheets.GridRange{SheetId: id, ForceSendFields: []string{"SheetId"}}
	if mode == readFull || (mode == readAnchors && spec.Anchor < 0) {
		return []*sheets.DataFilter{{GridRange: g}}
	}
	g.StartRowIndex, g.EndRowIndex = 0, 1
	g.ForceSendFields = append(g.ForceSendFields, "StartRowIndex")
	if mode == readHeader {
		return []*sheets.DataFilter{{GridRange: g}}
	}
	col := &sheets.GridRange{SheetId: id, StartRowIndex: 1, StartColumnIndex: int64(spec.Anchor),
		EndColumnIndex: int64(spec.Anchor + 1), ForceSendFields: []string{"SheetId", "StartColumnIndex"}}
	return []*sheets.DataFilter{{GridRange: g}, {GridRange: col}}
}

// filteredColumn is the i-th value range read as a column (nil when none).
func filteredColumn(columns [][]string, i int) []string {
	if i < len(columns) {
		return columns[i]
	}
	return nil
}

func filteredValues(resp *sheets.BatchGetValuesByDataFilterResponse, i int) [][]any {
	if i < len(resp.ValueRanges) && resp.ValueRanges[i] != nil && resp.ValueRanges[i].ValueRange != nil {
		return resp.ValueRanges[i].ValueRange.Values
	}
	return nil
}

// filteredTitle is the tab title the i-th value range names ("" when the
// response names none).
func filteredTitle(resp *sheets.BatchGetValuesByDataFilterResponse, i int) string {
	if i >= len(resp.ValueRanges) || resp.ValueRanges[i] == nil || resp.ValueRanges[i].ValueRange == nil {
		return ""
	}
	r, err := a1.Parse(resp.ValueRanges[i].ValueRange.Range)
	if err != nil || !r.HasSheet {
		return ""
	}
	return r.Sheet
}
