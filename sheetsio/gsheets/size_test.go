package gsheets

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The chunk size estimate must never undercount the JSON the client sends.
func TestSizeEstimateBoundsTheJSON(t *testing.T) {
	cols := []cell.Column{{Name: "s", Kind: cell.String}, {Name: "n", Kind: cell.Float}, {Name: "t", Kind: cell.Time},
		{Name: "b", Kind: cell.Bool}, {Name: layout.AnchorHeader, Kind: cell.String}}
	spec := layout.TabSpec{Columns: cols, Anchor: 4}
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "line\nbreak\ttab\u2028\u2029\\", "日本語テキスト", string(make([]byte, 300))} {
		enc, err := cell.EncodeRow(cols, []any{s, 1.5e300, time.Unix(1e9, 0), true, "anchor"})
		if err != nil {
			t.Fatal(err)
		}
		rd := rowData(spec, enc)
		for _, r := range []any{rd, updateCellsRequest(7, 12, 0, rd), appendCellsRequest(7, nil), deleteRowRequest(7, 9)} {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			est := 0
			switch x := r.(type) {
			case *sheets.RowData:
				est = rowSize(x)
			case *sheets.Request:
				est = requestSize(x)
			}
			if est < len(b) {
				t.Fatalf("estimate %d < %d bytes of %s", est, len(b), b)
			}
		}
	}
}

// cityRow is a row of the bench's cities (key, name, lat, lng, country,
// admin1, admin2) with its anchor: the row 4a writes.
func cityRow(i int) (layout.TabSpec, []any) {
	cols := []cell.Column{{Name: "key", Kind: cell.String}, {Name: "name", Kind: cell.String}, {Name: "lat", Kind: cell.String},
		{Name: "lng", Kind: cell.String}, {Name: "country", Kind: cell.String}, {Name: "admin1", Kind: cell.String},
		{Name: "admin2", Kind: cell.String}, {Name: layout.AnchorHeader, Kind: cell.String}}
	k := strconv.Itoa(i + 1)
	return layout.TabSpec{Columns: cols, Anchor: 7}, []any{k, "Sant Julià de Lòria", "42.46372", "1.49129", "AD", "06", nil, k}
}

// The compact append's bytes per row, against the appendCells encoding
// and raw values (reported; the compact block must be smaller than the
// appendCells request and its estimate must bound it).
func TestAppendBytesPerRow(t *testing.T) {
	const n = 4000
	var rows []*sheets.RowData
	var raw [][]any
	var est blockSize
	for i := range n {
		spec, enc := cityRow(i)
		rd := rowData(spec, enc)
		rows = append(rows, rd)
		est.add(rd)
		raw = append(raw, enc)
	}
	size := func(v any) int {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	old := size(appendCellsRequest(7, rows))
	compact := size(pasteBlock{sheetID: 7, at: 1, rows: rows}.requests())
	rawValues := size(&sheets.ValueRange{Range: "Cities!A2:H", Values: raw})
	t.Logf("bytes per row: appendCells %.1f, compact %.1f, raw values %.1f", float64(old)/n, float64(compact)/n, float64(rawValues)/n)
	if bound, _ := est.size(); bound < compact {
		t.Fatalf("estimate %d < %d bytes", bound, compact)
	}
	if compact >= old {
		t.Fatalf("compact %d bytes >= appendCells %d", compact, old)
	}
	pastable := []any{"Vila", "El Tarter", "AD", nil, "les Escaldes", "x", "AD", "ok"}
	text := make([]*sheets.RowData, n)
	for i := range text {
		spec, _ := cityRow(i)
		text[i] = rowData(spec, pastable)
	}
	t.Logf("bytes per row, all text pastable: appendCells %.1f, compact %.1f",
		float64(size(appendCellsRequest(7, text)))/n, float64(size(pasteBlock{sheetID: 7, at: 1, rows: text}.requests()))/n)
}
