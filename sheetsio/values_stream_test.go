package sheetsio

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/api/sheets/v4"
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
	got, err := decodeFilteredValues(strings.NewReader(filteredSample))
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
		if _, err := decodeFilteredValues(strings.NewReader(filteredSample[:n])); err == nil {
			t.Errorf("truncated at %d: decoded", n)
		}
	}
}

// FuzzDecodeFilteredValues: the streamed decoder never panics on any
// body, and on the encoding of any response the generated client's
// decoding accepts (what a server sends: one key each, as encoded) it
// yields the same ranges and cells.
func FuzzDecodeFilteredValues(f *testing.F) {
	f.Add(filteredSample)
	f.Add(`{"valueRanges":null}`)
	f.Add(`{"valueRanges":[{"valueRange":null}]}`)
	f.Add(`{"valueRanges":[{"valueRange":{"values":[[1,"a"],null,[{"x":1}]]}}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		_, _ = decodeFilteredValues(strings.NewReader(body))
		want, err := stdDecode(body)
		if err != nil {
			return
		}
		sent, err := json.Marshal(want)
		if err != nil {
			return
		}
		got, err := decodeFilteredValues(strings.NewReader(string(sent)))
		if err != nil {
			t.Fatalf("body %s: %v", sent, err)
		}
		if again, _ := stdDecode(string(sent)); !sameValues(got, again) {
			t.Fatalf("body %s: streamed %+v, want %+v", sent, got, again)
		}
	})
}
