package emulator

import (
	"encoding/json"
	"io"
	"sort"

	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// stateVersion is the schema version of Save's JSON document.
const stateVersion = 1

type stateDoc struct {
	Version      int     `json:"version"`
	Spreadsheets []*book `json:"spreadsheets"`
}

// Save writes every spreadsheet (cells, notes, tabs, merges, protected
// ranges, developer metadata) as one JSON document. Counters, quota
// windows and faults are not saved.
func (e *Emulator) Save(w io.Writer) error {
	e.mu.Lock()
	doc := stateDoc{Version: stateVersion}
	for _, id := range e.sortedIDsLocked() {
		doc.Spreadsheets = append(doc.Spreadsheets, e.books[id].clone())
	}
	e.mu.Unlock()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// Load replaces all spreadsheets with those in a document written by Save.
// Errors match ErrState (bad JSON, unknown version, invalid content);
// on error the current state is kept.
func (e *Emulator) Load(r io.Reader) error {
	var doc stateDoc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return errorf(ErrState, "state is not valid JSON: %v", err)
	}
	if doc.Version != stateVersion {
		return errorf(ErrState, "unsupported state version %d", doc.Version)
	}
	books := map[string]*book{}
	for _, b := range doc.Spreadsheets {
		if err := validateBook(b); err != nil {
			return err
		}
		books[b.ID] = b
	}
	e.mu.Lock()
	e.books = books
	e.mu.Unlock()
	return nil
}

func validateBook(b *book) error {
	if b == nil || b.ID == "" || len(b.Sheets) == 0 {
		return errorf(ErrState, "a spreadsheet needs an id and at least one tab")
	}
	for _, s := range b.Sheets {
		if s == nil || s.RowCount < 1 || s.ColCount < 1 || len(s.Rows) > s.RowCount {
			return errorf(ErrState, "a tab has an invalid grid")
		}
		for _, row := range s.Rows {
			if len(row) > s.ColCount {
				return errorf(ErrState, "a tab has a row wider than its grid")
			}
		}
	}
	return nil
}

func sortStrings(s []string) { sort.Strings(s) }

func a1Col(c int) string { return a1.ColumnLabel(c) }
