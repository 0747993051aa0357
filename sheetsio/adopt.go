package sheetsio

import (
	"context"
	"strings"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// KeptSuffix ends the title an adopted tab is kept under once its rows
// are in the store: "Airports" becomes "Airports (before hikoutei)".
const KeptSuffix = " (before hikoutei)"

// KeptTitle is the title an adopted tab is kept under: title itself when
// it already is a kept tab (a second adoption of rows a person fixed
// there renames nothing).
func KeptTitle(title string) string {
	if strings.HasSuffix(title, KeptSuffix) {
		return title
	}
	return title + KeptSuffix
}

// PlainTab is a tab people kept, read once with grid data (so a formula,
// an error value or a merged cell shows as such, never as a value): Rows
// from row 1 (the header), each as long as its last cell with content.
// Found is false when the spreadsheet has no tab of that title; Titles
// lists every tab's title either way.
type PlainTab struct {
	Title   string
	SheetID int64
	Found   bool
	Titles  []string
	Rows    [][]cell.Observed
}

// TabAdopter is what adopting a tab asks of a client besides Client: one
// read of a tab by title, and the fenced rename that keeps it.
type TabAdopter interface {
	// ReadPlainTab lists the spreadsheet's tabs and reads the tab titled
	// title with grid data: one enumeration and one spreadsheets.get.
	// Errors: read errors (*Error).
	ReadPlainTab(ctx context.Context, spreadsheetID, title string) (*PlainTab, error)
	// RenameTab renames the tab sheetID from `from` to `to`, fenced like
	// a dispatch (the authority row must show f, or be vacant, and is
	// mirrored in the same batchUpdate when it is not current). Nothing
	// else of the tab changes. Errors: CodeTabChanged (the tab is gone,
	// no longer titled from, or to is taken), the authority's codes, and
	// a *WriteError.
	RenameTab(ctx context.Context, w *Workbook, sheetID int64, from, to string, f Fence) error
}
