package gsheets

import (
	"encoding/json"
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
