package gsheets

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

const filteredSample = `{"spreadsheetId":"s1","valueRanges":[
 {"valueRange":{"range":"'City_Input'!A1:D3","majorDimension":"ROWS","values":[["key","name","note","__hikoutei_row_id"],
  ["1","Zürich \"Z\"",2.5,"1"],[],["x\u00e9",true,null,"",-0]]},"dataFilters":[{"gridRange":{"sheetId":7}}]},
 {"valueRange":{"range":"'Empty'!A1:Z1000","majorDimension":"ROWS"},"dataFilters":[]},
 {"dataFilters":[{"gridRange":{"sheetId":9}}]}]}`

// stdDecode decodes body as the generated client does.
func stdDecode(body string) (*sheets.BatchGetValuesByDataFilterResponse, error) {
	var out sheets.BatchGetValuesByDataFilterResponse
	err := json.Unmarshal([]byte(body), &out)
	return &out, err
}

// sameValues compares what the snapshots use: each range's name and rows.
func sameValues(a, b *sheets.BatchGetValuesByDataFilterResponse) bool {
	if a.SpreadsheetId != b.SpreadsheetId || len(a.ValueRanges) != len(b.ValueRanges) {
		return false
	}
	for i := range a.ValueRanges {
		ra, rb := a.ValueRanges[i].ValueRange, b.ValueRanges[i].ValueRange
		if (ra == nil) != (rb == nil) && !(emptyRange(ra) && emptyRange(rb)) {
			return false
		}
		if ra == nil || rb == nil {
			continue
		}
		if ra.Range != rb.Range || ra.MajorDimension != rb.MajorDimension || len(ra.Values) != len(rb.Values) {
			return false
		}
		for j := range ra.Values {
			if len(ra.Values[j]) != len(rb.Values[j]) || (len(ra.Values[j]) > 0 && !reflect.DeepEqual(ra.Values[j], rb.Values[j])) {
				return false
			}
		}
	}
	return true
}

func emptyRange(v *sheets.ValueRange) bool {
	return v == nil || v.Range == "" && v.MajorDimension == "" && len(v.Values) == 0
}

// TestDecodeFilteredValuesMatchesTheGeneratedClient: the streamed decoder
// yields the ranges and cells (strings with escapes, numbers, booleans,
// nulls, empty rows, a range without values, a range without a value
// range) that json decoding into the sheets/v4 type yields.
func TestDecodeFilteredValuesMatchesTheGeneratedClient(t *testing.T) {
	got, _, err := decodeFilteredValues(strings.NewReader(filteredSample), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := stdDecode(filteredSample)
	if err != nil {
		t.Fatal(err)
	}
	if !sameValues(got, want) {
		t.Fatalf("streamed %+v\nwant %+v", got, want)
	}
	if c := got.ValueRanges[0].ValueRange.Values[1][1]; c != `Zürich "Z"` {
		t.Fatalf("cell %q", c)
	}
}

// TestDecodeFilteredValuesRejectsATruncatedResponse: a body cut short (a
// connection lost mid-response) is a read error, never a shorter tab.
func TestDecodeFilteredValuesRejectsATruncatedResponse(t *testing.T) {
	for _, n := range []int{0, 10, len(filteredSample) / 2, len(filteredSample) - 1} {
		if _, _, err := decodeFilteredValues(strings.NewReader(filteredSample[:n]), nil); err == nil {
			t.Errorf("truncated at %d: decoded", n)
		}
	}
}

// FuzzDecodeFilteredValues: the streamed decoder never panics on any
// body, with or without a RowCheck (one refusing every row: the kept rows
// are decoded at the end), and on the encoding of any response the generated client's
// decoding accepts (what a server sends: one key each, as encoded) it
// yields the same ranges and cells.
func FuzzDecodeFilteredValues(f *testing.F) {
	f.Add(filteredSample)
	f.Add(`{"valueRanges":null}`)
	f.Add(`{"valueRanges":[{"valueRange":null}]}`)
	f.Add(`{"valueRanges":[{"valueRange":{"values":[[1,"a"],null,[{"x":1}]]}}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		_, _, _ = decodeFilteredValues(strings.NewReader(body), nil)
		_, _, _ = decodeFilteredValues(strings.NewReader(body), refusing())
		want, err := stdDecode(body)
		if err != nil {
			return
		}
		sent, err := json.Marshal(want)
		if err != nil {
			return
		}
		for _, ranges := range [][]*digestRange{nil, refusing()} {
			got, _, err := decodeFilteredValues(strings.NewReader(string(sent)), ranges)
			if err != nil {
				t.Fatalf("body %s: %v", sent, err)
			}
			if again, _ := stdDecode(string(sent)); !sameValues(got, again) {
				t.Fatalf("body %s: streamed %+v, want %+v", sent, got, again)
			}
		}
	})
}

// sampleSpec is the tab of filteredSample's first range.
func sampleSpec() layout.TabSpec {
	return layout.TabSpec{Name: "City_Input", Anchor: 3, Columns: []cell.Column{{Name: "key"},
		{Name: "name"}, {Name: "note"}, {Name: "__hikoutei_row_id"}}}
}

// recordingCheck records the digests it is given and certifies when
// accept.
type recordingCheck struct {
	accept bool
	rows   []int
	hashes []string
}

func (c *recordingCheck) Begin() { c.rows, c.hashes = nil, nil }
func (c *recordingCheck) Row(sheetRow int, d cell.RowDigest) bool {
	c.rows, c.hashes = append(c.rows, sheetRow), append(c.hashes, string(d.Hash[:]))
	return c.accept
}
func (c *recordingCheck) Done() bool { return c.accept }

func refusing() []*digestRange {
	return []*digestRange{newDigestRange(sampleSpec(), &recordingCheck{})}
}

// TestDecodeFilteredValuesWithARowCheck: a range its check certifies keeps
// its header row only, after the check saw each data row's sheet row and
// the hash a full decode gives it; a range its check refuses is decoded
// exactly as without a check.
func TestDecodeFilteredValuesWithARowCheck(t *testing.T) {
	want, _ := stdDecode(filteredSample)
	spec := sampleSpec()
	for _, accept := range []bool{true, false} {
		c := &recordingCheck{accept: accept}
		got, certified, err := decodeFilteredValues(strings.NewReader(filteredSample), []*digestRange{newDigestRange(spec, c)})
		if err != nil {
			t.Fatal(err)
		}
		if certified[0] != accept {
			t.Fatalf("accept %v: certified %v", accept, certified)
		}
		if !accept {
			if !sameValues(got, want) {
				t.Fatalf("refused range: %+v", got)
			}
			continue
		}
		if n := len(got.ValueRanges[0].ValueRange.Values); n != 1 {
			t.Fatalf("certified range kept %d rows", n)
		}
		full := want.ValueRanges[0].ValueRange.Values
		for i, h := range c.hashes {
			if c.rows[i] != i+2 || h != spec.RowHash(cell.PadRow(full[i+1], 4)[:4]) {
				t.Fatalf("row %d: sheet row %d hash %s", i, c.rows[i], h)
			}
		}
	}
}

const anchorColumnSample = `{"spreadsheetId":"s1","valueRanges":[
 {"valueRange":{"range":"'City_Input'!A1:D1","majorDimension":"ROWS","values":[["key","name","note","__hikoutei_row_id"]]},"dataFilters":[]},
 {"valueRange":{"range":"'City_Input'!D2:D7","majorDimension":"ROWS","values":[["a1"],[],["Zu\u0308rich \"Z\""],[2.5],[true],["b2"]]},"dataFilters":[]}]}`

// TestDecodeFilteredKeepsAnAnchorColumnAsStrings: a value range marked as
// a column decodes to one string a row ("" for an empty row or a cell
// that is no text), in order, with no rows of cells left in its Values;
// the ranges not marked decode as the generated client decodes them.
func TestDecodeFilteredKeepsAnAnchorColumnAsStrings(t *testing.T) {
	got, _, cols, err := decodeFiltered(strings.NewReader(anchorColumnSample), nil, []bool{false, true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a1", "", "Zu\u0308rich \"Z\"", "", "", "b2"}
	if len(cols) != 2 || cols[0] != nil || !reflect.DeepEqual(cols[1], want) {
		t.Fatalf("columns %q, want [nil %q]", cols, want)
	}
	col := got.ValueRanges[1].ValueRange
	if col.Range != "'City_Input'!D2:D7" || len(col.Values) != 0 {
		t.Fatalf("column range %q kept %d rows of cells", col.Range, len(col.Values))
	}
	std, err := stdDecode(anchorColumnSample)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.ValueRanges[0].ValueRange.Values, std.ValueRanges[0].ValueRange.Values) {
		t.Fatalf("header %v, want %v", got.ValueRanges[0].ValueRange.Values, std.ValueRanges[0].ValueRange.Values)
	}
	if _, _, _, err := decodeFiltered(strings.NewReader(anchorColumnSample[:120]), nil, []bool{false, true}); err == nil {
		t.Fatal("a cut response decoded")
	}
}

// TestFillAnchorsIndexesAStringColumn: a preflight's anchor column, as
// strings, finds each anchor's sheet row (NFC, a duplicate found twice,
// I16), skips the rows without one and gives the tab's extent.
func TestFillAnchorsIndexesAStringColumn(t *testing.T) {
	s, err := layout.NewSchema(cityEntity())
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := s.Tab("City_Input")
	header := make([]any, 0, len(spec.Headers()))
	for _, h := range spec.Headers() {
		header = append(header, h)
	}
	snap := &sheetsio.TabSnapshot{Tab: spec.Name}
	snap.FillAnchors(spec, [][]any{header}, []string{"a1", "", "Zu\u0308rich", "a1", ""})
	if snap.Err != nil || !snap.Partial() || snap.Empty {
		t.Fatalf("err %v, partial %v, empty %v", snap.Err, snap.Partial(), snap.Empty)
	}
	if rows := snap.Find("a1"); len(rows) != 2 || rows[0].SheetRow != 2 || rows[1].SheetRow != 5 {
		t.Fatalf("a1 found at %+v, want rows 2 and 5", rows)
	}
	if rows := snap.Find("Zürich"); len(rows) != 1 || rows[0].SheetRow != 4 {
		t.Fatalf("Zürich found at %+v, want row 4", rows)
	}
	if rows := snap.Find(""); len(rows) != 0 {
		t.Fatalf("an empty anchor found %+v", rows)
	}
	if e := snap.Extent(); e != 5 {
		t.Fatalf("extent %d, want 5", e)
	}
}

// BenchmarkDecodeAnchorColumn decodes the header and anchor column of a
// 171,075-row tab (a preflight of appends on row 5's cities) kept as
// strings (decodeFiltered, what the preflight does) and as one-cell rows
// (decodeFilteredValues, what it did), and reports the bytes the result
// holds live (live-B/row) beside -benchmem's allocations.
func BenchmarkDecodeAnchorColumn(b *testing.B) {
	const rows = 171075
	var body strings.Builder
	body.WriteString(`{"spreadsheetId":"s1","valueRanges":[{"valueRange":{"range":"'City_System'!A1:I1","majorDimension":"ROWS","values":[["key","name","lat","lng","country","admin1","admin2","note","__hikoutei_row_id"]]}},`)
	body.WriteString(`{"valueRange":{"range":"'City_System'!I2:I171076","majorDimension":"ROWS","values":[`)
	for i := range rows {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `["r1-%024d"]`, i)
	}
	body.WriteString(`]}}]}`)
	sample := body.String()
	for _, c := range []struct {
		name   string
		decode func() any
	}{
		{"strings", func() any {
			_, _, cols, err := decodeFiltered(strings.NewReader(sample), nil, []bool{false, true})
			if err != nil || len(cols[1]) != rows {
				b.Fatal(err, len(cols[1]))
			}
			return cols
		}},
		{"cells", func() any {
			resp, _, err := decodeFilteredValues(strings.NewReader(sample), nil)
			if err != nil || len(resp.ValueRanges[1].ValueRange.Values) != rows {
				b.Fatal(err)
			}
			return resp
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var live float64
			for b.Loop() {
				live = liveBytes(c.decode)
			}
			b.ReportMetric(live/rows, "live-B/row")
		})
	}
}

// liveBytes is how much more the heap holds after a collection while
// the value f returned is still referenced.
func liveBytes(f func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// TestDecodeFilteredColumnTakesHostileCellsAsTheClientWould: an anchor
// column with cells that are no text (null rows, a nested array, an
// object, a number written as a string, an empty string, a long run of
// spaces) gives, row by row, the anchor the generated client's decoding
// gave before (a row's first cell when it is a string, else ""); a
// "values" of null or absent gives no rows, and a row that is no array
// fails the read.
func TestDecodeFilteredColumnTakesHostileCellsAsTheClientWould(t *testing.T) {
	const head = `{"spreadsheetId":"s1","valueRanges":[{"valueRange":{"range":"'T'!A1:B1","values":[["key","__hikoutei_row_id"]]}},{"valueRange":{"range":"'T'!B2:B9",`
	rows := `"values":[null,[null,"x"],[["a"]],[{"k":"v"}],["12"],[""],["   "],["Zu\u0308rich","extra"],[],["a1"],["a1"]]}}]}`
	sample := head + rows
	_, _, cols, err := decodeFiltered(strings.NewReader(sample), nil, []bool{false, true})
	if err != nil {
		t.Fatal(err)
	}
	std, err := stdDecode(sample)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, raw := range std.ValueRanges[1].ValueRange.Values {
		s := ""
		if len(raw) > 0 {
			s, _ = raw[0].(string)
		}
		want = append(want, s)
	}
	if !reflect.DeepEqual(cols[1], want) {
		t.Fatalf("column %q, want %q", cols[1], want)
	}
	for _, tail := range []string{`"values":null}}]}`, `"majorDimension":"ROWS"}}]}`} {
		_, _, cols, err := decodeFiltered(strings.NewReader(head+tail), nil, []bool{false, true})
		if err != nil || len(cols[1]) != 0 {
			t.Fatalf("%s: column %q, err %v", tail, cols[1], err)
		}
	}
	for _, tail := range []string{`"values":[{"a":1}]}}]}`, `"values":["a1"]}}]}`, `"values":{"a":1}}}]}`} {
		if _, _, _, err := decodeFiltered(strings.NewReader(head+tail), nil, []bool{false, true}); err == nil {
			t.Fatalf("%s decoded", tail)
		}
	}
}
