package sheetsio

import (
	"context"
	"maps"
	"sync"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Workbook binds a Schema to one spreadsheet: it remembers each logical
// tab's sheetId, so tabs are addressed by id and a renamed tab keeps
// working. Obtain one from Provision (or OpenWorkbook with persisted ids).
// Safe for concurrent use. It never exposes the spreadsheet id in logs.
type Workbook struct {
	id     string
	schema *layout.Schema
	mu     sync.Mutex
	ids    map[string]int64
	trust  trust // what the last reads and append responses verified (trust.go)
}

// OpenWorkbook restores a Workbook from sheetIDs persisted earlier
// (Workbook.SheetIDs); missing entries are rediscovered on the next call
// that enumerates the spreadsheet. It performs no network call.
func OpenWorkbook(spreadsheetID string, schema *layout.Schema, sheetIDs map[string]int64) *Workbook {
	ids := map[string]int64{}
	maps.Copy(ids, sheetIDs)
	return &Workbook{id: spreadsheetID, schema: schema, ids: ids}
}

// Schema returns the layout the Workbook was opened with.
func (w *Workbook) Schema() *layout.Schema { return w.schema }

// SheetIDs returns a copy of the logical tab name → sheetId bindings known
// so far, for persistence.
func (w *Workbook) SheetIDs() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.ids)
}

func (w *Workbook) bind(name string, id int64) {
	w.mu.Lock()
	w.ids[name] = id
	w.mu.Unlock()
}

func (w *Workbook) known(name string) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, ok := w.ids[name]
	return id, ok
}

// sheetInfo is one tab as enumerated.
type sheetInfo struct {
	ID     int64
	Title  string
	Hidden bool
	Rows   int64
	Cols   int64
}

const enumerateFields = "sheets(properties(sheetId,title,hidden,gridProperties(rowCount,columnCount)))"

// enumerate lists the spreadsheet's tabs with one paced, retried read.
func (p *Provider) enumerate(ctx context.Context, w *Workbook) ([]sheetInfo, error) {
	var ss *sheets.Spreadsheet
	err := p.read(ctx, "enumerate", func(ctx context.Context) error {
		var err error
		ss, err = p.svc.Spreadsheets.Get(w.id).Fields(enumerateFields).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]sheetInfo, 0, len(ss.Sheets))
	for _, s := range ss.Sheets {
		if s.Properties == nil {
			continue
		}
		info := sheetInfo{ID: s.Properties.SheetId, Title: s.Properties.Title, Hidden: s.Properties.Hidden}
		if g := s.Properties.GridProperties; g != nil {
			info.Rows, info.Cols = g.RowCount, g.ColumnCount
		}
		out = append(out, info)
	}
	return out, nil
}

// resolve maps logical tab names to enumerated tabs: first by the bound
// sheetId, then by the stable sheetId Provision assigns, then by exact title
// (only tabs not already claimed). It records new bindings in w.
func (w *Workbook) resolve(infos []sheetInfo) map[string]sheetInfo {
	byID := map[int64]sheetInfo{}
	for _, s := range infos {
		byID[s.ID] = s
	}
	out, claimed := map[string]sheetInfo{}, map[int64]bool{}
	for _, t := range w.schema.Tabs() {
		if id, ok := w.known(t.Name); ok {
			if s, ok := byID[id]; ok {
				out[t.Name], claimed[id] = s, true
			}
		}
	}
	for _, t := range w.schema.Tabs() {
		if _, done := out[t.Name]; done {
			continue
		}
		if s, ok := w.match(t.Name, byID, infos, claimed); ok {
			out[t.Name], claimed[s.ID] = s, true
			w.bind(t.Name, s.ID)
		}
	}
	return out
}

func (w *Workbook) match(name string, byID map[int64]sheetInfo, infos []sheetInfo, claimed map[int64]bool) (sheetInfo, bool) {
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
