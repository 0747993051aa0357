package gsheets

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// cityEntity is the bench's NotedCity (rows 5c–5d): its System tab has 9
// columns, its Input tab 4 (key, name, note, anchor).
func cityEntity() layout.Entity {
	f := func(name string, user bool) layout.Field {
		return layout.Field{Name: name, Kind: cell.String, Editable: user}
	}
	key := f("key", false)
	key.Key = true
	return layout.Entity{Name: "City", Fields: []layout.Field{key, f("name", true), f("lat", false), f("lng", false),
		f("country", false), f("admin1", false), f("admin2", false), f("note", true)}}
}

// cityValues is a city-like row (the bench's cities file: text fields,
// an empty note).
func cityValues(i int) map[string]any {
	names := []string{"Tokyo", "San Francisco", "Zürich", "São Paulo", "Lagos", "Reykjavík"}
	return map[string]any{"key": strconv.Itoa(i + 1), "name": names[i%len(names)], "lat": fmt.Sprintf("%.5f", float64(i%180)-89.12345),
		"lng": fmt.Sprintf("%.5f", float64(i%360)-179.54321), "country": "JP", "admin1": "Kanto Region", "admin2": "Chiyoda-ku", "note": ""}
}

// TestBodyBytesPerRow measures what a backfill sends per row of each tab
// of the bench's cities (DispatchResult.BodyBytes ÷ rows: the appended
// row, its receipt entry, the body's own share), beside the same rows as
// raw values.batchUpdate data, and holds the System and Input rows under
// bounds so a growing encoding fails here. It logs the figures.
func TestBodyBytesPerRow(t *testing.T) {
	const rows = 2000
	h := newHarness(t, emulator.Options{AutoCreate: true})
	s, err := layout.NewSchema(cityEntity())
	if err != nil {
		t.Fatal(err)
	}
	w := h.provision(s)
	for _, c := range []struct {
		tab   string
		bound float64
	}{{"City_System", 430}, {"City_Input", 190}} {
		spec, _ := s.Tab(c.tab)
		var ops []sheetsio.Op
		var raw [][]any
		for i := range rows {
			vals := tabValues(spec, cityValues(i))
			key := vals["key"].(string)
			// the engine's effect id and payload hash shapes (receipt entries)
			ops = append(ops, sheetsio.Op{ID: key, Tab: c.tab, Kind: sheetsio.OpAppend, Anchor: key, Values: vals,
				Receipt: &sheetsio.Receipt{EffectID: fmt.Sprintf("fx%016x", i), PayloadHash: fmt.Sprintf("xxh64:%016x", i)}})
			raw = append(raw, rawRow(spec, vals))
		}
		res := h.dispatch(w, sheetsio.Batch{Ops: ops})
		for i := range ops {
			h.wantStatus(res, i, sheetsio.StatusApplied)
		}
		perRow := float64(res.BodyBytes) / rows
		js, err := json.Marshal(&sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW",
			Data: []*sheets.ValueRange{{Range: a1.QuoteSheet(c.tab) + "!A2", Values: raw}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f body bytes per row (%d in %d chunk(s)); raw values.batchUpdate of the same rows: %.1f", c.tab, perRow,
			res.BodyBytes, res.Chunks, float64(len(js))/rows)
		if perRow > c.bound {
			t.Errorf("%s: %.1f bytes per row, want ≤ %.0f", c.tab, perRow, c.bound)
		}
	}
}

// tabValues are the values of vals the tab spec has a column for.
func tabValues(spec layout.TabSpec, vals map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range vals {
		if spec.ColumnIndex(k) >= 0 {
			out[k] = v
		}
	}
	return out
}

// rawRow is a row as the raw client sends it: the tab's cells, the key as
// the anchor.
func rawRow(spec layout.TabSpec, vals map[string]any) []any {
	out := make([]any, len(spec.Columns))
	for i, col := range spec.Columns {
		out[i] = vals[col.Name]
	}
	out[spec.Anchor] = vals["key"]
	return out
}

// TestC01C02C03_PropertyAppendedCellsReadBackIdentical: random rows of
// every value kind (awkward text, formulas and numbers as text, integers
// past 2^53, floats of every magnitude, booleans, times, empty cells,
// trailing empty cells) appended in the encoding planned ahead read back
// with UNFORMATTED_VALUE as the very values encoded, in every locale the
// emulator models a spreadsheet in.
func TestC01C02C03_PropertyAppendedCellsReadBackIdentical(t *testing.T) {
	for _, locale := range []string{"en_US", "de_DE", "fr_FR", "ja_JP"} {
		t.Run(locale, func(t *testing.T) {
			h := newHarness(t, emulator.Options{AutoCreate: true})
			w := h.provision(testSchema(t))
			setLocale(t, h, locale)
			rng := rand.New(rand.NewPCG(14, uint64(len(locale))))
			spec, _ := w.Schema().Tab("Part_System")
			var ops []sheetsio.Op
			for i := range 300 {
				ops = append(ops, appendOp("Part_System", fmt.Sprint("p", i), randomPart(rng, i)))
			}
			res := h.dispatch(w, sheetsio.Batch{Ops: ops})
			rows := h.values("Part_System")[1:]
			if len(rows) != len(ops) {
				t.Fatalf("%d rows, want %d", len(rows), len(ops))
			}
			for i, op := range ops {
				h.wantStatus(res, i, sheetsio.StatusApplied)
				want := make([]any, len(spec.Columns))
				if _, _, err := sheetsio.EncodeValues(spec, op.Values, want); err != nil {
					t.Fatal(err)
				}
				want[spec.Anchor] = op.Anchor
				got, err := cell.DecodeRow(spec.Columns, rows[i])
				if err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				wrote, err := cell.DecodeRow(spec.Columns, want)
				if err != nil {
					t.Fatal(err)
				}
				if spec.RowHash(rows[i]) != spec.RowHash(want) || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", wrote) {
					t.Fatalf("row %d read back %#v, wrote %#v", i, rows[i], want)
				}
			}
		})
	}
}

// randomPart is a Part row of random values of every kind its columns
// hold; some are left out (empty cells, trailing ones included).
func randomPart(rng *rand.Rand, i int) map[string]any {
	texts := []string{"00123", "=1+1", "+1 555 0100", "NaN", "SEP1", "1,5", "1.5", "TRUE", "12/31/2026", "31.12.2026", "€ 3,50", "Cafe\u0301", ""}
	v := map[string]any{"id": fmt.Sprint(i)}
	if rng.IntN(4) > 0 {
		v["name"] = texts[rng.IntN(len(texts))] + randomText(rng)
	}
	if rng.IntN(4) > 0 {
		v["qty"] = []int64{0, -42, 1 << 53, 1<<53 + 1, math.MaxInt64, math.MinInt64}[rng.IntN(6)]
	}
	if rng.IntN(4) > 0 {
		v["price"] = []float64{0, 1.25, -0.1, 1e-7, 1e21, 123456789.125, math.SmallestNonzeroFloat64, math.MaxFloat64}[rng.IntN(8)]
	}
	if rng.IntN(4) > 0 {
		v["active"] = rng.IntN(2) == 0
	}
	if rng.IntN(4) > 0 {
		v["updated"] = time.Date(1900+rng.IntN(300), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC)
	}
	return v
}

// setLocale sets the spreadsheet's locale through the API.
func setLocale(t *testing.T, h *harness, locale string) {
	t.Helper()
	_, err := h.raw.Spreadsheets.BatchUpdate(testSheetID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{
		UpdateSpreadsheetProperties: &sheets.UpdateSpreadsheetPropertiesRequest{Properties: &sheets.SpreadsheetProperties{Locale: locale}, Fields: "locale"},
	}}}).Context(context.Background()).Do()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRowsOfTheEarlierEncodingReadAsOwnWrites: rows a build before the
// rows were encoded ahead appended (every cell sent, the trailing empty
// ones as {}, the RowData of rowData) read back as this build's own
// writes: a replay of their appends is recognised (StatusUnchanged, the
// same row hash), and updates guarded by that hash apply.
func TestRowsOfTheEarlierEncodingReadAsOwnWrites(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	spec, _ := w.Schema().Tab("Part_System")
	id, _ := w.SheetID("Part_System")
	rng := rand.New(rand.NewPCG(14, 7))
	var ops []sheetsio.Op
	var old []*sheets.RowData
	for i := range 50 {
		op := appendOp("Part_System", fmt.Sprint("old", i), randomPart(rng, i))
		row := make([]any, len(spec.Columns))
		if _, _, err := sheetsio.EncodeValues(spec, op.Values, row); err != nil {
			t.Fatal(err)
		}
		row[spec.Anchor] = op.Anchor
		ops, old = append(ops, op), append(old, rowData(spec, row))
	}
	_, err := h.raw.Spreadsheets.BatchUpdate(testSheetID, &sheets.BatchUpdateSpreadsheetRequest{
		Requests: []*sheets.Request{appendCellsRequest(id, old)}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	var updates []sheetsio.Op
	for i := range ops {
		r := h.wantStatus(res, i, sheetsio.StatusUnchanged)
		updates = append(updates, sheetsio.Op{ID: fmt.Sprint("u", i), Tab: "Part_System", Kind: sheetsio.OpUpdate, Anchor: ops[i].Anchor,
			ExpectedHash: r.ObservedHash, Values: map[string]any{"name": fmt.Sprint("renamed ", i)}})
	}
	res = h.dispatch(w, sheetsio.Batch{Ops: updates})
	for i := range updates {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
}

// TestDefaultBodiesFitGooglesPayloadLimit: a backfill of more rows than
// one default body holds goes to an emulator that refuses, as Google
// does, a body over 10 MiB, in bodies of at most DefaultMaxBatchBytes
// that it accepts whole: every row applied, one write request a body and
// none refused for its size (a refused body is split in halves and
// logged).
func TestDefaultBodiesFitGooglesPayloadLimit(t *testing.T) {
	// A body is never larger than MaxBatchBytes (TestChunksFillTheBodyLimit).
	if DefaultMaxBatchBytes > emulator.GoogleMaxRequestBytes {
		t.Fatalf("DefaultMaxBatchBytes %d is over Google's limit %d", DefaultMaxBatchBytes, emulator.GoogleMaxRequestBytes)
	}
	h := newHarness(t, emulator.Options{AutoCreate: true, MaxRequestBytes: emulator.GoogleMaxRequestBytes})
	s, err := layout.NewSchema(cityEntity())
	if err != nil {
		t.Fatal(err)
	}
	w := h.provision(s)
	spec, _ := s.Tab("City_System")
	const rows = 56000 // about 24 MB of appendCells rows: three default bodies, two of 12 MiB
	ops := make([]sheetsio.Op, rows)
	for i := range ops {
		vals := tabValues(spec, cityValues(i))
		key := vals["key"].(string)
		ops[i] = sheetsio.Op{ID: key, Tab: "City_System", Kind: sheetsio.OpAppend, Anchor: key, Values: vals,
			Receipt: &sheetsio.Receipt{EffectID: fmt.Sprintf("fx%016x", i), PayloadHash: fmt.Sprintf("xxh64:%016x", i)}}
	}
	before := h.counters().Writes
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	if strings.Contains(h.logs.String(), "split after size rejection") {
		t.Fatal("a body was refused for its size and split")
	}
	if res.Chunks < 2 || res.BodyBytes > int64(res.Chunks)*DefaultMaxBatchBytes {
		t.Fatalf("%d bodies of %d bytes in all: want at least two, of at most %d bytes on average", res.Chunks, res.BodyBytes, DefaultMaxBatchBytes)
	}
	if got := h.counters().Writes - before; got != int64(res.Chunks) {
		t.Fatalf("%d write requests for %d bodies", got, res.Chunks)
	}
	if n := len(h.values("City_System")) - 1; n != rows {
		t.Fatalf("%d rows in the tab, want %d", n, rows)
	}
}
