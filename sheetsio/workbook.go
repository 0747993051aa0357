package sheetsio

import (
	"maps"
	"sync"

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
	state  any // the Client's own state for this workbook (ClientState)
	grid   gridLog
	// created are the logical tabs the Client created for this
	// Workbook (NoteCreated).
	created map[string]bool
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

// SpreadsheetID returns the id of the spreadsheet the Workbook is bound
// to, for a Client's requests. Never log it.
func (w *Workbook) SpreadsheetID() string { return w.id }

// Bind records that the logical tab name is the spreadsheet's tab
// sheetId id (a Client calls it when it resolves or creates a tab).
func (w *Workbook) Bind(name string, id int64) {
	w.mu.Lock()
	w.ids[name] = id
	w.mu.Unlock()
}

// SheetID returns the sheetId bound to the logical tab name, if any.
func (w *Workbook) SheetID(name string) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id, ok := w.ids[name]
	return id, ok
}

// ClientState returns the state a Client keeps for this Workbook (what
// its last reads verified, for instance), creating it with create on the
// first call. A Workbook serves one Client: every call must pass a create
// that returns the same type.
func (w *Workbook) ClientState(create func() any) any {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == nil {
		w.state = create()
	}
	return w.state
}

// NoteCreated records that the Client created the logical tabs names
// for this Workbook (Provision, Reprovision: empty but for their header),
// so they carry no cell note an earlier run left.
func (w *Workbook) NoteCreated(names ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range names {
		if w.created == nil {
			w.created = map[string]bool{}
		}
		w.created[n] = true
	}
}

// Created reports whether the Client created the logical tab name for
// this Workbook (NoteCreated).
func (w *Workbook) Created(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.created[name]
}
