package sheetsio

import (
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// GridRow is one data row read through grid data: Cells (padded to the
// header width) tell typed values from formulas, error values and merged
// cells, for cell.DecodeObserved. Anchor and SheetRow are as in Row.
type GridRow struct {
	Anchor   string
	Cells    []cell.Observed
	SheetRow int
}

// GridSnapshot is one tab read with grid data (the metadata-preserving read
// a poller escalates to). Err is as in TabSnapshot; Rows excludes the header.
// Partial marks a read of some rows only (ReadGridRows): the header was
// validated from row 1 of the same read, and Rows holds exactly the
// requested rows in ascending SheetRow order, whatever they show now.
type GridSnapshot struct {
	Tab     string
	SheetID int64
	Header  layout.HeaderReport
	Err     error
	Rows    []GridRow
	Partial bool
}
