package emulator

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

func seedIDs(t *testing.T, p *Person) {
	t.Helper()
	for i, v := range []string{"id", "1", "2", "3", "4", "5"} {
		if err := p.Type("Sheet1", "A"+itoa(i+1), v); err != nil {
			t.Fatal(err)
		}
	}
}

func column(t *testing.T, p *Person) []string {
	t.Helper()
	shown, err := p.Displayed("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range shown {
		if len(r) == 0 {
			out = append(out, "")
			continue
		}
		out = append(out, r[0])
	}
	return out
}

func TestPersonSortsDeletesAndPastesRows(t *testing.T) {
	emu := New(Options{AutoCreate: true})
	p := emu.Person("book")
	seedIDs(t, p)
	if err := p.SortByColumn("Sheet1", "A", true, 1); err != nil {
		t.Fatal(err)
	}
	if got := column(t, p); !reflect.DeepEqual(got, []string{"id", "5", "4", "3", "2", "1"}) {
		t.Fatalf("after sort desc: %v", got)
	}
	if err := p.DeleteRows("Sheet1", 3, 1); err != nil {
		t.Fatal(err)
	}
	if got := column(t, p); !reflect.DeepEqual(got, []string{"id", "5", "3", "2", "1"}) {
		t.Fatalf("after delete row 3: %v", got)
	}
	n, err := p.PasteRow("Sheet1", 2)
	if err != nil || n != 6 {
		t.Fatalf("paste row: %d %v", n, err)
	}
	if err := p.InsertRows("Sheet1", 2, 1); err != nil {
		t.Fatal(err)
	}
	if got := column(t, p); !reflect.DeepEqual(got, []string{"id", "", "5", "3", "2", "1", "5"}) {
		t.Fatalf("after paste and insert: %v", got)
	}
	if c := emu.Counters("book"); c != (Counters{}) {
		t.Fatalf("person edits must not count: %+v", c)
	}
}

func TestPersonTypesLikeTheUI(t *testing.T) {
	emu := New(Options{AutoCreate: true})
	p := emu.Person("book")
	for cell, text := range map[string]string{"A1": "0050", "B1": "'0050", "C1": "2020-01-01", "D1": "true", "E1": "50%"} {
		if err := p.Type("Sheet1", cell, text); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.TypeFormula("Sheet1", "F1", "A1*2"); err != nil {
		t.Fatal(err)
	}
	shown, _ := p.Displayed("Sheet1")
	want := []string{"50", "0050", "2020-01-01", "TRUE", "50%", "100"}
	if !reflect.DeepEqual(shown[0], want) {
		t.Fatalf("displayed %v, want %v", shown[0], want)
	}
	if err := p.Type("Nope", "A1", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown tab: %v", err)
	}
	if err := p.Type("Sheet1", "AA1", "x"); !errors.Is(err, ErrGridLimits) {
		t.Fatalf("outside grid: %v", err)
	}
}

func TestPersonRenameAndMergeSeenByClient(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	p := emu.Person(id)
	_ = p.Type("Sheet1", "A1", "keep")
	_ = p.Type("Sheet1", "B1", "lost")
	if err := p.Merge("Sheet1", "A1:B1"); err != nil {
		t.Fatal(err)
	}
	if err := p.RenameTab("Sheet1", "Data"); err != nil {
		t.Fatal(err)
	}
	ss, err := svc.Spreadsheets.Get(id).Do()
	if err != nil || ss.Sheets[0].Properties.Title != "Data" || ss.Sheets[0].Properties.SheetId != 0 || len(ss.Sheets[0].Merges) != 1 {
		t.Fatalf("get: %+v %v", ss, err)
	}
	got, _ := svc.Spreadsheets.Values.Get(id, "Data!A1:B1").Do()
	assertRow(t, got.Values[0], []any{"keep"})
}

func TestSaveLoadRoundTrip(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	_, _ = svc.Spreadsheets.Values.Update(id, "A1", &sheets.ValueRange{Values: rows([]any{"a", 1.5, "=2*3"})}).ValueInputOption("USER_ENTERED").Do()
	var buf bytes.Buffer
	if err := emu.Save(&buf); err != nil {
		t.Fatal(err)
	}
	other := New(Options{})
	if err := other.Load(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	shown, err := other.Person(id).Displayed("Sheet1")
	if err != nil || !reflect.DeepEqual(shown[0], []string{"a", "1.5", "6"}) {
		t.Fatalf("after load: %v %v", shown, err)
	}
	if err := other.Load(strings.NewReader(`{"version":99}`)); !errors.Is(err, ErrState) {
		t.Fatalf("bad version: %v", err)
	}
	if err := other.Load(strings.NewReader(`not json`)); !errors.Is(err, ErrState) {
		t.Fatalf("bad json: %v", err)
	}
}

func TestWebViewEscapesContent(t *testing.T) {
	emu := New(Options{})
	_ = emu.CreateSpreadsheet("b1", "<b>title</b>")
	_ = emu.Person("b1").Type("Sheet1", "A1", "<script>alert(1)</script>")
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	code, home := get("/")
	if code != 200 || !strings.Contains(home, "&lt;b&gt;title&lt;/b&gt;") || strings.Contains(home, "<b>title") {
		t.Fatalf("home: %d %s", code, home)
	}
	code, tab := get("/view/b1/0")
	if code != 200 || !strings.Contains(tab, "&lt;script&gt;") || strings.Contains(tab, "<script>alert") {
		t.Fatalf("tab: %d %s", code, tab)
	}
	if code, _ := get("/view/missing"); code != 404 {
		t.Fatalf("missing book: %d", code)
	}
}

// TestPersonLooksAndTypesInOneMoment: the cell decide picks on the tab
// as shown gets the text (typed like Type); no pick types nothing.
func TestPersonLooksAndTypesInOneMoment(t *testing.T) {
	emu := New(Options{AutoCreate: true})
	p := emu.Person("book")
	for cell, text := range map[string]string{"A1": "id", "B1": "notes", "C1": "tag", "A2": "r1"} {
		if err := p.Type("Sheet1", cell, text); err != nil {
			t.Fatal(err)
		}
	}
	var seen [][]string
	err := p.LookAndType("Sheet1", func(shown [][]string) (string, string) {
		seen = shown
		return "C2", "0050"
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"id", "notes", "tag"}, {"r1"}}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("decide saw %q, want %q", seen, want)
	}
	if err := p.LookAndType("Sheet1", func([][]string) (string, string) { return "", "x" }); err != nil {
		t.Fatal(err)
	}
	shown, _ := p.Displayed("Sheet1")
	if want := [][]string{{"id", "notes", "tag"}, {"r1", "", "50"}}; !reflect.DeepEqual(shown, want) {
		t.Fatalf("tab shows %q, want %q", shown, want)
	}
}
