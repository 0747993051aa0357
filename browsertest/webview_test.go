package browsertest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// The note texts the product writes (aggregates/note.go).
const (
	conflictNote   = "hikoutei: conflict: kept Kansai — see Sync_Conflicts"
	quarantineNote = "hikoutei: not a value of this column's type: not imported, the system keeps its value; fix or clear the cell"
	scriptValue    = `<script>window.__pwned=1</script>`
	imgValue       = `<img src=x onerror="window.__pwned=2">`
)

// writeBook builds, through the real sheets/v4 client over loopback HTTP,
// a spreadsheet like the product's: an entity tab with a date-time cell,
// hostile values and noted cells, a conflicts tab and the hidden receipts tab.
func writeBook(t *testing.T, svc *sheets.Service, id string) {
	t.Helper()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	title := func(sheetID int64, name string, hidden bool) *sheets.Request {
		return &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{SheetId: sheetID, Title: name, Hidden: hidden}}}
	}
	rename := &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: 0, Title: "Airport"}, Fields: "title"}}
	must(svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		rename, title(11, "Sync_Conflicts", false), title(12, "_hikoutei_receipts", true), title(13, "Input", false),
		{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 13, Dimension: "ROWS", Length: 500}}}}).Do())
	airports := [][]any{{"code", "name", "updated_at", "open"}, {"NRT", "Narita"}, {"HND", scriptValue, nil, false},
		{"KIX", "Kansai International", nil, true}, {"ITM", imgValue, nil, "yes"}}
	must(svc.Spreadsheets.Values.Update(id, "Airport!A1", &sheets.ValueRange{Values: airports}).ValueInputOption("RAW").Do())
	serial := 46356.5 // 2026-11-30 12:00 UTC
	dt := &sheets.CellFormat{NumberFormat: &sheets.NumberFormat{Type: "DATE_TIME", Pattern: "yyyy-mm-dd hh:mm:ss.000"}}
	must(svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{RepeatCell: &sheets.RepeatCellRequest{Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 1, EndRowIndex: 5, StartColumnIndex: 2, EndColumnIndex: 3},
			Cell: &sheets.CellData{UserEnteredValue: &sheets.ExtendedValue{NumberValue: &serial}, UserEnteredFormat: dt}, Fields: "userEnteredValue,userEnteredFormat.numberFormat"}},
		noteAt(3, 1, conflictNote), noteAt(4, 3, quarantineNote)}}).Do())
	receipt := [][]any{{"entries", "effects"}, {strings.Repeat("eff-0001\tupsert\tAirport\tKIX\t9f2c\t77ab\n", 300), 300}}
	must(svc.Spreadsheets.Values.Update(id, "_hikoutei_receipts!A1", &sheets.ValueRange{Values: receipt}).ValueInputOption("RAW").Do())
	input := [][]any{{"code", "altitude"}}
	for i := 2; i <= inputRows; i++ {
		input = append(input, []any{fmt.Sprintf("A%04d", i), i})
	}
	must(svc.Spreadsheets.Values.Update(id, "Input!A1", &sheets.ValueRange{Values: input}).ValueInputOption("RAW").Do())
	quarantined := noteAt(deepRow-1, 1, quarantineNote)
	quarantined.RepeatCell.Range.SheetId = 13
	must(svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{quarantined}}).Do())
}

// The Input tab: inputRows rows, a quarantined cell at B{deepRow}, past the
// 1,000 rows the view shows.
const (
	inputRows = 1200
	deepRow   = 1100
)

func noteAt(row, col int64, note string) *sheets.Request {
	return &sheets.Request{RepeatCell: &sheets.RepeatCellRequest{Fields: "note", Cell: &sheets.CellData{Note: note},
		Range: &sheets.GridRange{SheetId: 0, StartRowIndex: row, EndRowIndex: row + 1, StartColumnIndex: col, EndColumnIndex: col + 1}}}
}

// seen is what a person sees on the Airport tab, read from the rendered page.
type seen struct {
	Tabs []struct {
		Title      string `json:"title"`
		Text       string `json:"text"`
		Hidden     bool   `json:"hidden"`
		Current    bool   `json:"current"`
		Background string `json:"background"`
		OnScreen   bool   `json:"onScreen"`
	} `json:"tabs"`
	DateTime       string `json:"dateTime"`
	Script         string `json:"script"`
	Img            string `json:"img"`
	Pwned          int    `json:"pwned"`
	NoteTitle      string `json:"noteTitle"`
	NoteBackground string `json:"noteBackground"`
	QuarBackground string `json:"quarBackground"`
	PlainBackgr    string `json:"plainBackground"`
	NotesList      string `json:"notesList"`
}

// cellJS is a page function giving the cell at 1-based row r, column c (A = 1).
const cellJS = `const cell=(r,c)=>document.querySelector('table.grid tbody').rows[r-1].cells[c];`

const seenJS = `(()=>{` + cellJS + `
const bg=e=>getComputedStyle(e).backgroundColor;
return {
 tabs:[...document.querySelectorAll('nav.tabs a')].map(a=>({title:a.querySelector('.title').innerText,text:a.innerText,
   hidden:a.classList.contains('hidden'),current:a.getAttribute('aria-current')==='page',background:bg(a),
   onScreen:a.getBoundingClientRect().bottom<=innerHeight&&a.getBoundingClientRect().top>=0})),
 dateTime:cell(2,3).innerText, script:cell(3,2).innerText, img:cell(5,2).innerText, pwned:window.__pwned||0,
 noteTitle:cell(4,2).title, noteBackground:bg(cell(4,2)), quarBackground:bg(cell(5,4)), plainBackground:bg(cell(2,2)),
 notesList:document.querySelector('section.notes').innerText};
})()`

func TestWebViewInHeadlessChromiumShowsFormattedCellsTabsNotesAndRefreshes(t *testing.T) {
	ctx := newBrowser(t, "web view", 1200, 640)
	emu := emulator.New(emulator.Options{})
	const id = "airports-book"
	if err := emu.CreateSpreadsheet(id, "Airports"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu.Handler()) // 127.0.0.1
	t.Cleanup(srv.Close)
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(srv.URL), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	writeBook(t, svc, id)

	console := watchConsole(ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/view/"+id+"?refresh=1"), chromedp.WaitVisible(chromedp.CSS("table.grid"))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[seen](seenJS))
	if err != nil {
		t.Fatal(err)
	}
	checkTabStrip(t, got)
	checkCells(t, got)
	checkRefresh(t, ctx, emu, id)
	waitRefreshes(t, ctx, 2)
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	saveScreenshot(t, shot)
	checkReceiptsTabIsCompact(t, ctx, srv.URL+"/view/"+id+"/12?refresh=0")
	checkInputTab(t, ctx, srv.URL+"/view/"+id+"/13?refresh=1")
	console.check(t)
}

// waitRefreshes waits (bounded) until the open page has swapped in fresh
// data at least n times.
func waitRefreshes(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	wait := chromedp.Poll[bool](fmt.Sprintf(`+(document.body.dataset.refreshes||0)>=%d`, n),
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))
	if _, err := chromedp.Run(ctx, wait); err != nil {
		t.Fatalf("the page did not refresh %d times within 20 s (refresh=1): %v", n, err)
	}
}

// checkInputTab: on a tab longer than the view, the tab strip stays above
// the row numbers, the note of a cell past the rows shown is listed with a
// link, and the link opens its rows with the cell highlighted.
func checkInputTab(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("table.grid"))); err != nil {
		t.Fatal(err)
	}
	waitRefreshes(t, ctx, 1)
	const overlapJS = `(()=>{const nav=document.querySelector('nav.tabs').getBoundingClientRect();
const th=document.querySelector('table.grid tbody th').getBoundingClientRect();
const top=document.elementFromPoint(th.left+th.width/2,nav.top+nav.height/2);
return top?(top.closest('nav.tabs')?'nav':top.tagName+' '+top.innerText):'nothing';})()`
	top, err := chromedp.Run(ctx, chromedp.Evaluate[string](overlapJS))
	if err != nil {
		t.Fatal(err)
	}
	if top != "nav" { // 1,000 rows reach under the strip
		t.Fatalf("over the tab strip, above the row numbers' column, the page shows %q, not the strip", top)
	}
	const beyondJS = `(()=>{const li=document.querySelector('ul.beyond li');return li?[li.innerText,li.querySelector('a').href]:['',''];})()`
	l, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](beyondJS))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("B%d %s", deepRow, quarantineNote); !strings.Contains(l[0], want) {
		t.Fatalf("notes outside the rows shown list %q, want %q", l[0], want)
	}
	// Follow the link (a click could meet a node the refresh just replaced).
	if err := chromedp.Do(ctx, chromedp.Navigate(l[1]), chromedp.WaitVisible(chromedp.CSS("table.grid"))); err != nil {
		t.Fatal(err)
	}
	waitRefreshes(t, ctx, 1)
	rowJS := fmt.Sprintf(`(()=>{const th=[...document.querySelectorAll('table.grid tbody th')].find(h=>h.innerText==='%d');
if(!th)return ['',location.search];const td=th.parentElement.cells[2];return [td.classList.contains('note-quarantine')?td.title:'class '+td.className,location.search];})()`, deepRow)
	r, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](rowJS))
	if err != nil {
		t.Fatal(err)
	}
	if r[0] != quarantineNote {
		t.Fatalf("the link (%s) shows row %d's cell as %q, want it highlighted with its note", r[1], deepRow, r[0])
	}
}

func checkTabStrip(t *testing.T, got seen) {
	t.Helper()
	want := []string{"Airport", "Sync_Conflicts", "_hikoutei_receipts", "Input"}
	if len(got.Tabs) != len(want) {
		t.Fatalf("tab strip shows %d tabs, want %d: %+v", len(got.Tabs), len(want), got.Tabs)
	}
	for i, tab := range got.Tabs {
		if tab.Title != want[i] || !tab.OnScreen {
			t.Errorf("tab %d shows %q (on screen %v), want %q", i, tab.Title, tab.OnScreen, want[i])
		}
	}
	if !got.Tabs[0].Current || got.Tabs[1].Current || got.Tabs[0].Background == got.Tabs[1].Background {
		t.Errorf("current tab not highlighted: %+v", got.Tabs)
	}
	if h := got.Tabs[2]; !h.Hidden || !strings.Contains(h.Text, "(hidden)") || got.Tabs[1].Hidden {
		t.Errorf("hidden tab not marked: %+v", got.Tabs)
	}
}

func checkCells(t *testing.T, got seen) {
	t.Helper()
	if got.DateTime != "2026-11-30 12:00:00.000" {
		t.Errorf("date-time cell shows %q, want the formatted date-time", got.DateTime)
	}
	if got.Script != scriptValue || got.Img != imgValue || got.Pwned != 0 {
		t.Errorf("hostile values: shown %q and %q, page script ran: %d", got.Script, got.Img, got.Pwned)
	}
	if got.NoteTitle != conflictNote || !strings.Contains(got.NotesList, "B4 "+conflictNote) || !strings.Contains(got.NotesList, "D5 "+quarantineNote) {
		t.Errorf("notes: tooltip %q, list %q", got.NoteTitle, got.NotesList)
	}
	if got.NoteBackground == got.PlainBackgr || got.QuarBackground == got.PlainBackgr || got.NoteBackground == got.QuarBackground {
		t.Errorf("conflict %s, quarantine %s and plain %s cells not told apart", got.NoteBackground, got.QuarBackground, got.PlainBackgr)
	}
}

// checkRefresh changes a cell as a person would and waits (bounded) for the
// open page to show it without a reload.
func checkRefresh(t *testing.T, ctx context.Context, emu *emulator.Emulator, id string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.__sameDocument=true`)); err != nil {
		t.Fatal(err)
	}
	if err := emu.Person(id).Type("Airport", "B2", "Narita International"); err != nil {
		t.Fatal(err)
	}
	wait := chromedp.Poll[bool](`(()=>{`+cellJS+`return cell(2,2).innerText==='Narita International'&&window.__sameDocument===true;})()`,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))
	if _, err := chromedp.Run(ctx, wait); err != nil {
		t.Fatalf("the open page did not show the changed value within 20 s (refresh=1): %v", err)
	}
}

// checkReceiptsTabIsCompact: a 12,000-character cell stays one line high.
func checkReceiptsTabIsCompact(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("table.grid"))); err != nil {
		t.Fatal(err)
	}
	js := `(()=>{` + cellJS + `const d=cell(2,1).querySelector('div');return [d.offsetHeight, d.scrollWidth>d.clientWidth?1:0, cell(2,1).title.length];})()`
	m, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](js))
	if err != nil {
		t.Fatal(err)
	}
	if m[0] > 30 || m[1] != 1 || m[2] != 1000 {
		t.Fatalf("receipts cell: height %dpx, cut %d, tooltip %d characters; want one line, cut, 1000", m[0], m[1], m[2])
	}
}

func saveScreenshot(t *testing.T, png []byte) {
	t.Helper()
	f, err := os.CreateTemp("", "hikoutei-view-*.png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(png); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the Airport tab: %s", f.Name())
}
