package sheetsio

// SurplusCopy picks the row an OpDelete removes when its anchor shows on
// several rows (I16): only when there are at least two and EVERY one shows
// exactly expectedHash — identical copies, so deleting the bottom-most one
// is a full-row compare-and-set whichever copy it is, and the row left
// still shows expectedHash (the effect's written hash). Any difference
// between the copies is ambiguous: ok is false and the delete fails closed
// (ReasonAnchorDuplicated). Surplus-row cleanup of Input tabs (I21) relies
// on it.
func SurplusCopy(rows []Row, expectedHash string) (Row, bool) {
	if len(rows) < 2 || expectedHash == "" {
		return Row{}, false
	}
	last := rows[0]
	for _, r := range rows {
		if r.Hash != expectedHash {
			return Row{}, false
		}
		if r.SheetRow > last.SheetRow {
			last = r
		}
	}
	return last, true
}

// DistinctCopy picks the row an OpDelete removes when its anchor shows on
// several rows that differ: the one copy whose full-row hash is
// expectedHash (a compare-and-set on that row alone). left is the hash
// the anchor still shows after the delete when exactly one other copy
// remains ("" otherwise). ok is false unless exactly one copy matches and
// another does not. Anti-entropy repairs a System tab's duplicated anchor
// with it (a person typed an existing anchor into another row).
func DistinctCopy(rows []Row, expectedHash string) (row Row, left string, ok bool) {
	n := 0
	for _, r := range rows {
		if r.Hash == expectedHash {
			row, n = r, n+1
		}
	}
	if len(rows) < 2 || expectedHash == "" || n != 1 {
		return Row{}, "", false
	}
	if len(rows) == 2 {
		for _, r := range rows {
			if r.Hash != expectedHash {
				left = r.Hash
			}
		}
	}
	return row, left, true
}
