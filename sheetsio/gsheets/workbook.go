package gsheets

import (
	"context"

	"github.com/cespare/xxhash/v2"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"
)

// sheetInfo is one tab as enumerated. Formats is the value of the tab's
// formats marker (formatsMarkerKey) when the enumeration asked for it.
type sheetInfo struct {
	ID      int64
	Title   string
	Hidden  bool
	Rows    int64
	Cols    int64
	Formats string
}

const enumerateFields = "sheets(properties(sheetId,title,hidden,gridProperties(rowCount,columnCount)))"

// enumerate lists the spreadsheet's tabs with one paced, retried read and
// records their grid sizes in w (Workbook.NoteGrid).
func (p *Provider) enumerate(ctx context.Context, w *sheetsio.Workbook) ([]sheetInfo, error) {
	at := p.cfg.Now()
	ss, err := p.getSpreadsheet(ctx, w, enumerateFields)
	if err != nil {
		return nil, err
	}
	infos := sheetInfos(ss)
	noteGrid(w, infos, at)
	return infos, nil
}

// getSpreadsheet is one paced, retried spreadsheets.get limited to fields.
func (p *Provider) getSpreadsheet(ctx context.Context, w *sheetsio.Workbook, fields string) (*sheets.Spreadsheet, error) {
	var ss *sheets.Spreadsheet
	err := p.read(ctx, "enumerate", func(ctx context.Context) error {
		var err error
		ss, err = p.svcOf(ctx).Spreadsheets.Get(w.SpreadsheetID()).Fields(googleapi.Field(fields)).Context(ctx).Do()
		return err
	})
	return ss, err
}

func sheetInfos(ss *sheets.Spreadsheet) []sheetInfo {
	out := make([]sheetInfo, 0, len(ss.Sheets))
	for _, s := range ss.Sheets {
		if s.Properties == nil {
			continue
		}
		info := sheetInfo{ID: s.Properties.SheetId, Title: s.Properties.Title, Hidden: s.Properties.Hidden,
			Formats: formatsMarker(s.DeveloperMetadata)}
		if g := s.Properties.GridProperties; g != nil {
			info.Rows, info.Cols = g.RowCount, g.ColumnCount
		}
		out = append(out, info)
	}
	return out
}

// resolve maps logical tab names to enumerated tabs: first by the bound
// sheetId, then by the stable sheetId Provision assigns, then by exact title
// (only tabs not already claimed). It records new bindings in w.
func resolve(w *sheetsio.Workbook, infos []sheetInfo) map[string]sheetInfo {
	byID := map[int64]sheetInfo{}
	for _, s := range infos {
		byID[s.ID] = s
	}
	out, claimed := map[string]sheetInfo{}, map[int64]bool{}
	for _, t := range w.Schema().Tabs() {
		if id, ok := w.SheetID(t.Name); ok {
			if s, ok := byID[id]; ok {
				out[t.Name], claimed[id] = s, true
			}
		}
	}
	for _, t := range w.Schema().Tabs() {
		if _, done := out[t.Name]; done {
			continue
		}
		if s, ok := match(w, t.Name, byID, infos, claimed); ok {
			out[t.Name], claimed[s.ID] = s, true
			w.Bind(t.Name, s.ID)
		}
	}
	return out
}

func match(w *sheetsio.Workbook, name string, byID map[int64]sheetInfo, infos []sheetInfo, claimed map[int64]bool) (sheetInfo, bool) {
	if s, ok := byID[stableSheetID(name, 0)]; ok && !claimed[s.ID] {
		return s, true
	}
	for _, s := range infos {
		if s.Title == name && !claimed[s.ID] {
			return s, true
		}
	}
	return sheetInfo{}, false
}

// stableSheetID derives a deterministic positive sheetId (< 2^31) for a
// logical tab; salt resolves collisions with existing tabs.
func stableSheetID(name string, salt int) int64 {
	h := xxhash.Sum64String(name)
	return int64((h+uint64(salt))%(1<<31-2)) + 1
}
