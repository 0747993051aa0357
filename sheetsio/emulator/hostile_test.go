package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	sheets "google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// within fails the test when fn does not return in d (a hang while holding
// the emulator's lock would otherwise freeze the whole test binary).
// hangBound bounds the hostile inputs' work: not a speed goal (those are
// benchmarks) but a guard against a blow-up (exponential work, a loop),
// wide enough for a race build on a shared 2-core machine.
const hangBound = 2 * time.Minute

func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish within %v", what, d)
	}
}

func doBatch(t *testing.T, svc *sheets.Service, id string, reqs ...*sheets.Request) error {
	t.Helper()
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Do()
	return err
}

func want400(t *testing.T, what string, err error) *googleapi.Error {
	t.Helper()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != http.StatusBadRequest {
		t.Fatalf("%s: want 400, got %v", what, err)
	}
	return gerr
}

func gridOf(t *testing.T, svc *sheets.Service, id string) (rows, cols int64) {
	t.Helper()
	ss, err := svc.Spreadsheets.Get(id).Do()
	if err != nil {
		t.Fatal(err)
	}
	g := ss.Sheets[0].Properties.GridProperties
	return g.RowCount, g.ColumnCount
}

// A formula whose references fan out (each row adds the previous row twice,
// or a cell adds itself twice) must not take exponential time under the
// emulator's global lock.
func TestFormulaFanOutIsLinear(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	var col [][]any
	col = append(col, []any{"1"})
	for r := 2; r <= 40; r++ {
		col = append(col, []any{fmt.Sprintf("=A%d+A%d", r-1, r-1)})
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: col}).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	self := &sheets.ValueRange{Values: [][]any{{"=B1+B1+B1"}, {"=SUM(B1:B2)*2"}}}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!B1", self).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	within(t, hangBound, "reading fan-out formulas", func() {
		got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:B40").ValueRenderOption("UNFORMATTED_VALUE").Do()
		if err != nil {
			t.Error(err)
			return
		}
		if v := got.Values[20][0]; v != float64(1<<20) {
			t.Errorf("A21 = %v, want 2^20", v)
		}
		if v := got.Values[0][1]; v != "#REF!" {
			t.Errorf("self-reference B1 = %v, want #REF!", v)
		}
		if v := got.Values[1][1]; v != "#REF!" {
			t.Errorf("B2 (range over itself) = %v, want #REF!", v)
		}
	})
	// Within the depth limit a chain still evaluates; a circular pair is #REF!.
	pair := &sheets.ValueRange{Values: [][]any{{"=D1+1", "=C1+1"}}}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!C1", pair).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!C1:D1").Do()
	if err != nil || got.Values[0][0] != "#REF!" || got.Values[0][1] != "#REF!" {
		t.Fatalf("circular pair = %v, %v", got, err)
	}
}

// Grid sizes that overflow int when multiplied must be rejected, not wrap
// around the 10,000,000-cell check.
func TestGridSizeOverflowRejected(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	huge := int64(1) << 62
	cases := map[string]*sheets.Request{
		"appendDimension rows":     {AppendDimension: &sheets.AppendDimensionRequest{SheetId: 0, Dimension: "ROWS", Length: huge}},
		"appendDimension cols":     {AppendDimension: &sheets.AppendDimensionRequest{SheetId: 0, Dimension: "COLUMNS", Length: 1 << 40}},
		"appendDimension past ZZZ": {AppendDimension: &sheets.AppendDimensionRequest{SheetId: 0, Dimension: "COLUMNS", Length: a1.MaxColumns}},
		"insertDimension huge end": {InsertDimension: &sheets.InsertDimensionRequest{Range: &sheets.DimensionRange{
			SheetId: 0, Dimension: "ROWS", StartIndex: 1, EndIndex: huge}}},
		"updateSheetProperties overflow": {UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
			Properties: &sheets.SheetProperties{SheetId: 0, GridProperties: &sheets.GridProperties{RowCount: 1 << 61, ColumnCount: 8}},
			Fields:     "gridProperties(rowCount,columnCount)"}},
		"addSheet overflow": {AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{
			Title: "big", GridProperties: &sheets.GridProperties{RowCount: 1 << 61, ColumnCount: 8}}}},
	}
	for name, req := range cases {
		within(t, hangBound, name, func() {
			want400(t, name, doBatch(t, svc, id, req))
		})
		if r, c := gridOf(t, svc, id); r != 1000 || c != 26 {
			t.Fatalf("%s changed the grid to %d × %d", name, r, c)
		}
	}
}

func TestTenMillionCellLimit(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	// 26,000 cells exist; a tab of exactly the rest fits, one more row does not.
	fit := &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{
		Title: "fill", SheetId: 7, GridProperties: &sheets.GridProperties{RowCount: (10_000_000 - 26_000) / 2, ColumnCount: 2}}}}
	if err := doBatch(t, svc, id, fit); err != nil {
		t.Fatal(err)
	}
	more := &sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 7, Dimension: "ROWS", Length: 1}}
	gerr := want400(t, "past the limit", doBatch(t, svc, id, more))
	if !strings.Contains(gerr.Message, "10000000 cells") {
		t.Fatalf("message %q", gerr.Message)
	}
	// values.append that would grow the grid past the limit is rejected too.
	vr := &sheets.ValueRange{Values: [][]any{{"x"}}}
	_, err := svc.Spreadsheets.Values.Append(id, "fill!A1", vr).ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Do()
	want400(t, "append past the limit", err)
}

func TestValuesAppendCannotGrowPastColumnZZZ(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	if err := doBatch(t, svc, id, &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: 0, GridProperties: &sheets.GridProperties{RowCount: 10, ColumnCount: a1.MaxColumns}},
		Fields:     "gridProperties(rowCount,columnCount)"}}); err != nil {
		t.Fatal(err)
	}
	vr := &sheets.ValueRange{Values: [][]any{{"a", "b"}}}
	_, err := svc.Spreadsheets.Values.Append(id, "Sheet1!ZZZ1", vr).ValueInputOption("RAW").Do()
	want400(t, "append past ZZZ", err)
	if _, c := gridOf(t, svc, id); c != a1.MaxColumns {
		t.Fatalf("columns = %d", c)
	}
}

func TestCellCharacterLimitOnEveryWritePath(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	ok := strings.Repeat("é", 50_000)
	tooLong := strings.Repeat("x", 50_000) + "SECRET"
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: [][]any{{ok}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatalf("50,000 characters: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		gerr := want400(t, what, err)
		if !strings.Contains(gerr.Message, "more than the maximum of 50000 characters") || strings.Contains(gerr.Message, "SECRET") {
			t.Fatalf("%s: message %q", what, gerr.Message)
		}
	}
	for _, input := range []string{"RAW", "USER_ENTERED"} {
		_, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A2", &sheets.ValueRange{Values: [][]any{{tooLong}}}).ValueInputOption(input).Do()
		check("values.update "+input, err)
		_, err = svc.Spreadsheets.Values.Append(id, "Sheet1!A1", &sheets.ValueRange{Values: [][]any{{"=" + tooLong}}}).ValueInputOption(input).Do()
		check("values.append formula "+input, err)
	}
	formula := "=" + tooLong
	for name, v := range map[string]*sheets.ExtendedValue{"string": {StringValue: &tooLong}, "formula": {FormulaValue: &formula}} {
		err := doBatch(t, svc, id, &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
			Start: &sheets.GridCoordinate{SheetId: 0}, Fields: "userEnteredValue",
			Rows: []*sheets.RowData{{Values: []*sheets.CellData{{UserEnteredValue: v}}}}}})
		check("updateCells "+name, err)
		err = doBatch(t, svc, id, &sheets.Request{AppendCells: &sheets.AppendCellsRequest{
			SheetId: 0, Fields: "userEnteredValue",
			Rows: []*sheets.RowData{{Values: []*sheets.CellData{{UserEnteredValue: v}}}}}})
		check("appendCells "+name, err)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:A3").Do()
	if err != nil || len(got.Values) != 1 || got.Values[0][0] != ok {
		t.Fatalf("a rejected write changed the tab: %v", err)
	}
}

func TestNegativeIndexesAnswer400(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	for name, body := range map[string]string{
		"updateCells negative start":  `{"requests":[{"updateCells":{"start":{"sheetId":0,"rowIndex":-1},"fields":"userEnteredValue","rows":[{"values":[{"userEnteredValue":{"stringValue":"x"}}]}]}}]}`,
		"repeatCell negative range":   `{"requests":[{"repeatCell":{"range":{"sheetId":0,"startRowIndex":-5,"endRowIndex":2},"cell":{"userEnteredValue":{"stringValue":"x"}},"fields":"userEnteredValue"}}]}`,
		"insertDimension negative":    `{"requests":[{"insertDimension":{"range":{"sheetId":0,"dimension":"ROWS","startIndex":-3,"endIndex":2}}}]}`,
		"deleteDimension reversed":    `{"requests":[{"deleteDimension":{"range":{"sheetId":0,"dimension":"ROWS","startIndex":5,"endIndex":2}}}]}`,
		"mergeCells negative":         `{"requests":[{"mergeCells":{"range":{"sheetId":0,"startColumnIndex":-1,"endColumnIndex":2,"endRowIndex":1},"mergeType":"MERGE_ALL"}}]}`,
		"sortRange negative index":    `{"requests":[{"sortRange":{"range":{"sheetId":0,"endRowIndex":3},"sortSpecs":[{"dimensionIndex":-1}]}}]}`,
		"appendDimension negative":    `{"requests":[{"appendDimension":{"sheetId":0,"dimension":"ROWS","length":-10}}]}`,
		"gridProperties negative":     `{"requests":[{"updateSheetProperties":{"properties":{"sheetId":0,"gridProperties":{"rowCount":-1}},"fields":"gridProperties.rowCount"}}]}`,
		"frozen negative":             `{"requests":[{"updateSheetProperties":{"properties":{"sheetId":0,"gridProperties":{"frozenRowCount":-1}},"fields":"gridProperties.frozenRowCount"}}]}`,
		"addSheet negative id":        `{"requests":[{"addSheet":{"properties":{"sheetId":-7,"title":"neg"}}}]}`,
		"dimension index past int":    `{"requests":[{"insertDimension":{"range":{"sheetId":0,"dimension":"ROWS","startIndex":99999999999999999999}}}]}`,
		"unknown sheet id":            `{"requests":[{"appendDimension":{"sheetId":424242,"dimension":"ROWS","length":1}}]}`,
		"two kinds in one request":    `{"requests":[{"appendDimension":{"sheetId":0,"dimension":"ROWS","length":1},"deleteSheet":{"sheetId":0}}]}`,
		"request is not an object":    `{"requests":[42]}`,
		"requests is not a list":      `{"requests":{"addSheet":{}}}`,
		"deeply nested JSON":          `{"requests":[{"addSheet":{"properties":` + strings.Repeat(`{"a":`, 10_000) + `1` + strings.Repeat(`}`, 10_000) + `}}]}`,
		"truncated JSON":              `{"requests":[{"addSheet":`,
		"developer metadata negative": `{"requests":[{"createDeveloperMetadata":{"developerMetadata":{"metadataKey":"k","visibility":"DOCUMENT","location":{"dimensionRange":{"sheetId":0,"dimension":"ROWS","startIndex":-1,"endIndex":0}}}}}]}`,
	} {
		code, msg := rawPost(t, apiURL(svc, "v4/spreadsheets/"+id+":batchUpdate"), body)
		if code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d %s", name, code, msg)
		}
	}
	if r, c := gridOf(t, svc, id); r != 1000 || c != 26 {
		t.Fatalf("grid changed to %d × %d", r, c)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1").Do()
	if err != nil || len(got.Values) != 0 {
		t.Fatalf("rejected requests wrote cells: %v %v", got.Values, err)
	}
}

func apiURL(svc *sheets.Service, path string) string {
	return strings.TrimSuffix(svc.BasePath, "/") + "/" + path
}

func rawPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMalformedRangesAnswer400(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	for _, rng := range []string{
		"!", "!A1", "Sheet1!", "'Sheet1", "'Sheet1'A1", "''!A1", "A0", "A-1", "Sheet1!A-1:B2", "ZZZZ1", "A1:B2:C3",
		"Sheet1!A1:A99999999999", "Sheet1!A10000001", "Sheet1!AAA1", "Sheet1!B2:A", "R1C1", "Sheet1!R1C1:R2C2",
		"Nope!A1", "'Nope'!A1:B2", "Sheet1!A1 ", " Sheet1!A1", "Sheet1!\x00", "Sheet1!A1:\u00c91", "Sheet1!1:0",
		strings.Repeat("A", 10_000), "'" + strings.Repeat("'", 5000) + "'!A1", "Sheet1!$A$1", "Sheet1!A:1", "%zz",
	} {
		_, err := svc.Spreadsheets.Values.Get(id, rng).Do()
		var gerr *googleapi.Error
		if err != nil && (!errors.As(err, &gerr) || gerr.Code != http.StatusBadRequest) {
			t.Errorf("values.get %q: %v", rng, err)
		}
		_, err = svc.Spreadsheets.Values.Update(id, rng, &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
		if err != nil && (!errors.As(err, &gerr) || gerr.Code != http.StatusBadRequest) {
			t.Errorf("values.update %q: %v", rng, err)
		}
	}
}

func TestUnicodeAndLookalikeTabNamesRoundTrip(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	titles := []string{"Café 🙂", "Bob's Sheet", "CO2", "R1C1", "1abc", "名前", "A1:B2", "x!y", "Cafe\u0301", "'quoted'", "Tab\twith tab"}
	var reqs []*sheets.Request
	for _, title := range titles {
		reqs = append(reqs, &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: title}}})
	}
	if err := doBatch(t, svc, id, reqs...); err != nil {
		t.Fatal(err)
	}
	for i, title := range titles {
		rng := a1.QuoteSheet(title) + "!B2"
		upd, err := svc.Spreadsheets.Values.Update(id, rng, &sheets.ValueRange{Values: [][]any{{title, i}}}).ValueInputOption("RAW").Do()
		if err != nil {
			t.Fatalf("%q: %v", title, err)
		}
		echo, err := a1.Parse(upd.UpdatedRange)
		if err != nil || echo.Sheet != title || echo.StartRow != 1 || echo.StartCol != 1 {
			t.Fatalf("%q: echoed range %q parses to %+v, %v", title, upd.UpdatedRange, echo, err)
		}
		got, err := svc.Spreadsheets.Values.Get(id, a1.QuoteSheet(title)).Do()
		if err != nil || len(got.Values) != 2 || got.Values[1][1] != title {
			t.Fatalf("%q: read back %v, %v", title, got, err)
		}
	}
	// Titles are matched exactly: the NFC and NFD spellings are two tabs.
	got, err := svc.Spreadsheets.Values.Get(id, "'Cafe\u0301'!B2").Do()
	if err != nil || got.Values[0][0] != "Cafe\u0301" {
		t.Fatalf("NFD tab: %v %v", got, err)
	}
	// A duplicate differing only in case is refused, as Google does.
	want400(t, "case-insensitive duplicate", doBatch(t, svc, id, &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "co2"}}}))
	// A 101-character title is refused.
	want400(t, "long title", doBatch(t, svc, id, &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: strings.Repeat("é", 101)}}}))
}

func TestHugeBodiesAreBoundedByMaxRequestBytes(t *testing.T) {
	emu := New(Options{MaxRequestBytes: 1 << 20})
	if err := emu.CreateSpreadsheet("b", "t"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	big := `{"values":[["` + strings.Repeat("x", 2<<20) + `"]]}`
	for name, mk := range map[string]func() io.Reader{
		"with Content-Length": func() io.Reader { return strings.NewReader(big) },
		"chunked":             func() io.Reader { return io.MultiReader(strings.NewReader(big)) },
	} {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v4/spreadsheets/b/values/A1?valueInputOption=RAW", mk())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(`"code":400`)) || !bytes.Contains(body, []byte("payload size exceeds")) {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, body)
		}
	}
}

// Many clients at once, mixing every kind of request, the web view and
// Save, must be race-free (run with -race) and lose no write.
func TestConcurrentClientsAreSerialisable(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{AutoCreate: true})
	const workers, each = 8, 15
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other := fmt.Sprintf("auto-%d", w)
			for i := 0; i < each; i++ {
				vr := &sheets.ValueRange{Values: [][]any{{fmt.Sprintf("w%d-%d", w, i), w, i}}}
				if _, err := svc.Spreadsheets.Values.Append(id, "Sheet1!A1", vr).ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Do(); err != nil {
					t.Error(err)
					return
				}
				if _, err := svc.Spreadsheets.Values.Update(other, fmt.Sprintf("A%d", i+1), vr).ValueInputOption("USER_ENTERED").Do(); err != nil {
					t.Error(err)
					return
				}
				if _, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A:C").Do(); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 0 {
					_ = doBatch(t, svc, id, &sheets.Request{AppendDimension: &sheets.AppendDimensionRequest{SheetId: 0, Dimension: "ROWS", Length: 1}})
					var buf bytes.Buffer
					if err := emu.Save(&buf); err != nil {
						t.Error(err)
					}
					rec := httptest.NewRecorder()
					emu.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/view/"+id+"/0", nil))
					_ = emu.Person(id).Type("Sheet1", "Z1", "person")
					emu.Deny("nobody")
					_ = emu.Counters(id)
				}
			}
		}()
	}
	wg.Wait()
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A:A").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Values) != workers*each {
		t.Fatalf("%d rows, want %d", len(got.Values), workers*each)
	}
	if c := emu.Counters(id); c.Writes < workers*each {
		t.Fatalf("counters %+v", c)
	}
}

func TestDenyAnswersGoogles403(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	emu.Deny(id)
	_, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1").Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 403 || gerr.Message != "The caller does not have permission" ||
		!strings.Contains(gerr.Body, `"status":"PERMISSION_DENIED"`) {
		t.Fatalf("denied: %v", err)
	}
	if c := emu.Counters(id); c.Reads != 1 {
		t.Fatalf("a denied request is still received: %+v", c)
	}
	// Copying a tab into a denied spreadsheet is denied too, and nothing lands.
	if err := emu.CreateSpreadsheet("dest", "d"); err != nil {
		t.Fatal(err)
	}
	emu.Allow(id)
	emu.Deny("dest")
	_, err = svc.Spreadsheets.Sheets.CopyTo(id, 0, &sheets.CopySheetToAnotherSpreadsheetRequest{DestinationSpreadsheetId: "dest"}).Do()
	if !errors.As(err, &gerr) || gerr.Code != 403 {
		t.Fatalf("copyTo denied destination: %v", err)
	}
	emu.Allow("dest")
	ss, err := svc.Spreadsheets.Get("dest").Do()
	if err != nil || len(ss.Sheets) != 1 {
		t.Fatalf("dest after denied copy: %v %v", ss, err)
	}
}

// copyTo without a destination must not create a spreadsheet with an empty
// id (which Save would write and Load then refuse, losing every spreadsheet).
func TestCopyToEmptyDestinationKeepsStateLoadable(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{AutoCreate: true})
	_, err := svc.Spreadsheets.Sheets.CopyTo(id, 0, &sheets.CopySheetToAnotherSpreadsheetRequest{}).Do()
	want400(t, "empty destination", err)
	var buf bytes.Buffer
	if err := emu.Save(&buf); err != nil {
		t.Fatal(err)
	}
	if err := New(Options{}).Load(&buf); err != nil {
		t.Fatalf("saved state does not load: %v", err)
	}
}

func TestLoadRejectsImpossibleGrids(t *testing.T) {
	for name, doc := range map[string]string{
		"columns past ZZZ": `{"version":1,"spreadsheets":[{"spreadsheetId":"x","sheets":[{"sheetId":0,"title":"S","rowCount":1,"columnCount":18279}]}]}`,
		"over 10M cells":   `{"version":1,"spreadsheets":[{"spreadsheetId":"x","sheets":[{"sheetId":0,"title":"S","rowCount":5000000,"columnCount":3}]}]}`,
		"overflowing grid": `{"version":1,"spreadsheets":[{"spreadsheetId":"x","sheets":[{"sheetId":0,"title":"S","rowCount":4611686018427387904,"columnCount":4}]}]}`,
		"duplicate ids":    `{"version":1,"spreadsheets":[{"spreadsheetId":"x","sheets":[{"sheetId":0,"title":"S","rowCount":1,"columnCount":1}]},{"spreadsheetId":"x","sheets":[{"sheetId":0,"title":"S","rowCount":1,"columnCount":1}]}]}`,
		"duplicate tabs":   `{"version":1,"spreadsheets":[{"spreadsheetId":"x","sheets":[{"sheetId":0,"title":"S","rowCount":1,"columnCount":1},{"sheetId":0,"title":"T","rowCount":1,"columnCount":1}]}]}`,
		"null metadata":    `{"version":1,"spreadsheets":[{"spreadsheetId":"x","sheets":[{"sheetId":0,"title":"S","rowCount":1,"columnCount":1}],"developerMetadata":[null]}]}`,
		"null tab":         `{"version":1,"spreadsheets":[{"spreadsheetId":"x","sheets":[null]}]}`,
		"trailing garbage": `{"version":1,"spreadsheets":[]} {`,
	} {
		emu := New(Options{})
		if err := emu.CreateSpreadsheet("keep", "k"); err != nil {
			t.Fatal(err)
		}
		if err := emu.Load(strings.NewReader(doc)); !errors.Is(err, ErrState) {
			t.Errorf("%s: Load = %v, want ErrState", name, err)
		}
		if ids := emu.SpreadsheetIDs(); len(ids) != 1 || ids[0] != "keep" {
			t.Errorf("%s: state replaced: %v", name, ids)
		}
	}
}

// Error messages name ranges and tabs, never cell data.
func TestErrorMessagesDoNotEchoCellData(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	body := `{"values":[[1e999]]}`
	code, msg := rawPut(t, apiURL(svc, "v4/spreadsheets/"+id+"/values/A1?valueInputOption=RAW"), body)
	if code != http.StatusBadRequest || strings.Contains(msg, "1e999") {
		t.Fatalf("non-finite number: %d %s", code, msg)
	}
}

func rawPut(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPut, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Clearing a whole large tab through updateCells/repeatCell (empty CellData
// over the range) must not materialise every empty cell in memory.
func TestClearingHugeRangeAllocatesNothing(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	if err := doBatch(t, svc, id, &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: 0, GridProperties: &sheets.GridProperties{RowCount: 500_000, ColumnCount: 4}},
		Fields:     "gridProperties(rowCount,columnCount)"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: [][]any{{"keep-note-row"}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	within(t, hangBound, "clearing 2M cells", func() {
		if err := doBatch(t, svc, id,
			&sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{Range: &sheets.GridRange{SheetId: 0}, Fields: "userEnteredValue"}},
			&sheets.Request{RepeatCell: &sheets.RepeatCellRequest{Range: &sheets.GridRange{SheetId: 0}, Cell: &sheets.CellData{}, Fields: "note"}},
		); err != nil {
			t.Error(err)
		}
	})
	emu.mu.Lock()
	stored := len(emu.books[id].Sheets[0].Rows)
	emu.mu.Unlock()
	if stored > 1 {
		t.Fatalf("clearing stored %d rows of empty cells", stored)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1").Do()
	if err != nil || len(got.Values) != 0 {
		t.Fatalf("tab not cleared: %v %v", got.Values, err)
	}
}

// Odd or hostile formulas evaluate to an error value at worst; they never
// break the read (a panic would drop the connection).
func TestHostileFormulasNeverBreakReads(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	formulas := []string{"=IF()", "=ROUND()", "=ABS()", "=MIN()", "=MAX()", "=LEN()", "=NOT()", "=AND()", "=SUM()",
		"=AVERAGE()", "=CONCAT()", "=UPPER(,)", "=(", "=)", "=\"", "=1/0", "=-", "=--1", "=1e999*1e999", "=A1:B2",
		"=Nope!A1", "='Nope'!A1:B2", "=SUM(A:A)", "=SUM(1:1)", "=ZZZ1000000", "=A0", "=$", "=!A1", "=SUM(Sheet1)",
		"=" + strings.Repeat("(", 20_000) + "1" + strings.Repeat(")", 20_000), "=" + strings.Repeat("-", 40_000) + "1",
		"=" + strings.Repeat("1+", 20_000) + "1", "=IF(TRUE," + strings.Repeat("IF(TRUE,", 5000) + "1" + strings.Repeat(")", 5001),
		"=ROUND(1,-400)", "=ROUND(1,400)", "=2^99999", "=INT(1e308*10)", "=\"a\"&" + strings.Repeat("\"b\"&", 10_000) + "\"c\"",
	}
	var rows [][]any
	for _, f := range formulas {
		rows = append(rows, []any{f})
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: rows}).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	within(t, hangBound, "evaluating hostile formulas", func() {
		for _, opt := range []string{"FORMATTED_VALUE", "UNFORMATTED_VALUE", "FORMULA"} {
			if _, err := svc.Spreadsheets.Values.Get(id, "Sheet1").ValueRenderOption(opt).Do(); err != nil {
				t.Errorf("%s: %v", opt, err)
			}
		}
		if _, err := svc.Spreadsheets.Get(id).IncludeGridData(true).Do(); err != nil {
			t.Errorf("grid data: %v", err)
		}
	})
}

func TestFormulaSignsAndNesting(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vals := [][]any{{"=-5"}, {"=--5"}, {"=-+-5"}, {"=---5%"}, {"=--\"a\""}, {"=+\"a\""},
		{"=" + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300)}, {"=" + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200)},
		{"=1e300*1e300"}}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: vals}).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:A9").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil {
		t.Fatal(err)
	}
	want := []any{-5.0, 5.0, 5.0, -0.05, "#VALUE!", "a", "#ERROR!", 1.0, "#NUM!"}
	for i, w := range want {
		if got.Values[i][0] != w {
			t.Errorf("%v = %v, want %v", vals[i][0], got.Values[i][0], w)
		}
	}
}

// The web view escapes titles and cells (a person can type anything),
// numbers rows like the UI (from 1) and renders at most maxViewRows rows.
func TestViewEscapesAndBoundsOutput(t *testing.T) {
	emu := New(Options{})
	if err := emu.CreateSpreadsheet("v", `<script>alert("t")</script>`); err != nil {
		t.Fatal(err)
	}
	p := emu.Person("v")
	if err := p.Type("Sheet1", "A1", `<img src=x onerror=alert(1)>`); err != nil {
		t.Fatal(err)
	}
	if err := p.ResizeTab("Sheet1", 5000, 2); err != nil {
		t.Fatal(err)
	}
	if err := p.Type("Sheet1", "B4000", "deep"); err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		rec := httptest.NewRecorder()
		emu.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, rec.Code)
		}
		return rec.Body.String()
	}
	for _, page := range []string{get("/"), get("/view/v"), get("/view/v/0")} {
		if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
			t.Fatalf("unescaped payload:\n%s", page)
		}
	}
	tab := get("/view/v/0")
	if !strings.Contains(tab, "<tr><th>1</th><td><div>&lt;img") || strings.Contains(tab, "<th>0</th>") {
		t.Fatalf("rows not numbered from 1:\n%.400s", tab)
	}
	if strings.Contains(tab, "deep") || !strings.Contains(tab, "showing rows 1–1000") || strings.Count(tab, "<tr>") > 1001 {
		t.Fatal("view not bounded to 1000 rows")
	}
}

// quotaUser is chosen by the client: distinct values must not accumulate
// state once their window has passed.
func TestQuotaForgetsIdleUsers(t *testing.T) {
	qs := newQuotaState(Quota{ReadsPerUser: 5, ReadsPerProject: 1_000_000, Window: time.Minute})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 10_000; i++ {
		now = now.Add(time.Second)
		if d := qs.admit(fmt.Sprintf("user-%d", i), false, now); d != nil {
			t.Fatalf("request %d denied", i)
		}
	}
	if n := len(qs.buckets); n > 1200 {
		t.Fatalf("%d quota buckets kept for 10,000 one-off users", n)
	}
}
