package gsheets

import (
	"context"
	"slices"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"google.golang.org/api/sheets/v4"
)

// Snapshot reads the named logical tabs with one tab enumeration and one
// values.batchGet (two read requests for any number of tabs). Errors are
// read errors (*Error: CodeReadUnavailable, CodeReadRejected,
// CodePermissionDenied, CodeSpreadsheetNotFound) or CodeInvalidBatch for a
// tab name the schema does not declare; per-tab problems are in
// TabSnapshot.Err.
func (p *Provider) Snapshot(ctx context.Context, w *sheetsio.Workbook, tabs ...string) (map[string]*sheetsio.TabSnapshot, error) {
	for _, t := range tabs {
		if _, ok := w.Schema().Tab(t); !ok {
			return nil, newErr(sheetsio.CodeInvalidBatch, nil, "unknown tab %s", t)
		}
	}
	infos, err := p.enumerate(ctx, w)
	if err != nil {
		return nil, err
	}
	return p.readTabs(ctx, w, resolve(w, infos), tabs)
}

// readTabs reads every tab in names that resolved to a sheet with a single
// values.batchGet; unresolved tabs get CodeTabMissing. Tabs listed in
// headerOnly are read (and validated) through their header row only.
func (p *Provider) readTabs(ctx context.Context, w *sheetsio.Workbook, resolved map[string]sheetInfo, names []string, headerOnly ...string) (map[string]*sheetsio.TabSnapshot, error) {
	out := map[string]*sheetsio.TabSnapshot{}
	var ranges, order []string
	for _, n := range names {
		s, ok := resolved[n]
		if !ok {
			out[n] = &sheetsio.TabSnapshot{Tab: n, Err: newErr(sheetsio.CodeTabMissing, nil, "tab %s is not in the spreadsheet", n)}
			continue
		}
		if _, seen := out[n]; !seen {
			out[n] = &sheetsio.TabSnapshot{Tab: n, SheetID: s.ID, Title: s.Title}
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
		spec, _ := w.Schema().Tab(n)
		out[n].Fill(spec, valuesAt(vrs, i))
	}
	return out, nil
}

func valuesAt(vrs []*sheets.ValueRange, i int) [][]any {
	if i < len(vrs) && vrs[i] != nil {
		return vrs[i].Values
	}
	return nil
}

func (p *Provider) batchGet(ctx context.Context, w *sheetsio.Workbook, ranges []string) ([]*sheets.ValueRange, error) {
	var resp *sheets.BatchGetValuesResponse
	err := p.read(ctx, "batch_get", func(ctx context.Context) error {
		var err error
		resp, err = p.svcOf(ctx).Spreadsheets.Values.BatchGet(w.SpreadsheetID()).Ranges(ranges...).
			ValueRenderOption("UNFORMATTED_VALUE").DateTimeRenderOption("SERIAL_NUMBER").
			MajorDimension("ROWS").Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp.ValueRanges, nil
}
