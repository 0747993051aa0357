package sheetsio

// GridRequest selects what ReadGridRows reads of one tab with grid data:
// the whole tab (Whole), or its header row and Rows (1-based sheet row
// numbers above 1, in any order; duplicates are read once).
type GridRequest struct {
	Whole bool
	Rows  []int
}
