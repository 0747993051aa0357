package gsheets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/quick"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// bodyRecorder keeps the batchUpdate bodies a provider sends.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies []string
}

func (r *bodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && strings.HasSuffix(req.URL.Path, ":batchUpdate") {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// counts counts the compact blocks (insertDimension) and appendCells
// requests sent.
func (r *bodyRecorder) counts() (blocks, appendCells int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		blocks += strings.Count(b, `"insertDimension"`)
		appendCells += strings.Count(b, `"appendCells"`)
	}
	return blocks, appendCells
}

// textEntity has a text column per kind of text and one of every other kind.
func textEntity() layout.Entity {
	return layout.Entity{Name: "Note", Fields: []layout.Field{
		{Name: "id", Kind: cell.String, Key: true},
		{Name: "a", Kind: cell.String}, {Name: "b", Kind: cell.String}, {Name: "c", Kind: cell.String},
		{Name: "n", Kind: cell.Float}, {Name: "i", Kind: cell.Int}, {Name: "ok", Kind: cell.Bool},
		{Name: "at", Kind: cell.Time}, {Name: "d", Kind: cell.String},
	}}
}

// trickyTexts are texts Sheets could read as something else in some
// modelled locale, or that the paste cannot carry.
var trickyTexts = []string{
	"=1+1", "+1", "-1", "@x", "'quoted", "'", "0050", "1,5", "1.5", "1.500,25", "1e5", "12%", "$5", "-$5",
	"2020-01-01", "1/2/2020", "02.01.2020", "13/01/2020", "12:30", "3:04 PM", "Jan 5", "TRUE", "false", "Wahr",
	"FALSCH", "vrai", "Faux", "tab\there", "line\nbreak", "cr\rhere", `say "hi"`, "trailing ", " leading",
	"x1", "Straße 5", "Ⅻ", "٣", "#N/A", "", strings.Repeat("long", 300), "a\u2028b",
}

// plainTexts are texts the paste carries.
var plainTexts = []string{"Vila", "El Tarter", "Sant Julià de Lòria", "les Escaldes", "AD", "東京", "Ελλάδα",
	"O'Brien", "a-b/c", "Zürich, Kanton", "x", "naïve café", "Ünïcödé ünd Läñgé Wörds"}

// randomText draws a text of any kind.
func randomText(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return trickyTexts[r.IntN(len(trickyTexts))]
	case 1:
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteRune(rune(0x20 + r.IntN(0x3000)))
		}
		return b.String()
	}
	return plainTexts[r.IntN(len(plainTexts))]
}

// randomRow draws one row's values.
func randomRow(r *rand.Rand) map[string]any {
	v := map[string]any{"id": fmt.Sprint(r.Int64()), "a": randomText(r), "b": randomText(r), "c": randomText(r), "d": randomText(r)}
	switch r.IntN(3) {
	case 0:
		v["n"] = r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-15))
	case 1:
		v["n"] = nil
	}
	if r.IntN(2) == 0 {
		v["i"] = r.Int64N(1<<53) - 1<<52
	}
	if r.IntN(2) == 0 {
		v["ok"] = r.IntN(2) == 0
	}
	if r.IntN(2) == 0 {
		v["at"] = time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()
	}
	return v
}

// pasteHarness is a harness whose spreadsheet has locale and whose
// provider's batchUpdate bodies are recorded.
func pasteHarness(t *testing.T, locale string) (*harness, *bodyRecorder, *sheetsio.Workbook, *layout.Schema) {
	t.Helper()
	rec := &bodyRecorder{}
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.HTTPClient = &http.Client{Transport: rec} })
	_, err := h.raw.Spreadsheets.BatchUpdate(testSheetID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{
		UpdateSpreadsheetProperties: &sheets.UpdateSpreadsheetPropertiesRequest{
			Properties: &sheets.SpreadsheetProperties{Locale: locale}, Fields: "locale"}}}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	s, err := layout.NewSchema(textEntity())
	if err != nil {
		t.Fatal(err)
	}
	return h, rec, h.provision(s), s
}

// wantRow is what UNFORMATTED_VALUE reads of a row written with values:
// every cell as cell.Encode wrote it, blanks as "" (trailing ones cut).
func wantRow(t *testing.T, spec layout.TabSpec, anchor string, values map[string]any) []any {
	t.Helper()
	row := make([]any, len(spec.Columns))
	if _, _, err := sheetsio.EncodeValues(spec, values, row); err != nil {
		t.Fatal(err)
	}
	row[spec.Anchor] = anchor
	for i, v := range row {
		if v == nil {
			row[i] = ""
		}
	}
	for len(row) > 0 && row[len(row)-1] == "" {
		row = row[:len(row)-1]
	}
	return row
}

// dispatchRows appends rows (first sends when blind) and checks every op applied.
func dispatchRows(h *harness, w *sheetsio.Workbook, tab string, rows []map[string]any, first int, blind bool) {
	h.t.Helper()
	var ops []sheetsio.Op
	for i, v := range rows {
		op := appendOp(tab, fmt.Sprintf("r%d", first+i), v)
		op.FirstSend = blind
		ops = append(ops, op)
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
}

// Every cell written by the compact append (pasteData for the text Sheets
// cannot misparse, typed CellData for the rest) reads back exactly, with
// UNFORMATTED_VALUE, in every locale the emulator models: the first batch
// after a preflight, the second blind (trust), through the real client.
func TestPasteAppendReadsBackIdentical(t *testing.T) {
	for _, locale := range emulator.ModelledLocales() {
		t.Run(locale, func(t *testing.T) {
			prop := func(seed uint64) bool {
				h, rec, w, s := pasteHarness(t, locale)
				r := rand.New(rand.NewPCG(seed, 30))
				spec, _ := s.Tab("Note_System")
				var rows []map[string]any
				for range 2 + r.IntN(20) {
					rows = append(rows, randomRow(r))
				}
				half := len(rows) / 2
				dispatchRows(h, w, "Note_System", rows[:half], 0, false)
				dispatchRows(h, w, "Note_System", rows[half:], half, true)
				got := h.values(spec.Name)
				if blocks, app := rec.counts(); blocks != 2 || app != 2 { // the receipts keep appendCells
					t.Fatalf("seed %d: %d compact blocks and %d appendCells requests, want 2 and 2", seed, blocks, app)
				}
				if len(got) != len(rows)+1 {
					t.Fatalf("seed %d: %d rows read, want %d", seed, len(got)-1, len(rows))
				}
				for i, v := range rows {
					if want := wantRow(t, spec, fmt.Sprintf("r%d", i), v); !reflect.DeepEqual(got[i+1], want) {
						t.Fatalf("seed %d row %d:\n got %#v\nwant %#v", seed, i, got[i+1], want)
					}
				}
				return true
			}
			if err := quick.Check(prop, &quick.Config{MaxCount: 6, Rand: mrand.New(mrand.NewSource(30))}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// No text pastable accepts is read as anything but itself by the
// emulator's paste parsing, in any modelled locale; every tricky text is
// refused.
func TestPastableTextIsReadAsItself(t *testing.T) {
	for _, s := range trickyTexts {
		if pastable(s) {
			t.Errorf("pastable(%q) = true", s)
		}
	}
	for _, s := range plainTexts {
		if !pastable(s) {
			t.Errorf("pastable(%q) = false", s)
		}
	}
	for _, locale := range emulator.ModelledLocales() {
		check := func(s string) bool {
			if !pastable(s) {
				return true
			}
			got, ok := emulator.PastedText(s, locale)
			return ok && got == s
		}
		if err := quick.Check(check, &quick.Config{MaxCount: 5000, Rand: mrand.New(mrand.NewSource(30))}); err != nil {
			t.Errorf("%s: %v", locale, err)
		}
		for _, s := range append(plainTexts, trickyTexts...) {
			if !check(s) {
				t.Errorf("%s: %q pastable but read otherwise", locale, s)
			}
		}
	}
}

// A spreadsheet in a locale whose paste parsing is not modelled keeps
// appendCells.
func TestUnmodelledLocaleKeepsAppendCells(t *testing.T) {
	h, rec, w, _ := pasteHarness(t, "es_ES")
	dispatchRows(h, w, "Note_System", []map[string]any{{"id": "1", "a": "Verdadero"}}, 0, false)
	if blocks, app := rec.counts(); blocks != 0 || app != 2 {
		t.Fatalf("%d compact blocks and %d appendCells requests, want 0 and 2", blocks, app)
	}
	if got := h.values("Note_System")[1][1]; got != "Verdadero" {
		t.Fatalf("read %#v", got)
	}
}

// New rows are inserted below the last row, never over a row a person
// added since the preflight (the rows move down), and the next blind
// batch follows the rows this client wrote.
func TestPasteAppendNeverOverwritesARowBelow(t *testing.T) {
	h, _, w, s := pasteHarness(t, "en_US")
	spec, _ := s.Tab("Note_System")
	dispatchRows(h, w, "Note_System", []map[string]any{{"id": "1", "a": "first"}}, 0, false)
	_, err := h.raw.Spreadsheets.Values.Update(testSheetID, spec.Name+"!A3", &sheets.ValueRange{
		Values: [][]any{{"typed by a person"}}}).ValueInputOption("RAW").Context(context.Background()).Do()
	if err != nil {
		t.Fatal(err)
	}
	dispatchRows(h, w, "Note_System", []map[string]any{{"id": "2", "a": "second"}, {"id": "3", "a": "third"}}, 1, true)
	got := h.values(spec.Name)
	var col0 []any
	for _, r := range got[1:] {
		col0 = append(col0, r[0])
	}
	if want := []any{"1", "2", "3", "typed by a person"}; !reflect.DeepEqual(col0, want) {
		t.Fatalf("first column %v, want %v", col0, want)
	}
}

// A write whose outcome is unknown forgets where the tab ends (the next
// append reads first); a write that lands keeps it for the next blind one.
func TestUncertainWriteForgetsWhereATabEnds(t *testing.T) {
	h, _, w, _ := pasteHarness(t, "en_US")
	dispatchRows(h, w, "Note_System", []map[string]any{{"id": "1", "a": "first"}}, 0, false)
	if at, ok := trustOf(w).end("Note_System"); !ok || at != 2 {
		t.Fatalf("end %d (known %v), want 2", at, ok)
	}
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThenDrop, Match: emulator.MatchWrites})
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Note_System", "r1", map[string]any{"id": "2"})}})
	h.wantStatus(res, 0, sheetsio.StatusUncertain)
	if _, ok := trustOf(w).end("Note_System"); ok {
		t.Fatal("an uncertain write kept the tab's end")
	}
	op := appendOp("Note_System", "r2", map[string]any{"id": "3", "a": "third"})
	op.FirstSend = true
	if res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{op}}); res.Reads == 0 {
		t.Fatal("an append whose tab end is unknown went blind")
	}
}

// A blind append whose insertion row no longer exists (people deleted the
// rows below it) is refused whole by Sheets: nothing applied, the op is
// not sent, and the next dispatch reads and lands it.
func TestBlindAppendPastTheGridIsRefusedAndResentAfterARead(t *testing.T) {
	h, _, w, s := pasteHarness(t, "en_US")
	spec, _ := s.Tab("Note_System")
	dispatchRows(h, w, "Note_System", []map[string]any{{"id": "1", "a": "first"}}, 0, false)
	id, _ := w.SheetID("Note_System")
	_, err := h.raw.Spreadsheets.BatchUpdate(testSheetID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{
		DeleteDimension: &sheets.DeleteDimensionRequest{Range: &sheets.DimensionRange{SheetId: id, Dimension: "ROWS", StartIndex: 1}}}}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	op := appendOp("Note_System", "r1", map[string]any{"id": "2", "a": "second"})
	op.FirstSend = true
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{op}})
	if h.wantStatus(res, 0, sheetsio.StatusNotSent); res.Reads != 0 {
		t.Fatalf("the blind append read %d times", res.Reads)
	}
	res = h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{op}})
	if h.wantStatus(res, 0, sheetsio.StatusApplied); res.Reads == 0 {
		t.Fatal("the resend went blind")
	}
	got := h.values(spec.Name)
	if len(got) != 2 || got[1][0] != "2" {
		t.Fatalf("tab shows %v", got)
	}
}
