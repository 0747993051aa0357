package converge

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Kind is one thing a person (or the campaign's own hand) does to a run.
type Kind int

// The kinds of damage, then the acts that are not damage but disturb a
// run: a legitimate edit of an Input cell, a restart of the store, and
// a switch of the spreadsheet id (the store reopened on another one).
const (
	DeleteSystemTab Kind = iota
	DeleteInputTab
	ClearSystemRows // every data row cleared, header kept
	ClearInputRows
	ClearSystemAll // everything, header included
	ClearInputAll
	DeleteSystemRows
	DeleteInputRows
	EditSystemCells
	DriftHeader // a header cell renamed: the operator restores it
	ReplaceSpreadsheet
	EditInputCells
	Restart
	SwitchSpreadsheet
	kindCount
)

var kindNames = [kindCount]string{"delete_system_tab", "delete_input_tab", "clear_system_rows", "clear_input_rows",
	"clear_system_all", "clear_input_all", "delete_system_rows", "delete_input_rows", "edit_system_cells",
	"drift_header", "replace_spreadsheet", "edit_input_cells", "restart", "switch_spreadsheet"}

func (k Kind) String() string {
	if k < 0 || k >= kindCount {
		return fmt.Sprintf("kind(%d)", int(k))
	}
	return kindNames[k]
}

// damageKinds are the kinds drawn as person-style damage.
var damageKinds = []Kind{DeleteSystemTab, DeleteInputTab, ClearSystemRows, ClearInputRows, ClearSystemAll, ClearInputAll,
	DeleteSystemRows, DeleteInputRows, EditSystemCells, DriftHeader, ReplaceSpreadsheet}

// Tabs of the campaign's entity.
var (
	systemTab = layout.SystemTabName("Part")
	inputTab  = layout.InputTabName("Part")
)

// person is a person at the spreadsheet of a run.
type person struct {
	p   *emulator.Person
	rng *rand.Rand
}

// act does one kind of damage; done is false when it could not be done
// (e.g. the tab is gone or has no data rows): nothing was changed.
func (p *person) act(k Kind) (done bool) {
	switch k {
	case DeleteSystemTab:
		return p.p.DeleteTab(systemTab) == nil
	case DeleteInputTab:
		return p.p.DeleteTab(inputTab) == nil
	case ClearSystemRows, ClearInputRows:
		return p.clear(tabOf(k == ClearSystemRows), 2)
	case ClearSystemAll, ClearInputAll:
		return p.clear(tabOf(k == ClearSystemAll), 1)
	case DeleteSystemRows, DeleteInputRows:
		return p.deleteRows(tabOf(k == DeleteSystemRows))
	case EditSystemCells:
		return p.editSystem()
	case DriftHeader:
		return p.driftHeader(tabOf(p.rng.IntN(2) == 0))
	}
	return false
}

func tabOf(system bool) string {
	if system {
		return systemTab
	}
	return inputTab
}

// clear clears a tab from row `from` down, when it shows anything there.
func (p *person) clear(tab string, from int) bool {
	rows, err := p.p.Displayed(tab)
	if err != nil || len(rows) < from {
		return false
	}
	return p.p.ClearTab(tab, from) == nil
}

// deleteRows deletes one to three adjacent data rows.
func (p *person) deleteRows(tab string) bool {
	rows, err := p.p.Displayed(tab)
	if err != nil || len(rows) < 2 {
		return false
	}
	first := 2 + p.rng.IntN(len(rows)-1)
	n := 1 + p.rng.IntN(min(3, len(rows)-first+1))
	return p.p.DeleteRows(tab, first, n) == nil
}

// editSystem types over one to three cells of System data rows (anchors
// included: a person may type anywhere).
func (p *person) editSystem() bool {
	done := false
	for range 1 + p.rng.IntN(3) {
		rows, err := p.p.Displayed(systemTab)
		if err != nil || len(rows) < 2 || len(rows[0]) == 0 {
			return done
		}
		r, c := 1+p.rng.IntN(len(rows)-1), p.rng.IntN(min(len(rows[0]), 26))
		done = p.p.Type(systemTab, cellRef(c, r+1), fmt.Sprintf("person-%d", p.rng.IntN(1000))) == nil || done
	}
	return done
}

// editInput types a legitimate value into a user column of an Input row:
// the poller accepts it as an edit or opens a conflict. It returns the
// anchor of the row and the column it edited ("" when it edited nothing).
func (p *person) editInput() (string, string) {
	rows, err := p.p.Displayed(inputTab)
	if err != nil || len(rows) < 2 {
		return "", ""
	}
	col := []string{"sku", "qty", "notes"}[p.rng.IntN(3)]
	c, a := indexOf(rows[0], col), indexOf(rows[0], layout.AnchorHeader)
	if c < 0 || c >= 26 || a < 0 {
		return "", ""
	}
	v := fmt.Sprintf("person-%d", p.rng.IntN(1000))
	if col == "qty" {
		v = fmt.Sprint(p.rng.IntN(1000))
	}
	r := 1 + p.rng.IntN(len(rows)-1)
	if a >= len(rows[r]) || p.p.Type(inputTab, cellRef(c, r+1), v) != nil {
		return "", ""
	}
	return rows[r][a], col
}

// driftHeader renames one header cell of a tab.
func (p *person) driftHeader(tab string) bool {
	rows, err := p.p.Displayed(tab)
	if err != nil || len(rows) == 0 || len(rows[0]) == 0 {
		return false
	}
	c := p.rng.IntN(min(len(rows[0]), 26))
	return p.p.Type(tab, cellRef(c, 1), "renamed "+rows[0][c]) == nil
}

// restoreHeader is the operator's act on a tab that sync reports blocked
// by header drift (sheet_header_drift): put the header row back. When
// row 1 shows a data row (a row of the store's written into the header
// row of a tab a person had emptied, see Result.HeaderOverwritten), a row
// is inserted above it first. It reports whether it acted and whether
// row 1 was a data row.
func (p *person) restoreHeader(tab string, want []string) (acted, dataRow bool) {
	rows, err := p.p.Displayed(tab)
	if err != nil || len(rows) == 0 {
		return false, false
	}
	a, id := indexOf(want, layout.AnchorHeader), indexOf(want, "id")
	if a >= 0 && id >= 0 && max(a, id) < len(rows[0]) && rows[0][a] != "" && rows[0][a] == rows[0][id] { // a part's row: its anchor is its id
		if p.p.InsertRows(tab, 1, 1) != nil {
			return false, true
		}
		rows[0], dataRow = nil, true
	}
	for c, h := range want {
		if c >= len(rows[0]) || rows[0][c] != h {
			acted = p.p.Type(tab, cellRef(c, 1), h) == nil || acted
		}
	}
	return acted, dataRow
}

func cellRef(col, row int) string { return fmt.Sprintf("%c%d", 'A'+col, row) }

func indexOf(header []string, col string) int {
	for i, h := range header {
		if strings.EqualFold(h, col) {
			return i
		}
	}
	return -1
}
