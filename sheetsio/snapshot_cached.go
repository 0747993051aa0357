package sheetsio

import (
	"context"
	"errors"

	"google.golang.org/api/sheets/v4"
)

// SnapshotKnown is Snapshot for pollers: when the Workbook already knows
// the sheetId of every named tab it reads them all with ONE
// values.batchGetByDataFilter addressed by sheetId (one read request for any
// number of tabs; a renamed tab keeps working). When a sheetId is unknown,
// or the cached ids are rejected (a tab was deleted), it falls back to
// Snapshot (enumeration + batchGet, two requests), which rebinds the ids.
// Errors: as Snapshot.
func (p *Provider) SnapshotKnown(ctx context.Context, w *Workbook, tabs ...string) (map[string]*TabSnapshot, error) {
	ids := make([]int64, len(tabs))
	for i, t := range tabs {
		if _, ok := w.schema.Tab(t); !ok {
			return nil, newErr(CodeInvalidBatch, nil, "unknown tab %s", t)
		}
		id, ok := w.known(t)
		if !ok {
			return p.Snapshot(ctx, w, tabs...)
		}
		ids[i] = id
	}
	if len(tabs) == 0 {
		return map[string]*TabSnapshot{}, nil
	}
	req := &sheets.BatchGetValuesByDataFilterRequest{MajorDimension: "ROWS", ValueRenderOption: "UNFORMATTED_VALUE",
		DateTimeRenderOption: "SERIAL_NUMBER"}
	for _, id := range ids {
		req.DataFilters = append(req.DataFilters, &sheets.DataFilter{GridRange: &sheets.GridRange{SheetId: id, ForceSendFields: []string{"SheetId"}}})
	}
	var resp *sheets.BatchGetValuesByDataFilterResponse
	err := p.read(ctx, "batch_get_by_sheet_id", func(ctx context.Context) error {
		var err error
		resp, err = p.svc.Spreadsheets.Values.BatchGetByDataFilter(w.id, req).Context(ctx).Do()
		return err
	})
	if errors.Is(err, ErrReadRejected) {
		return p.Snapshot(ctx, w, tabs...)
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]*TabSnapshot, len(tabs))
	for i, t := range tabs {
		spec, _ := w.schema.Tab(t)
		snap := &TabSnapshot{Tab: t, SheetID: ids[i]}
		var values [][]any
		if i < len(resp.ValueRanges) && resp.ValueRanges[i] != nil && resp.ValueRanges[i].ValueRange != nil {
			values = resp.ValueRanges[i].ValueRange.Values
		}
		fillSnapshot(snap, spec, values)
		out[t] = snap
	}
	return out, nil
}

// SurplusCopy picks the row an OpDelete removes when its anchor shows on
// several rows (I16): only when there are at least two and EVERY one shows
// exactly expectedHash — identical copies, so deleting the bottom-most one
// is a full-row compare-and-set whichever copy it is, and the row left
// still shows expectedHash (the effect's written hash). Any difference
// between the copies is ambiguous: ok is false and the delete fails closed
// (ReasonAnchorDuplicated). Surplus-row cleanup of Input tabs (I21) relies
// on it.
func SurplusCopy(rows []Row, expectedHash string) (Row, bool) {
	if len(rows) < 2 || expectedHash == "" {
		return Row{}, false
	}
	last := rows[0]
	for _, r := range rows {
		if r.Hash != expectedHash {
			return Row{}, false
		}
		if r.SheetRow > last.SheetRow {
			last = r
		}
	}
	return last, true
}
