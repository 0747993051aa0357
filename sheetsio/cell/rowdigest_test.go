package cell

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// fullDigest is what a full decode gives for raw: the row decoded as the
// values read decodes it, cut/padded to the width, hashed by VisibleHash.
func fullDigest(t testing.TB, raw []byte, shape RowShape) (hash string, blank bool, anchor string, ok bool) {
	var row []any
	if json.Unmarshal(raw, &row) != nil {
		return "", false, "", false
	}
	for _, c := range row {
		switch c.(type) {
		case []any, map[string]any:
			return "", false, "", false
		}
	}
	cells := append(PadRow(row, shape.Width)[:shape.Width:shape.Width], []any(nil)...)
	blank = true
	for i, c := range cells {
		blank = blank && isBlank(c)
		if i == shape.Anchor {
			if s, isText := c.(string); isText {
				anchor = norm.NFC.String(s)
			}
		}
		if i < len(shape.Blank) && shape.Blank[i] {
			cells[i] = nil
		}
	}
	return VisibleHash(cells), blank, anchor, true
}

func checkDigest(t testing.TB, raw []byte, shape RowShape) {
	t.Helper()
	want, blank, anchor, ok := fullDigest(t, raw, shape)
	var d RowDigester
	got, dok := d.Digest(raw, shape)
	if !ok {
		return // the whole read fails in a full decode: nothing to agree with
	}
	if !dok {
		t.Fatalf("%s: digest declined a row of scalars", raw)
	}
	if string(got.Hash[:]) != want || got.Blank != blank || string(got.Anchor) != anchor {
		t.Fatalf("%s: digest %s blank=%v anchor=%q, full decode %s blank=%v anchor=%q", raw, got.Hash, got.Blank, got.Anchor,
			want, blank, anchor)
	}
}

var digestShapes = []RowShape{{Width: 4, Anchor: 3}, {Width: 2, Anchor: 0}, {Width: 3, Anchor: -1, Blank: []bool{false, true}},
	{Width: 0, Anchor: -1}}

// TestRowDigestEqualsFullDecode: for every value kind a values read
// returns, the streamed row digest is the full decode's VisibleHash,
// blankness and NFC anchor.
func TestRowDigestEqualsFullDecode(t *testing.T) {
	rows := []string{`[]`, `["a","b","","k1"]`, `["a",1,true,"k"]`, `[1.5e3,-0,false,null]`, `["", "", "", ""]`, `[null]`,
		`["x","y","",""]`, `["caf\u00e9","cafe\u0301","\"q\"\\","k\n"]`, `["Ünïcödé","日本","",123456789012345678901234]`,
		`[ "a" , 2 , "" , "k" , "stray", 9 ]`, `["\ud83d\ude00","\ud800","<&>","\u003c"]`, `[0.1, 1e-7, 1E21, -12.50]`,
		`["a\u0000b"]`, "[\"\xff\xfe\",\"k\"]", `[true,"",null,"anchor"]`, `[[1],"k"]`, `[{"a":1}]`, `[1e999]`}
	for i := range 200 {
		rows = append(rows, fmt.Sprintf(`["%d","name %d",%q,"%d"]`, i, i, []string{"", "note", "é"}[i%3], i))
	}
	for _, r := range rows {
		for _, sh := range digestShapes {
			checkDigest(t, []byte(r), sh)
		}
	}
}

// FuzzRowDigest: on any valid JSON row the digest equals the full decode.
func FuzzRowDigest(f *testing.F) {
	for _, s := range []string{`["a",1,true,null,""]`, `["caf\u00e9","\ud83d\ude00"]`, `[1e999]`, `[[1]]`} {
		f.Add(s, 3, 1)
	}
	f.Fuzz(func(t *testing.T, raw string, width, anchor int) {
		if !json.Valid([]byte(raw)) || width < 0 || width > 8 {
			return
		}
		checkDigest(t, []byte(raw), RowShape{Width: width, Anchor: anchor % 9, Blank: []bool{false, width%2 == 1}})
	})
}

// cassetteRows are the values rows of every response recorded from
// Google in the emulator's cassettes, as the wire sent them (white space
// included).
func cassetteRows(t *testing.T) [][]byte {
	files, err := filepath.Glob("../emulator/testdata/cassettes/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cassettes: %v", err)
	}
	var rows [][]byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ Interactions []struct{ Response string } }
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, in := range c.Interactions {
			rows = append(rows, valuesRows(json.RawMessage(in.Response))...)
		}
	}
	return rows
}

// valuesRows finds the rows of every "values" array of arrays in msg.
func valuesRows(msg json.RawMessage) [][]byte {
	var obj map[string]json.RawMessage
	var arr []json.RawMessage
	var out [][]byte
	switch {
	case json.Unmarshal(msg, &obj) == nil:
		for k, v := range obj {
			var rows []json.RawMessage
			if k == "values" && json.Unmarshal(v, &rows) == nil {
				for _, r := range rows {
					out = append(out, r)
				}
				continue
			}
			out = append(out, valuesRows(v)...)
		}
	case json.Unmarshal(msg, &arr) == nil:
		for _, v := range arr {
			out = append(out, valuesRows(v)...)
		}
	}
	return out
}

// TestRowDigestOfCassetteRows: the rows Google returned in the recorded
// cassettes digest as their full decode hashes.
func TestRowDigestOfCassetteRows(t *testing.T) {
	rows := cassetteRows(t)
	if len(rows) < 20 {
		t.Fatalf("only %d values rows in the cassettes", len(rows))
	}
	for _, r := range rows {
		for _, sh := range digestShapes {
			checkDigest(t, r, sh)
		}
	}
}
