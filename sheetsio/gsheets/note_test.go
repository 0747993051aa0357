package gsheets

import (
	"google.golang.org/api/sheets/v4"

	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func TestNotesRideInTheDispatchBatchUpdateAndNeverChangeTheRowHash(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t, "Part"))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	in := layout.InputTabName("Part")
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp(in, "a1", map[string]any{"id": "a1", "qty": int64(5)})}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	hash := res.Ops[0].WrittenHash
	sys := layout.SystemTabName("Part")
	before := h.counters()
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp(sys, "a1", partValues("a1", 5))},
		Notes: []sheetsio.Note{{Tab: in, Anchor: "a1", Column: "qty", Text: "why"}, {Tab: in, Anchor: "gone", Column: "qty", Text: "x"},
			{Tab: in, Anchor: "a1", Column: "nope", Text: "x"}}})
	after := h.counters()
	if c := (emulator.Counters{Reads: after.Reads - before.Reads, Writes: after.Writes - before.Writes}); c != (emulator.Counters{Reads: 1, Writes: 1}) {
		t.Fatalf("a dispatch with notes cost %+v, want 1 read + 1 write", c)
	}
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if want := []sheetsio.NoteStatus{sheetsio.NoteApplied, sheetsio.NoteNoCell, sheetsio.NoteNoCell}; len(res.Notes) != 3 || res.Notes[0] != want[0] || res.Notes[1] != want[1] || res.Notes[2] != want[2] {
		t.Fatalf("note statuses %v, want %v", res.Notes, want)
	}
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{{ID: "u1", Tab: in, Kind: sheetsio.OpUpdate, Anchor: "a1",
		Values: map[string]any{"qty": int64(5)}, ExpectedHash: hash}}})
	if r := res.Ops[0]; r.Status != sheetsio.StatusUnchanged || r.ObservedHash != hash {
		t.Fatalf("a note changed the row's visible hash: %+v", r)
	}
}

// notesOf reads the notes of a tab's first rows×cols cells through the
// same client library ([row][col], "" = none).
func (h *harness) notesOf(title string, rows, cols int) [][]string {
	h.t.Helper()
	ss, err := h.raw.Spreadsheets.Get(testSheetID).Ranges(title).IncludeGridData(true).Fields("sheets.data.rowData.values.note").Do()
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([][]string, rows)
	for r := range out {
		out[r] = make([]string, cols)
	}
	for r, rd := range ss.Sheets[0].Data[0].RowData {
		for c, cd := range rd.Values {
			if r < rows && c < cols && cd != nil {
				out[r][c] = cd.Note
			}
		}
	}
	return out
}

// personNote sets a note as a person would, outside any dispatch.
func (h *harness) personNote(sheetID int64, row, col int, text string) {
	h.t.Helper()
	req := &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
		Range: &sheets.GridRange{SheetId: sheetID, StartRowIndex: int64(row), EndRowIndex: int64(row + 1), StartColumnIndex: int64(col),
			EndColumnIndex: int64(col + 1), ForceSendFields: []string{"SheetId"}},
		Rows: []*sheets.RowData{{Values: []*sheets.CellData{{Note: text}}}}, Fields: "note"}}
	if _, err := h.raw.Spreadsheets.BatchUpdate(testSheetID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{req}}).Do(); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) sheetIDOf(title string) int64 {
	h.t.Helper()
	ss, err := h.raw.Spreadsheets.Get(testSheetID).Do()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, s := range ss.Sheets {
		if s.Properties.Title == title {
			return s.Properties.SheetId
		}
	}
	h.t.Fatalf("no tab %s", title)
	return 0
}

func TestNoteSweepClearsTheLayoutCellsBelowTheHeaderBeforeTheNotesOfTheSameBatchUpdate(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s := testSchema(t, "Part")
	w := h.provision(s)
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	in, sys := layout.InputTabName("Part"), layout.SystemTabName("Part")
	spec, _ := s.Tab(in)
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp(in, "a1", map[string]any{"id": "a1", "name": "x", "qty": int64(5)}),
		appendOp(in, "a2", map[string]any{"id": "a2", "name": "y", "qty": int64(6)})}})
	h.wantStatus(res, 1, sheetsio.StatusApplied)
	id, qty, width := h.sheetIDOf(in), spec.ColumnIndex("qty"), len(spec.Columns)
	h.personNote(id, 1, qty, "old hikoutei note")
	h.personNote(id, 2, spec.ColumnIndex("name"), "another old note")
	h.personNote(id, 0, qty, "a note on the header")
	h.personNote(id, 1, spec.Anchor, "a note on the anchor")
	h.personNote(id, 1, width, "a note beside the layout")
	h.personNote(h.sheetIDOf(sys), 1, qty, "a note on another tab")

	before := h.counters()
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, SweepNotes: []string{in, "Nope_Input"},
		Notes: []sheetsio.Note{{Tab: in, Anchor: "a2", Column: "qty", Text: "why"}}})
	after := h.counters()
	if c := (emulator.Counters{Reads: after.Reads - before.Reads, Writes: after.Writes - before.Writes}); c != (emulator.Counters{Reads: 1, Writes: 1}) {
		t.Fatalf("a sweep cost %+v, want 1 read + 1 write", c)
	}
	if len(res.Swept) != 2 || res.Swept[0] != sheetsio.NoteApplied || res.Swept[1] != sheetsio.NoteNoCell || res.Notes[0] != sheetsio.NoteApplied {
		t.Fatalf("sweep statuses %v, notes %v", res.Swept, res.Notes)
	}
	got := h.notesOf(in, 3, width+1)
	want := map[[2]int]string{{0, qty}: "a note on the header", {1, spec.Anchor}: "a note on the anchor",
		{1, width}: "a note beside the layout", {2, qty}: "why"}
	for r := range got {
		for c, n := range got[r] {
			if n != want[[2]int{r, c}] {
				t.Fatalf("note at row %d col %d: %q, want %q (all %q)", r, c, n, want[[2]int{r, c}], got)
			}
		}
	}
	if n := h.notesOf(sys, 2, width)[1][qty]; n != "a note on another tab" {
		t.Fatalf("the sweep reached another tab: %q", n)
	}
	if v := h.values(in); rowsWithAnchor(v, spec.Anchor, "a1") != 1 || len(v[1]) < qty || v[1][qty] != float64(5) {
		t.Fatalf("a sweep changed values: %v", v)
	}
}
