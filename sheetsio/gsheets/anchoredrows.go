package gsheets

import (
	"context"
	"errors"
	"slices"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// The preflight's second read: an append whose anchor already shows in a
// partially read tab (a replay after an uncertain outcome, or a conflict)
// needs that row's full-row hash (C06, I16). Only those rows are read
// again, not the tab: the planner sees every anchor's positions from the
// first read and, whole, the rows the batch's appended anchors show on.
// A read row that no longer shows its anchor (a person sorted or edited
// between the reads) fails the dispatch as a changed tab, so it retries.

// rowRun is a run of consecutive sheet rows (1-based, end exclusive).
type rowRun struct{ first, end int }

// anchoredRows lists, by partially read tab, the sheet rows where an
// append's anchor shows exactly once (a duplicated anchor fails its op on
// the first read's positions alone), ascending; the tabs in batch order.
func anchoredRows(b sheetsio.Batch, snaps map[string]*sheetsio.TabSnapshot) ([]string, map[string][]int) {
	var tabs []string
	rows := map[string][]int{}
	for _, op := range b.Ops {
		s := snaps[op.Tab]
		if op.Kind != sheetsio.OpAppend || s == nil || !s.Partial() || s.Err != nil {
			continue
		}
		if at := s.Find(op.Anchor); len(at) == 1 {
			if _, seen := rows[op.Tab]; !seen {
				tabs = append(tabs, op.Tab)
			}
			rows[op.Tab] = append(rows[op.Tab], at[0].SheetRow)
		}
	}
	for t, r := range rows {
		slices.Sort(r)
		rows[t] = slices.Compact(r)
	}
	return tabs, rows
}

// runsOf groups ascending sheet rows into runs of consecutive rows.
func runsOf(rows []int) []rowRun {
	var out []rowRun
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].end == r {
			out[n-1].end++
			continue
		}
		out = append(out, rowRun{first: r, end: r + 1})
	}
	return out
}

// errTabsChanged is the preflight's answer when its second read does not
// show what its first did: nothing was written, the dispatch retries.
func errTabsChanged(err error) error {
	return errors.Join(err, newErr(sheetsio.CodeReadRejected, nil, "tabs changed during the preflight"))
}

// readAnchoredRows reads, in one values.batchGetByDataFilter by the known
// sheetIds, the rows of each tab of tabs that rows names and shows them
// whole in its partial snapshot (ShowRow).
func (p *Provider) readAnchoredRows(ctx context.Context, w *sheetsio.Workbook, snaps map[string]*sheetsio.TabSnapshot,
	tabs []string, rows map[string][]int) error {
	req, runs, err := anchoredRowsRequest(w, snaps, tabs, rows)
	if err != nil {
		return err
	}
	var v valuesRead
	err = p.read(ctx, "batch_get_by_sheet_id", func(ctx context.Context) error {
		var err error
		v, err = p.streamBatchGetByDataFilter(ctx, w.SpreadsheetID(), req, nil, nil, sheetsio.BodyDigest{})
		return err
	})
	if errors.Is(err, sheetsio.ErrReadRejected) {
		return errTabsChanged(nil)
	}
	if err != nil {
		return errTabsChanged(err)
	}
	return showRuns(w, snaps, tabs, runs, v.resp)
}

// anchoredRowsRequest is the read of readAnchoredRows: a data filter per
// run of rows, tab by tab; a tab whose sheetId changed since the first
// read is a changed tab.
func anchoredRowsRequest(w *sheetsio.Workbook, snaps map[string]*sheetsio.TabSnapshot, tabs []string,
	rows map[string][]int) (*sheets.BatchGetValuesByDataFilterRequest, map[string][]rowRun, error) {
	req := &sheets.BatchGetValuesByDataFilterRequest{MajorDimension: "ROWS", ValueRenderOption: "UNFORMATTED_VALUE",
		DateTimeRenderOption: "SERIAL_NUMBER"}
	runs := make(map[string][]rowRun, len(tabs))
	for _, t := range tabs {
		id, ok := w.SheetID(t)
		if !ok || id != snaps[t].SheetID {
			return nil, nil, errTabsChanged(nil)
		}
		runs[t] = runsOf(rows[t])
		for _, r := range runs[t] {
			g := &sheets.GridRange{SheetId: id, StartRowIndex: int64(r.first - 1), EndRowIndex: int64(r.end - 1),
				ForceSendFields: []string{"SheetId"}}
			req.DataFilters = append(req.DataFilters, &sheets.DataFilter{GridRange: g})
		}
	}
	return req, runs, nil
}

// showRuns shows each run's rows in its tab's snapshot; a row missing or
// no longer showing its anchor is a changed tab.
func showRuns(w *sheetsio.Workbook, snaps map[string]*sheetsio.TabSnapshot, tabs []string, runs map[string][]rowRun,
	resp *sheets.BatchGetValuesByDataFilterResponse) error {
	i := 0
	for _, t := range tabs {
		spec, _ := w.Schema().Tab(t)
		for _, r := range runs[t] {
			values := filteredValues(resp, i)
			i++
			if len(values) != r.end-r.first {
				return errTabsChanged(nil)
			}
			for k, raw := range values {
				if !snaps[t].ShowRow(spec, raw, r.first+k) {
					return errTabsChanged(nil)
				}
			}
		}
	}
	return nil
}
