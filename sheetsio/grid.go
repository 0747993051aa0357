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
// Body is the digest of the whole read the tab came from (ReadGridKnown;
// zero when not digested), the same for every tab of one read. Undecoded
// marks a tab of a read whose Body was the digest the caller knew: the
// response is what that earlier read received, byte for byte, so nothing
// was decoded (Header and Rows are empty). Empty marks a whole read of a
// tab that holds nothing at all, header included (no value, formula or
// error value in any cell): Err then says its header is missing.
type GridSnapshot struct {
	Tab       string
	SheetID   int64
	Header    layout.HeaderReport
	Err       error
	Rows      []GridRow
	Partial   bool
	Body      BodyDigest
	Undecoded bool
	Empty     bool
}

// BodyDigest is the SHA-256 of a whole read: which sheet each requested
// tab resolved to, then every byte of the response body. Two reads with
// the same digest received the same answer. The zero value is no digest.
type BodyDigest [32]byte

// IsZero reports whether d is no digest.
func (d BodyDigest) IsZero() bool { return d == BodyDigest{} }
