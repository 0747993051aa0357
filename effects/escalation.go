package effects

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// TabObservation is what one pass hands the store for one tab.
//   - Grid is the grid read: whole, or (Grid.Partial) the header and only
//     the rows the values read could not certify, read after it.
//   - Values is the values read of the same pass (nil for a safety full
//     scan or a cleanup): for a partial grid it is the whole-tab view, by
//     anchor and row hash, of every row the grid read left out.
//   - Expect is the expectation the values read was certified against,
//     computed at the pass's base checkpoint (nil: the store computes it).
type TabObservation struct {
	Grid   *sheetsio.GridSnapshot
	Values *sheetsio.TabSnapshot
	Expect *aggregates.TabExpectation
}

// maxGridRuns bounds how many runs of consecutive rows an escalation reads
// with grid data; a tab needing more is read whole.
const maxGridRuns = 500

// gridPlan picks what the escalation of one uncertified tab reads with
// grid data: the rows of snap (1-based sheet rows) that the values read
// could not certify against x (escalatedRows), or the whole tab when the
// values read is blocked or missing, shows no data row at all (a formula
// showing "" is only visible in grid data), or the rows form more than
// maxGridRuns runs.
func gridPlan(snap *sheetsio.TabSnapshot, x aggregates.TabExpectation) sheetsio.GridRequest {
	if snap == nil || snap.Err != nil {
		return sheetsio.GridRequest{Whole: true}
	}
	rows, data := escalatedRows(snap, x)
	if data == 0 || runs(rows) > maxGridRuns {
		return sheetsio.GridRequest{Whole: true}
	}
	return sheetsio.GridRequest{Rows: rows}
}

// escalatedRows returns the sheet rows (1-based, ascending) of snap's
// non-blank rows that the values read cannot certify, and how many
// non-blank rows snap has. A row is certified when its hash is recorded
// evidence, or when it shows exactly the expected hash of its anchor and
// no other row shows that anchor: every copy of a duplicated anchor is
// escalated (I16), unless its hash is evidence.
func escalatedRows(snap *sheetsio.TabSnapshot, x aggregates.TabExpectation) (rows []int, data int) {
	copies := make(map[string]int, len(snap.Rows))
	for i := range snap.Rows {
		if !blankRow(snap.Rows[i].Cells) {
			copies[snap.Rows[i].Anchor]++
			data++
		}
	}
	for i := range snap.Rows {
		r := &snap.Rows[i]
		if blankRow(r.Cells) || x.Evidence[r.Hash] || (r.Anchor != "" && copies[r.Anchor] == 1 && x.Rows[r.Anchor] == r.Hash && !x.Lost[r.Anchor]) {
			continue
		}
		rows = append(rows, r.SheetRow)
	}
	return rows, data
}

// runs counts the runs of consecutive numbers in ascending rows.
func runs(rows []int) int {
	n := 0
	for i, r := range rows {
		if i == 0 || r != rows[i-1]+1 {
			n++
		}
	}
	return n
}
