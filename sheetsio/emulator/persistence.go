package emulator

import (
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"

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
	dec := json.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return errorf(ErrState, "state is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errorf(ErrState, "state has data after its JSON document")
	}
	if doc.Version != stateVersion {
		return errorf(ErrState, "unsupported state version %d", doc.Version)
	}
	books := map[string]*book{}
	for _, b := range doc.Spreadsheets {
		if err := validateBook(b); err != nil {
			return err
		}
		if _, dup := books[b.ID]; dup {
			return errorf(ErrState, "two spreadsheets share one id")
		}
		books[b.ID] = b
	}
	e.mu.Lock()
	e.books = books
	e.mu.Unlock()
	return nil
}

// validateBook checks what the API itself guarantees: ids, unique tabs,
// grids within Google's limits (checked before multiplying, so sizes
// cannot overflow), rows inside their grid, and no null entries that later
// requests would dereference.
func validateBook(b *book) error {
	if b == nil || b.ID == "" || len(b.Sheets) == 0 {
		return errorf(ErrState, "a spreadsheet needs an id and at least one tab")
	}
	ids, titles, cells := map[int64]bool{}, map[string]bool{}, 0
	for _, s := range b.Sheets {
		if s == nil || checkGrid(s.RowCount, s.ColCount) != nil || len(s.Rows) > s.RowCount {
			return errorf(ErrState, "a tab has an invalid grid")
		}
		if cells += s.RowCount * s.ColCount; cells > maxCellsPerBook {
			return errorf(ErrState, "a spreadsheet is over the %d-cell limit", maxCellsPerBook)
		}
		key := strings.ToLower(s.Title)
		if s.ID < 0 || ids[s.ID] || strings.TrimSpace(s.Title) == "" || titles[key] {
			return errorf(ErrState, "a tab has a missing or duplicate sheetId or title")
		}
		ids[s.ID], titles[key] = true, true
		for _, row := range s.Rows {
			if len(row) > s.ColCount {
				return errorf(ErrState, "a tab has a row wider than its grid")
			}
		}
	}
	for _, m := range b.Meta {
		if m == nil || m.ID <= 0 {
			return errorf(ErrState, "a developer metadata entry is null or has no id")
		}
	}
	return nil
}

func sortStrings(s []string) { sort.Strings(s) }

func a1Col(c int) string { return a1.ColumnLabel(c) }
