package emulator

import (
	"encoding/json"
	"strconv"
)

type metaLocationIn struct {
	LocationType   string            `json:"locationType"`
	Spreadsheet    *bool             `json:"spreadsheet"`
	SheetID        *int64            `json:"sheetId"`
	DimensionRange *dimensionRangeIn `json:"dimensionRange"`
}

type metaIn struct {
	MetadataID    *int64          `json:"metadataId"`
	MetadataKey   *string         `json:"metadataKey"`
	MetadataValue *string         `json:"metadataValue"`
	Location      *metaLocationIn `json:"location"`
	Visibility    *string         `json:"visibility"`
}

type lookupIn struct {
	LocationType             string          `json:"locationType"`
	MetadataLocation         *metaLocationIn `json:"metadataLocation"`
	LocationMatchingStrategy string          `json:"locationMatchingStrategy"`
	MetadataID               *int64          `json:"metadataId"`
	MetadataKey              *string         `json:"metadataKey"`
	MetadataValue            *string         `json:"metadataValue"`
	Visibility               *string         `json:"visibility"`
}

type dataFilterIn struct {
	DeveloperMetadataLookup *lookupIn    `json:"developerMetadataLookup"`
	A1Range                 *string      `json:"a1Range"`
	GridRange               *gridRangeIn `json:"gridRange"`
}

// location converts a request location to the stored form.
func (b *book) location(in *metaLocationIn) (devMeta, error) {
	switch {
	case in == nil:
		return devMeta{}, errorf(ErrInvalidArgument, "Developer metadata must have a location.")
	case deref(in.Spreadsheet):
		return devMeta{LocType: "SPREADSHEET"}, nil
	case in.SheetID != nil:
		if b.sheetByID(*in.SheetID) == nil {
			return devMeta{}, errorf(ErrInvalidArgument, "No grid with id: %d", *in.SheetID)
		}
		return devMeta{LocType: "SHEET", SheetID: *in.SheetID}, nil
	case in.DimensionRange != nil:
		s, start, end, err := b.resolveDim(*in.DimensionRange, false)
		if err != nil {
			return devMeta{}, err
		}
		if end-start != 1 {
			return devMeta{}, errorf(ErrInvalidArgument, "The dimension range of developer metadata must be a single row or column.")
		}
		return devMeta{LocType: in.DimensionRange.Dimension, SheetID: s.ID, Start: start, End: end}, nil
	}
	return devMeta{}, errorf(ErrInvalidArgument, "Developer metadata must have a location.")
}

// metaJSON renders DeveloperMetadata.
func metaJSON(m *devMeta) map[string]any {
	loc := map[string]any{}
	switch m.LocType {
	case "SPREADSHEET":
		loc["locationType"], loc["spreadsheet"] = "SPREADSHEET", true
	case "SHEET":
		loc["locationType"], loc["sheetId"] = "SHEET", m.SheetID
	default:
		loc["locationType"] = map[string]string{dimRows: "ROW", dimCols: "COLUMN"}[m.LocType]
		dr := map[string]any{"dimension": m.LocType, "endIndex": m.End}
		if m.SheetID != 0 {
			dr["sheetId"] = m.SheetID
		}
		if m.Start != 0 {
			dr["startIndex"] = m.Start
		}
		loc["dimensionRange"] = dr
	}
	out := map[string]any{"metadataId": m.ID, "metadataKey": m.Key, "location": loc, "visibility": m.Visibility}
	if m.Value != "" {
		out["metadataValue"] = m.Value
	}
	return out
}

func reqCreateMeta(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		DeveloperMetadata metaIn `json:"developerMetadata"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	in := req.DeveloperMetadata
	if deref(in.MetadataKey) == "" {
		return nil, errorf(ErrInvalidArgument, "Developer metadata must have a metadataKey.")
	}
	if v := deref(in.Visibility); v != "DOCUMENT" && v != "PROJECT" {
		return nil, errorf(ErrInvalidArgument, "Developer metadata visibility must be DOCUMENT or PROJECT.")
	}
	m, err := b.location(in.Location)
	if err != nil {
		return nil, err
	}
	m.Key, m.Value, m.Visibility = *in.MetadataKey, deref(in.MetadataValue), *in.Visibility
	if in.MetadataID != nil {
		if *in.MetadataID <= 0 || b.idTaken(*in.MetadataID) {
			return nil, errorf(ErrInvalidArgument, "Developer metadata ID %d is invalid or already in use.", *in.MetadataID)
		}
		m.ID = *in.MetadataID
	} else {
		m.ID = b.nextID()
	}
	b.Meta = append(b.Meta, &m)
	return map[string]any{"developerMetadata": metaJSON(&m)}, nil
}

// matchFilter returns the metadata selected by one DataFilter.
func (b *book) matchFilter(f dataFilterIn) ([]*devMeta, error) {
	var g *gridRange
	var err error
	switch {
	case f.A1Range != nil:
		var s *sheet
		var gr gridRange
		s, gr, err = b.resolveBounded(*f.A1Range)
		if err == nil {
			gr.SheetID = s.ID
			g = &gr
		}
	case f.GridRange != nil:
		var gr gridRange
		_, gr, err = b.resolveGrid(*f.GridRange)
		g = &gr
	}
	if err != nil {
		return nil, err
	}
	var out []*devMeta
	for _, m := range b.Meta {
		ok, err := b.metaMatches(m, f.DeveloperMetadataLookup, g)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, nil
}

func (b *book) metaMatches(m *devMeta, l *lookupIn, g *gridRange) (bool, error) {
	if g != nil {
		return metaInRange(m, *g), nil
	}
	if l == nil {
		return false, errorf(ErrInvalidArgument, "A data filter must be set.")
	}
	if (l.MetadataID != nil && *l.MetadataID != m.ID) || (l.MetadataKey != nil && *l.MetadataKey != m.Key) ||
		(l.MetadataValue != nil && *l.MetadataValue != m.Value) || (l.Visibility != nil && *l.Visibility != m.Visibility) {
		return false, nil
	}
	if l.LocationType != "" && l.LocationType != metaJSON(m)["location"].(map[string]any)["locationType"] {
		return false, nil
	}
	if l.MetadataLocation == nil {
		return true, nil
	}
	want, err := b.location(l.MetadataLocation)
	if err != nil {
		return false, err
	}
	if l.LocationMatchingStrategy == "EXACT_LOCATION" {
		return want.LocType == m.LocType && want.SheetID == m.SheetID && want.Start == m.Start && want.End == m.End, nil
	}
	return locIntersects(want, m), nil
}

func locIntersects(want devMeta, m *devMeta) bool {
	switch want.LocType {
	case "SPREADSHEET":
		return true
	case "SHEET":
		return m.LocType != "SPREADSHEET" && m.SheetID == want.SheetID
	}
	if m.LocType == "SHEET" || m.LocType == "SPREADSHEET" {
		return m.LocType == "SPREADSHEET" || m.SheetID == want.SheetID
	}
	return m.SheetID == want.SheetID && m.LocType == want.LocType && m.Start < want.End && want.Start < m.End
}

func metaInRange(m *devMeta, g gridRange) bool {
	switch m.LocType {
	case dimRows:
		return m.SheetID == g.SheetID && m.Start < g.R1 && g.R0 < m.End
	case dimCols:
		return m.SheetID == g.SheetID && m.Start < g.C1 && g.C0 < m.End
	case "SHEET":
		return m.SheetID == g.SheetID
	}
	return false
}

func reqUpdateMeta(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		DataFilters       []dataFilterIn `json:"dataFilters"`
		DeveloperMetadata metaIn         `json:"developerMetadata"`
		Fields            string         `json:"fields"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	mask := parseMask(req.Fields)
	matched, err := b.matchAll(req.DataFilters)
	if err != nil {
		return nil, err
	}
	in := req.DeveloperMetadata
	out := []any{}
	for _, m := range matched {
		if err := b.updateOneMeta(m, in, mask); err != nil {
			return nil, err
		}
		out = append(out, metaJSON(m))
	}
	return map[string]any{"developerMetadata": out}, nil
}

func (b *book) updateOneMeta(m *devMeta, in metaIn, mask map[string]bool) error {
	all := mask["*"]
	if all || mask["metadataKey"] {
		m.Key = deref(in.MetadataKey)
	}
	if all || mask["metadataValue"] {
		m.Value = deref(in.MetadataValue)
	}
	if all || mask["visibility"] {
		m.Visibility = deref(in.Visibility)
	}
	if all || mask["location"] {
		loc, err := b.location(in.Location)
		if err != nil {
			return err
		}
		m.LocType, m.SheetID, m.Start, m.End = loc.LocType, loc.SheetID, loc.Start, loc.End
	}
	return nil
}

// matchAll is the de-duplicated union of several filters, in storage order.
func (b *book) matchAll(filters []dataFilterIn) ([]*devMeta, error) {
	seen := map[*devMeta]bool{}
	for _, f := range filters {
		ms, err := b.matchFilter(f)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			seen[m] = true
		}
	}
	var out []*devMeta
	for _, m := range b.Meta {
		if seen[m] {
			out = append(out, m)
		}
	}
	return out, nil
}

func reqDeleteMeta(b *book, raw json.RawMessage) (any, error) {
	var req struct {
		DataFilter dataFilterIn `json:"dataFilter"`
	}
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	matched, err := b.matchFilter(req.DataFilter)
	if err != nil {
		return nil, err
	}
	gone := map[*devMeta]bool{}
	deleted := []any{}
	for _, m := range matched {
		gone[m] = true
		deleted = append(deleted, metaJSON(m))
	}
	kept := b.Meta[:0]
	for _, m := range b.Meta {
		if !gone[m] {
			kept = append(kept, m)
		}
	}
	b.Meta = kept
	return map[string]any{"deletedDeveloperMetadata": deleted}, nil
}

func (e *Emulator) apiMetaSearch(c call) (result, error) {
	var body struct {
		DataFilters []json.RawMessage `json:"dataFilters"`
	}
	if err := decodeBody(c.body, &body); err != nil {
		return result{}, err
	}
	out := map[string]any{}
	err := e.withBook(c.id, func(b *book) error {
		matches, err := b.searchMeta(body.DataFilters)
		if len(matches) > 0 {
			out["matchedDeveloperMetadata"] = matches
		}
		return err
	})
	return result{body: out}, err
}

func (b *book) searchMeta(filters []json.RawMessage) ([]any, error) {
	var order []*devMeta
	matchedBy := map[*devMeta][]json.RawMessage{}
	for _, raw := range filters {
		var f dataFilterIn
		if err := decodeReq(raw, &f); err != nil {
			return nil, err
		}
		ms, err := b.matchFilter(f)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if matchedBy[m] == nil {
				order = append(order, m)
			}
			matchedBy[m] = append(matchedBy[m], raw)
		}
	}
	var out []any
	for _, m := range order {
		out = append(out, map[string]any{"developerMetadata": metaJSON(m), "dataFilters": matchedBy[m]})
	}
	return out, nil
}

func (e *Emulator) apiMetaGet(c call) (result, error) {
	id, perr := strconv.ParseInt(c.rng, 10, 64)
	var out map[string]any
	err := e.withBook(c.id, func(b *book) error {
		for _, m := range b.Meta {
			if perr == nil && m.ID == id {
				out = metaJSON(m)
				return nil
			}
		}
		return errorf(ErrNotFound, "Requested entity was not found.")
	})
	return result{body: out}, err
}
