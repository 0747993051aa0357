package emulator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	sheets "google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// viewGet fetches path from the view over loopback HTTP.
func viewGet(t *testing.T, emu *Emulator, path string) (int, http.Header, string) {
	t.Helper()
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(b)
}

func viewTabFor(emu *Emulator, id string, sheetID int64) *viewTab {
	emu.mu.Lock()
	defer emu.mu.Unlock()
	b := emu.books[id]
	return b.viewTabOf(b.sheetByID(sheetID), 1, func(row int) string { return "?row=" + strconv.Itoa(row) })
}

func cellAt(sheetID, row, col int64) *sheets.GridRange {
	return &sheets.GridRange{SheetId: sheetID, StartRowIndex: row, EndRowIndex: row + 1, StartColumnIndex: col, EndColumnIndex: col + 1}
}

// writeDateTime writes serial at (row, col) of tab 0 with the date-time
// format the product gives its time cells.
func writeDateTime(t *testing.T, svc *sheets.Service, id string, row, col int64, serial float64) {
	t.Helper()
	f := &sheets.CellFormat{NumberFormat: &sheets.NumberFormat{Type: "DATE_TIME", Pattern: "yyyy-mm-dd hh:mm:ss.000"}}
	batch(t, svc, id, &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{Range: cellAt(0, row, col),
		Rows:   []*sheets.RowData{{Values: []*sheets.CellData{{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &serial}, UserEnteredFormat: f}}}},
		Fields: "userEnteredValue,userEnteredFormat.numberFormat"}})
}

func TestViewCellsShowExactlyWhatAFormattedValueReadReturns(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	typed := [][]any{
		{"2026-11-30", "11/30/2026 13:45", "7:05 PM", "12.5%", "$1234.5", "-$3", "1,234,567"},
		{"TRUE", "false", "=1/0", "=SUM(1,2)/4", "0050", "'0050", "text"},
		{"1e20", "0.1", "=A1+1", "=NOSUCH(1)", "", "after a gap"},
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: typed}).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	writeDateTime(t, svc, id, 4, 1, 46356.5)
	read, err := svc.Spreadsheets.Values.Get(id, "Sheet1").ValueRenderOption("FORMATTED_VALUE").Do()
	if err != nil {
		t.Fatal(err)
	}
	tab := viewTabFor(emu, id, 0)
	if len(tab.Grid) != len(read.Values) {
		t.Fatalf("view shows %d rows, the read returns %d", len(tab.Grid), len(read.Values))
	}
	for r, row := range tab.Grid {
		for c, cell := range row.Cells {
			want := ""
			if c < len(read.Values[r]) {
				want, _ = read.Values[r][c].(string)
			}
			if cell.Text != want {
				t.Errorf("%s%d: view shows %q, FORMATTED_VALUE read returns %q", a1Col(c), r+1, cell.Text, want)
			}
		}
	}
	if got := tab.Grid[4].Cells[1].Text; got != "2026-11-30 12:00:00.000" {
		t.Fatalf("date-time cell shows %q, want the formatted date-time", got)
	}
}

// realNotes are the note texts the product writes, from aggregates.
func realNotes() (conflict, quarantine string) {
	notes := aggregates.DesiredNotes(
		[]aggregates.Quarantine{{Tab: "People", Anchor: "a1", Column: "age", Reason: "cell_type_mismatch"}},
		[]aggregates.Conflict{{Tab: "People", Anchor: "a2", Field: "name", SystemValue: "Ada"}})
	for _, n := range notes {
		if n.Anchor == "a2" {
			conflict = n.Text
		} else {
			quarantine = n.Text
		}
	}
	return conflict, quarantine
}

func TestViewHighlightsConflictQuarantineAndPlainNotesWithTheNoteAsTooltip(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	conflict, quarantine := realNotes()
	notes := []string{conflict, quarantine, "a person's note"}
	for i, n := range notes {
		batch(t, svc, id, &sheets.Request{RepeatCell: &sheets.RepeatCellRequest{Range: cellAt(0, 1, int64(i)),
			Cell: &sheets.CellData{Note: n}, Fields: "note"}})
	}
	if err := emu.Person(id).Type("Sheet1", "A2", "Grace"); err != nil {
		t.Fatal(err)
	}
	tab := viewTabFor(emu, id, 0)
	wantKinds := []noteKind{noteConflict, noteQuarantine, notePlain}
	for i, k := range wantKinds {
		cell := tab.Grid[1].Cells[i]
		if cell.Note != k || cell.Title != notes[i] || !strings.Contains(cell.Class, "note-"+string(k)) {
			t.Errorf("cell %s2 = %+v, want kind %s with its note as tooltip", a1Col(i), cell, k)
		}
		if n := tab.Notes[i]; n.Ref != a1Col(i)+"2" || n.Text != notes[i] || n.Kind != k {
			t.Errorf("note list entry %d = %+v", i, n)
		}
	}
	_, _, page := viewGet(t, emu, "/view/"+id+"/0")
	if !strings.Contains(page, `<td class="note-conflict" title="hikoutei: conflict: kept Ada`) ||
		!strings.Contains(page, `<td class="note-quarantine" title="hikoutei: not a value of this column&#39;s type`) {
		t.Fatalf("highlighted cells not rendered:\n%s", page)
	}
}

func TestViewCutsLongCellsToOneLineKeepingALongerTooltip(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	long := strings.Repeat("effect\tapplied\thash\n", 2000)
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: [][]any{{long}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	cell := viewTabFor(emu, id, 0).Grid[0].Cells[0]
	if n := utf8.RuneCountInString(cell.Text); n != maxCellRunes || !strings.HasSuffix(cell.Text, "…") || !strings.HasPrefix(long, strings.TrimSuffix(cell.Text, "…")) {
		t.Fatalf("cell text has %d characters: %q", n, cell.Text)
	}
	if n := utf8.RuneCountInString(cell.Title); n != maxTitleRunes || !strings.HasSuffix(cell.Title, "…") {
		t.Fatalf("tooltip has %d characters", n)
	}
	_, _, page := viewGet(t, emu, "/view/"+id+"/0")
	if len(page) > 10_000 {
		t.Fatalf("a 40,000-character cell makes a %d-byte page", len(page))
	}
}

func TestViewTabStripListsEveryTabMarksHiddenOnesAndHighlightsTheCurrent(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	batch(t, svc, id,
		&sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{SheetId: 7, Title: "People"}}},
		&sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{SheetId: 9, Title: "_receipts", Hidden: true}}})
	_, _, first := viewGet(t, emu, "/view/"+id)
	want := `<nav class="tabs"><a href="/view/book-1/0" class="current" aria-current="page"><span class="title">Sheet1</span></a>` +
		`<a href="/view/book-1/7"><span class="title">People</span></a>` +
		`<a href="/view/book-1/9" class="hidden"><span class="title">_receipts</span><span class="mark">(hidden)</span></a></nav>`
	if !strings.Contains(first, want) {
		t.Fatalf("tab strip of the first tab:\n%s", first)
	}
	_, _, hidden := viewGet(t, emu, "/view/"+id+"/9?refresh=0")
	if !strings.Contains(hidden, `<a href="/view/book-1/9?refresh=0" class="current hidden" aria-current="page">`) ||
		!strings.Contains(hidden, `<a href="/view/book-1/7?refresh=0">`) {
		t.Fatalf("tab strip of the hidden tab (refresh off carried on links):\n%s", hidden)
	}
}

func TestViewRefreshIsOnByDefaultSetByQueryAndRejectsBadValues(t *testing.T) {
	emu, _, id := newBookClient(t, Options{})
	for query, want := range map[string]string{"": `data-refresh="5"`, "?refresh=0": `data-refresh="0"`, "?refresh=2": `data-refresh="2"`} {
		code, h, page := viewGet(t, emu, "/view/"+id+"/0"+query)
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("%q: %d, want %s", query, code, want)
		}
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'nonce-") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("content security policy %q", csp)
		}
	}
	for _, bad := range []string{"-1", "x", "3601", "1.5"} {
		if code, _, _ := viewGet(t, emu, "/view/"+id+"/0?refresh="+bad); code != http.StatusBadRequest {
			t.Errorf("refresh=%s: %d, want 400", bad, code)
		}
	}
}

func TestViewNoncesDifferPerResponse(t *testing.T) {
	emu, _, id := newBookClient(t, Options{})
	_, h1, _ := viewGet(t, emu, "/view/"+id)
	_, h2, _ := viewGet(t, emu, "/view/"+id)
	if h1.Get("Content-Security-Policy") == h2.Get("Content-Security-Policy") {
		t.Fatal("two responses share a script nonce")
	}
}

func TestClipRunesCutsOnCharacterBoundaries(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"abcd", 3, "ab…"}, {"日本語テキスト", 4, "日本語…"}, {"", 1, ""}} {
		if got := clipRunes(tc.in, tc.n); got != tc.want {
			t.Errorf("clipRunes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestViewListsNotesBeyondItsRowsWithALinkThatOpensThem(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	_, quarantine := realNotes()
	batch(t, svc, id,
		&sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 0, Dimension: "ROWS", Length: 1000}},
		&sheets.Request{RepeatCell: &sheets.RepeatCellRequest{Range: cellAt(0, 1499, 2), Cell: &sheets.CellData{Note: quarantine}, Fields: "note"}})
	if err := emu.Person(id).Type("Sheet1", "A1", "code"); err != nil {
		t.Fatal(err)
	}
	if err := emu.Person(id).Type("Sheet1", "A1500", "ITM"); err != nil {
		t.Fatal(err)
	}
	tab := viewTabFor(emu, id, 0)
	if len(tab.Notes) != 0 || len(tab.Beyond) != 1 || tab.Beyond[0].Ref != "C1500" || tab.Beyond[0].Text != quarantine ||
		tab.Beyond[0].Kind != noteQuarantine || tab.Beyond[0].Href != "?row=1495" {
		t.Fatalf("notes %+v, beyond the rows shown %+v", tab.Notes, tab.Beyond)
	}
	_, _, page := viewGet(t, emu, "/view/"+id+"/0?refresh=0")
	if !strings.Contains(page, "showing rows 1–1000") || !strings.Contains(page, "Notes outside the rows shown") ||
		!strings.Contains(page, `<a href="/view/book-1/0?refresh=0&amp;row=1495">show row</a>`) {
		t.Fatalf("page without the note beyond its rows:\n%s", page)
	}
	code, _, opened := viewGet(t, emu, "/view/"+id+"/0?refresh=0&row=1495")
	if code != http.StatusOK || !strings.Contains(opened, "showing rows 1495–2000") ||
		!strings.Contains(opened, `<tr><th>1495</th>`) || strings.Contains(opened, `<tr><th>1</th>`) ||
		!strings.Contains(opened, `<td class="note-quarantine" title="hikoutei: not a value`) ||
		!strings.Contains(opened, `(<a href="/view/book-1/0?refresh=0">from row 1</a>)`) {
		t.Fatalf("?row=1495:\n%s", opened)
	}
	for _, bad := range []string{"0", "-3", "x"} {
		if code, _, _ := viewGet(t, emu, "/view/"+id+"/0?row="+bad); code != http.StatusBadRequest {
			t.Errorf("row=%s: %d, want 400", bad, code)
		}
	}
}

func TestViewRefreshFetchesTheDataAloneWithoutStyleOrScript(t *testing.T) {
	emu, _, id := newBookClient(t, Options{})
	if err := emu.Person(id).Type("Sheet1", "A1", "Narita"); err != nil {
		t.Fatal(err)
	}
	code, _, part := viewGet(t, emu, "/view/"+id+"/0?part=page")
	if code != http.StatusOK || !strings.HasPrefix(part, `<div id="page">`) || !strings.Contains(part, "Narita") ||
		strings.Contains(part, "<style") || strings.Contains(part, "<script") || strings.Contains(part, "nonce") {
		t.Fatalf("part=page: %d\n%s", code, part)
	}
}
