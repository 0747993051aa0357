package gsheets

import (
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// A pass fans out into parallel lanes only while the grid is known and
// the whole pass, every append a new row, fits the spreadsheet: lanes
// check capacity each on its own read and could pass the limit together.
func TestFansOutOnlyWhileTheWholePassFits(t *testing.T) {
	p := &Provider{}
	w := sheetsio.OpenWorkbook(testSheetID, testSchema(t, "Part", "Bolt"), map[string]int64{"Part_System": 1, "Bolt_System": 2})
	pass := sheetsio.Batch{Ops: []sheetsio.Op{
		{Tab: "Part_System", Kind: sheetsio.OpAppend}, {Tab: "Bolt_System", Kind: sheetsio.OpAppend},
	}}
	if p.FansOut(w, pass) {
		t.Fatal("fans out before the grid was read")
	}
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	w.NoteGrid(map[int64]sheetsio.TabGrid{1: {Rows: 10, Cols: 10}, 2: {Rows: 10, Cols: 10}}, at)
	if !p.FansOut(w, pass) {
		t.Fatal("does not fan out with the spreadsheet nearly empty")
	}
	room := sheetsio.MaxSpreadsheetCells - 200 - 15 // the two tabs, and room for one appended row but not two
	w.NoteGrid(map[int64]sheetsio.TabGrid{1: {Rows: 10, Cols: 10}, 2: {Rows: 10, Cols: 10}, 3: {Rows: int64(room), Cols: 1}}, at)
	if p.FansOut(w, pass) {
		t.Fatal("fans out a pass that fits only one tab at a time")
	}
	if !p.FansOut(w, sheetsio.Batch{Ops: pass.Ops[:1]}) {
		t.Fatal("does not fan out a pass that fits")
	}
}
