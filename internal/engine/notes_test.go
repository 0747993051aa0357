package engine_test

import (
	"strings"
	"testing"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// noteAt reads, through the real client, the note of column on the Input
// row whose anchor is anchor ("" = none). It counts as one emulator read.
func (x *synced) noteAt(anchor, column string) string {
	x.t.Helper()
	svc, err := sheets.NewService(ctx, option.WithEndpoint(x.sheet.URL), option.WithoutAuthentication())
	mustT(x.t, err)
	ref := x.cellRef(partInput, anchor, column)
	ss, err := svc.Spreadsheets.Get(sheetID).Ranges(partInput + "!" + ref).IncludeGridData(true).
		Fields("sheets.data.rowData.values.note").Do()
	mustT(x.t, err)
	if len(ss.Sheets) == 0 || len(ss.Sheets[0].Data) == 0 || len(ss.Sheets[0].Data[0].RowData) == 0 ||
		len(ss.Sheets[0].Data[0].RowData[0].Values) == 0 {
		return ""
	}
	return ss.Sheets[0].Data[0].RowData[0].Values[0].Note
}

// passCost runs one dispatcher pass and returns the requests it sent.
func (x *synced) passCost() emulator.Counters {
	x.t.Helper()
	x.emu.ResetCounters()
	x.pass()
	return x.emu.Counters(sheetID)
}

// renamePart commits a system-owned change of part id (one System row
// effect, nothing on the Input tab).
func renamePart(t *testing.T, x *synced, id, name string) {
	t.Helper()
	p := x.part(id)
	p.Name = name
	commit(t, x.Store, p)
}

// With one batch a pass (Workers 1) a note rides in the batchUpdate the
// pass sends anyway: the pass costs what a pass without it does.
func TestQuarantinedCellGetsANoteInTheSamePassBudgetAndLosesItWhenFixed(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil, oneBatch)
	seedParts(t, x, 3)
	renamePart(t, x, "1", "plain pass")
	plain := x.passCost() // a pass that sends one effect and no note
	x.drain()

	x.typeIn("2", "qty", "many") // text in a number column
	x.poll()
	if q := x.quarantine(partInput); len(q["2"]) != 1 {
		t.Fatalf("quarantine %v", q)
	}
	visible := x.visible(partInput, "2")
	renamePart(t, x, "3", "pass with a note")
	withNote := x.passCost()
	if withNote.Reads != plain.Reads || withNote.Writes != plain.Writes {
		t.Fatalf("a note cost extra requests: pass %+v, without notes %+v", withNote, plain)
	}
	note := x.noteAt("2", "qty")
	if !strings.Contains(note, "not imported") || len(note) > 200 || strings.Contains(note, "\n") {
		t.Fatalf("note %q", note)
	}
	if x.cellOf(partInput, "2", "qty") != "many" || x.visible(partInput, "2") != visible {
		t.Fatalf("a note changed the row: %v", x.rowOf(partInput, "2"))
	}
	before := x.head()
	x.poll()
	x.fullScan()
	if h := x.head(); h != before {
		t.Fatalf("a note was read back as evidence or an edit: %v", x.eventTypes(before))
	}
	if c := x.passCost(); c.Writes != 0 {
		t.Fatalf("a note already shown was written again: %+v", c)
	}

	x.typeIn("2", "qty", "7") // the person fixes the cell
	x.poll()
	if p := x.part("2"); p.Qty != 7 || len(x.quarantine(partInput)["2"]) != 0 {
		t.Fatalf("after the fix: %+v, quarantine %v", p, x.quarantine(partInput))
	}
	x.drain()
	x.pass()
	if note := x.noteAt("2", "qty"); note != "" {
		t.Fatalf("the note outlived the quarantine: %q", note)
	}
}

// With parallel lanes a note goes in the lane of its tab:
// a pass that renames a part (its System tab) while a note is due on the
// Input tab sends two batchUpdates on the pass's one read, never a read
// more than a pass without the note.
func TestQuarantinedCellNoteWithLanesCostsNoExtraRead(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil, anyLane)
	seedParts(t, x, 3)
	renamePart(t, x, "1", "plain pass")
	plain := x.passCost() // one effect, one tab: one lane
	x.drain()
	x.typeIn("2", "qty", "many")
	x.poll()
	renamePart(t, x, "3", "pass with a note")
	withNote := x.passCost()
	if withNote.Reads != plain.Reads || plain.Writes != 1 || withNote.Writes != 2 {
		t.Fatalf("a pass with a note on another tab cost %+v, without notes %+v: want the same reads, one write a lane", withNote, plain)
	}
	if note := x.noteAt("2", "qty"); !strings.Contains(note, "not imported") {
		t.Fatalf("note %q", note)
	}
}

func TestSyncConflictsShowsTimestampsAsDateTimesNotSerialNumbers(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	x.drain()
	want := x.clock.Now().UTC().Format("2006-01-02 15:04:05")
	if got := x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictOpenedAt); !strings.HasPrefix(got, want) {
		t.Fatalf("opened_at shows %q, want the date-time %s", got, want)
	}
	p := x.part("1")
	p.Qty = 6 // system wins (I12): the audit row gets resolved_at
	commit(t, x.Store, p)
	x.drain()
	if got := x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResolvedAt); !strings.HasPrefix(got, want) {
		t.Fatalf("resolved_at shows %q, want the date-time %s", got, want)
	}
}

func TestConflictedCellGetsANoteNamingSyncConflictsRemovedWhenResolved(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	visible := x.visible(partInput, "1")
	x.drain()
	note := x.noteAt("1", "qty")
	if !strings.Contains(note, "Sync_Conflicts") || !strings.Contains(note, "kept 5") {
		t.Fatalf("conflict note %q", note)
	}
	if x.visible(partInput, "1") != visible {
		t.Fatal("a note changed the row's visible hash")
	}
	before := x.head()
	x.poll()
	x.fullScan()
	if types := x.eventTypes(before); types[events.TypeCandidateDetected]+types[events.TypeObservationAccepted] != 0 {
		t.Fatalf("a note produced observations: %v", types)
	}

	p := x.part("1")
	p.Qty = 6 // a strictly higher revision: system wins (I12)
	commit(t, x.Store, p)
	x.drain()
	x.pass()
	if open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen); len(open) != 0 {
		t.Fatalf("still open: %+v", open)
	}
	if x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictStatus) != "RESOLVED" {
		t.Fatalf("audit row %v", x.rowOf(layout.ConflictsTab, c.ID))
	}
	if note := x.noteAt("1", "qty"); note != "" {
		t.Fatalf("the note outlived the conflict: %q", note)
	}
}

// personNote sets the note of a cell (A1 on tab) as a person would.
func (x *synced) personNote(tab, ref, text string) {
	x.t.Helper()
	svc, err := sheets.NewService(ctx, option.WithEndpoint(x.sheet.URL), option.WithoutAuthentication())
	mustT(x.t, err)
	ss, err := svc.Spreadsheets.Get(sheetID).Ranges(tab + "!" + ref).IncludeGridData(true).Fields("sheets.properties.sheetId,sheets.data.startRow,sheets.data.startColumn").Do()
	mustT(x.t, err)
	d := ss.Sheets[0].Data[0]
	g := &sheets.GridRange{SheetId: ss.Sheets[0].Properties.SheetId, StartRowIndex: d.StartRow, EndRowIndex: d.StartRow + 1,
		StartColumnIndex: d.StartColumn, EndColumnIndex: d.StartColumn + 1, ForceSendFields: []string{"SheetId", "StartRowIndex", "StartColumnIndex"}}
	req := &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{Range: g, Fields: "note",
		Rows: []*sheets.RowData{{Values: []*sheets.CellData{{Note: text}}}}}}
	_, err = svc.Spreadsheets.BatchUpdate(sheetID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{req}}).Do()
	mustT(x.t, err)
}

// noteOn reads the note of one A1 cell of tab.
func (x *synced) noteOn(tab, ref string) string {
	x.t.Helper()
	svc, err := sheets.NewService(ctx, option.WithEndpoint(x.sheet.URL), option.WithoutAuthentication())
	mustT(x.t, err)
	ss, err := svc.Spreadsheets.Get(sheetID).Ranges(tab + "!" + ref).IncludeGridData(true).Fields("sheets.data.rowData.values.note").Do()
	mustT(x.t, err)
	if len(ss.Sheets[0].Data[0].RowData) == 0 || len(ss.Sheets[0].Data[0].RowData[0].Values) == 0 {
		return ""
	}
	return ss.Sheets[0].Data[0].RowData[0].Values[0].Note
}

// A run does not know which notes an earlier run left: its first dispatch
// sweeps the Input tabs' data cells (inside the batchUpdate it sends
// anyway) before writing the notes wanted now, so a note written before a
// stop on a cell fixed since is removed. Notes outside the Input tabs'
// data cells (the header, another tab) are a person's and stay.
func TestANoteWrittenBeforeAStopIsRemovedWhenTheCellIsFixedAfterTheRestartWithinThePassBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	x := openSyncedOn(t, dir, sheet, nil, parts, oneBatch)
	seedParts(t, x, 3)
	renamePart(t, x, "1", "plain pass")
	plain := x.passCost() // a pass that sends one effect and no note
	x.drain()
	x.typeIn("2", "qty", "many")
	x.poll()
	x.pass()
	if note := x.noteAt("2", "qty"); !strings.Contains(note, "not imported") {
		t.Fatalf("note before the stop %q", note)
	}
	x.personNote(partInput, "B1", "a person's note on the header")
	x.personNote("Part_System", "B2", "a person's note on the System tab")
	mustT(t, x.Close())

	y := openSyncedOn(t, dir, restarted(t, sheet), x.clock, parts, oneBatch)
	y.typeIn("2", "qty", "7") // fixed while no note source knows the note
	y.poll()
	if p := y.part("2"); p.Qty != 7 || len(y.quarantine(partInput)["2"]) != 0 {
		t.Fatalf("after the fix: %+v, quarantine %v", p, y.quarantine(partInput))
	}
	y.typeIn("3", "qty", "lots") // a new quarantine: its note rides after the sweep
	y.poll()
	renamePart(t, y, "1", "first pass after the restart")
	if first := y.passCost(); first.Reads != plain.Reads || first.Writes != plain.Writes {
		t.Fatalf("the first pass after a restart cost %+v, a plain pass %+v", first, plain)
	}
	y.drain()
	if note := y.noteAt("2", "qty"); note != "" {
		t.Fatalf("a note written before the stop outlived the fix: %q", note)
	}
	if note := y.noteAt("3", "qty"); !strings.Contains(note, "not imported") {
		t.Fatalf("the note wanted now %q", note)
	}
	if a, b := y.noteOn(partInput, "B1"), y.noteOn("Part_System", "B2"); a == "" || b == "" {
		t.Fatalf("a person's notes outside the Input tabs' data cells were removed: %q %q", a, b)
	}
	if c := y.passCost(); c.Reads != 0 || c.Writes != 0 {
		t.Fatalf("an idle pass after the sweep cost %+v", c)
	}
}
