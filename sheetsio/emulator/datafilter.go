package emulator

import "encoding/json"

// Data-filter variants of the values API and spreadsheets.get. A
// DataFilter selects ranges: an a1Range or gridRange directly, or a
// developerMetadataLookup, whose matched metadata select their locations
// (a whole row, a whole column or a whole tab).

// filterRanges resolves one DataFilter to the ranges it selects.
func (b *book) filterRanges(f dataFilterIn) ([]sheetRange, error) {
	switch {
	case f.A1Range != nil:
		s, g, err := b.resolveBounded(*f.A1Range)
		return []sheetRange{{s, g}}, err
	case f.GridRange != nil:
		s, g, err := b.resolveGrid(*f.GridRange)
		return []sheetRange{{s, g}}, err
	}
	metas, err := b.matchFilter(f)
	if err != nil {
		return nil, err
	}
	var out []sheetRange
	for _, m := range metas {
		if s := b.sheetByID(m.SheetID); s != nil && m.LocType != "SPREADSHEET" {
			out = append(out, sheetRange{s, metaGrid(s, m)})
		}
	}
	return out, nil
}

func metaGrid(s *sheet, m *devMeta) gridRange {
	g := fullGrid(s)
	switch m.LocType {
	case dimRows:
		g.R0, g.R1 = m.Start, m.End
	case dimCols:
		g.C0, g.C1 = m.Start, m.End
	}
	return g
}

func (e *Emulator) valuesBatchGetByDataFilter(c call) (result, error) {
	var body struct {
		DataFilters          []json.RawMessage `json:"dataFilters"`
		MajorDimension       string            `json:"majorDimension"`
		ValueRenderOption    string            `json:"valueRenderOption"`
		DateTimeRenderOption string            `json:"dateTimeRenderOption"`
	}
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	o, err := renderOpts{Value: body.ValueRenderOption, DateTime: body.DateTimeRenderOption, Major: body.MajorDimension}.normalized()
	if err != nil {
		return result{}, err
	}
	out := map[string]any{"spreadsheetId": c.id}
	err = e.withBook(c.id, func(b *book) error {
		matched, err := b.readByFilters(body.DataFilters, o)
		if len(matched) > 0 {
			out["valueRanges"] = matched
		}
		return err
	})
	return result{body: out}, err
}

func (b *book) readByFilters(filters []json.RawMessage, o renderOpts) ([]any, error) {
	var out []any
	for _, raw := range filters {
		var f dataFilterIn
		if err := decodeReq(raw, &f); err != nil {
			return nil, err
		}
		ranges, err := b.filterRanges(f)
		if err != nil {
			return nil, err
		}
		for _, r := range ranges {
			vr := map[string]any{"range": a1Of(r.s, r.g), "majorDimension": o.Major}
			if vals := b.readGrid(r.s, r.g, o); vals != nil {
				vr["values"] = vals
			}
			out = append(out, map[string]any{"valueRange": vr, "dataFilters": []json.RawMessage{raw}})
		}
	}
	return out, nil
}

type filterValueRange struct {
	DataFilter     json.RawMessage `json:"dataFilter"`
	MajorDimension *string         `json:"majorDimension"`
	Values         [][]any         `json:"values"`
}

func (e *Emulator) valuesBatchUpdateByDataFilter(c call) (result, error) {
	var body struct {
		ValueInputOption             string             `json:"valueInputOption"`
		Data                         []filterValueRange `json:"data"`
		IncludeValuesInResponse      bool               `json:"includeValuesInResponse"`
		ResponseValueRenderOption    string             `json:"responseValueRenderOption"`
		ResponseDateTimeRenderOption string             `json:"responseDateTimeRenderOption"`
	}
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	o, err := parseWriteOpts(body.ValueInputOption, body.IncludeValuesInResponse, body.ResponseValueRenderOption, body.ResponseDateTimeRenderOption)
	if err != nil {
		return result{}, err
	}
	var out map[string]any
	var cells int
	err = e.withBook(c.id, func(b *book) error {
		plans, filters, err := b.planFilterWrites(body.Data, o)
		if err != nil {
			return err
		}
		out, cells = b.runBatchWrites(plans, o)
		if responses, ok := out["responses"].([]any); ok {
			for i, r := range responses {
				r.(map[string]any)["dataFilter"] = filters[i]
			}
		}
		return nil
	})
	return result{body: out, cells: cells}, err
}

// planFilterWrites validates every filtered write (each matched range is
// written from its top-left cell) before anything is applied.
func (b *book) planFilterWrites(data []filterValueRange, o writeOpts) ([]func() writeStats, []json.RawMessage, error) {
	var plans []func() writeStats
	var filters []json.RawMessage
	for _, d := range data {
		var f dataFilterIn
		if err := decodeReq(d.DataFilter, &f); err != nil {
			return nil, nil, err
		}
		ranges, err := b.filterRanges(f)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range ranges {
			vr := valueRange{Range: a1Of(r.s, r.g), MajorDimension: d.MajorDimension, Values: d.Values}
			p, err := b.planWrite(vr.Range, vr, o)
			if err != nil {
				return nil, nil, err
			}
			plans, filters = append(plans, p), append(filters, d.DataFilter)
		}
	}
	return plans, filters, nil
}

func (e *Emulator) valuesBatchClearByDataFilter(c call) (result, error) {
	var body struct {
		DataFilters []dataFilterIn `json:"dataFilters"`
	}
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	out := map[string]any{"spreadsheetId": c.id}
	err := e.withBook(c.id, func(b *book) error {
		var all []sheetRange
		for _, f := range body.DataFilters {
			ranges, err := b.filterRanges(f)
			if err != nil {
				return err
			}
			all = append(all, ranges...)
		}
		var cleared []string
		for _, r := range all {
			clearValues(r.s, r.g)
			cleared = append(cleared, a1Of(r.s, r.g))
		}
		if len(cleared) > 0 {
			out["clearedRanges"] = cleared
		}
		return nil
	})
	return result{body: out}, err
}

func (e *Emulator) apiGetByDataFilter(c call) (result, error) {
	var body struct {
		DataFilters     []dataFilterIn `json:"dataFilters"`
		IncludeGridData bool           `json:"includeGridData"`
	}
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	var out map[string]any
	err := e.withBook(c.id, func(b *book) error {
		out = b.spreadsheetJSON(getOpts{})
		if len(body.DataFilters) == 0 {
			return nil
		}
		var order []*sheet
		grids := map[*sheet][]gridRange{}
		for _, f := range body.DataFilters {
			ranges, err := b.filterRanges(f)
			if err != nil {
				return err
			}
			for _, r := range ranges {
				if _, ok := grids[r.s]; !ok {
					order = append(order, r.s)
				}
				grids[r.s] = append(grids[r.s], r.g)
			}
		}
		sheets := []any{}
		for _, s := range order {
			sheets = append(sheets, b.sheetJSON(s, body.IncludeGridData, grids[s]))
		}
		out["sheets"] = sheets
		return nil
	})
	return result{body: out}, err
}
