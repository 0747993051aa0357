package sheetsio

// GridRequest selects what ReadGridRows reads of one tab with grid data:
// the whole tab (Whole), or its header row and Rows (1-based sheet row
// numbers above 1, in any order; duplicates are read once). ByID reads a
// whole tab by its known sheetId within the one request, as partial tabs
// are read, where a read of only whole tabs otherwise enumerates the
// spreadsheet's tabs first (a second request): a poll of the tab a wake
// named.
type GridRequest struct {
	Whole bool
	Rows  []int
	ByID  bool
}
