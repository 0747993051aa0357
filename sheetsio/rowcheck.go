package sheetsio

import "github.com/hikoutei/hikoutei-go/sheetsio/cell"

// RowCheck certifies one tab while its values read streams in, from a
// digest of each data row (cell.RowDigest: anchor and row hash, computed
// from the wire without decoding the cells). A read given a RowCheck for
// a tab decodes the tab's rows only when the check cannot certify it: an
// unchanged tab costs no per-row allocation, a changed one is decoded as
// a read without a check decodes it (TabSnapshot.Digested tells which).
type RowCheck interface {
	// Begin starts a read of the tab (a retried read begins again).
	Begin()
	// Row is the data row at sheetRow (1-based); false: the tab cannot be
	// certified (Row is not called again before the next Begin).
	Row(sheetRow int, d cell.RowDigest) bool
	// Done reports whether the rows seen certify the tab.
	Done() bool
}
