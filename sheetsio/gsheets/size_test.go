package gsheets

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// TestJSONLenIsAppendStringsLength: jsonLen counts exactly what
// appendString writes, over text of every awkward kind.
func TestJSONLenIsAppendStringsLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	for range 5000 {
		s := randomText(rng)
		if got, want := jsonLen(s), len(appendString(nil, s)); got != want {
			t.Fatalf("jsonLen(%q) = %d, appendString writes %d", s, got, want)
		}
	}
}

// TestEncodeRowIsSheetsV4JSON: a row encoded when planned is the JSON
// sheets/v4 gives its RowData without the trailing empty cells, over
// every value kind (text with escapes and invalid UTF-8, numbers of every
// magnitude, booleans, empty cells, times with their format).
func TestEncodeRowIsSheetsV4JSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	for i := range 3000 {
		spec := randomSpec(rng)
		row := randomRow(rng, spec)
		got, err := encodeRow(spec, row)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		n := len(row)
		for n > 0 && row[n-1] == nil {
			n--
		}
		sameAsSheetsV4(t, fmt.Sprint("row ", i), got, rowData(spec, row[:n]))
	}
}

// TestRequestSizeIsExact: a unit's requests are measured to the byte
// (with their separator).
func TestRequestSizeIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 3))
	for i := range 2000 {
		r := randomRequest(t, rng)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := requestSize(r); got != len(b)+1 {
			t.Fatalf("request %d: size %d, JSON %d bytes + 1", i, got, len(b))
		}
	}
}

// TestChunksFillTheBodyLimit: random dispatches of appends with receipts,
// cell updates with their verified ranges and deletes are chunked into
// bodies that never pass MaxBatchBytes; every chunk but the last carries
// units up to within one unit of bodyLimit, and its body (what the units'
// bounds overcount left out) is at least 95 % of MaxBatchBytes at the
// default limit.
func TestChunksFillTheBodyLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 4))
	rm := receiptMeta{sheetID: 77, fence: &sheetsio.Fence{StoreID: "store", Epoch: 3, Token: "tok"}, now: time.Unix(1.7e9, 0)}
	for _, maxBytes := range []int{16 << 10, 256 << 10, DefaultMaxBatchBytes} {
		units, biggest := randomUnits(t, rng, 3*maxBytes)
		chunks := chunk(units, bodyLimit(maxBytes), 1<<20) // bytes bind here, not the request count
		for i, c := range chunks {
			size, measured := bodyOf(t, c, rm), 0
			for _, u := range c {
				measured += u.bytes
			}
			if size > maxBytes {
				t.Fatalf("limit %d: chunk %d of %d units is %d bytes", maxBytes, i, len(c), size)
			}
			if i == len(chunks)-1 {
				continue
			}
			if measured < bodyLimit(maxBytes)-biggest {
				t.Fatalf("limit %d: chunk %d carries %d bytes of units, under %d less a unit (%d)", maxBytes, i, measured, bodyLimit(maxBytes), biggest)
			}
			if maxBytes == DefaultMaxBatchBytes && size < maxBytes*95/100 {
				t.Fatalf("chunk %d: a body of %d bytes, under 95 %% of %d", i, size, maxBytes)
			}
		}
	}
}

// randomUnits plans about total bytes of random units (appends to two
// tabs with receipts, single-cell updates with their checks, deletes) and
// returns them with the largest unit's size.
func randomUnits(t *testing.T, rng *rand.Rand, total int) ([]*unit, int) {
	var units []*unit
	size, biggest := 0, 0
	for i := 0; size < total; i++ {
		spec := randomSpec(rng)
		sheet := int64(1 + rng.IntN(2))
		u := &unit{op: i, order: orderAppend, sheetID: sheet, receipt: &sheetsio.ReceiptEntry{EffectID: fmt.Sprintf("fx%016x", rng.Uint64()),
			Op: "append", Tab: fmt.Sprintf("Part_%d", sheet), Binding: fmt.Sprintf("%016x", rng.Uint64()), RowHash: fmt.Sprintf("%016x", rng.Uint64()),
			PayloadHash: fmt.Sprintf("xxh64:%016x", rng.Uint64())}}
		if rng.IntN(4) == 0 {
			u.receipt.EffectID = "eff-" + u.receipt.EffectID // an entry line
		}
		switch rng.IntN(5) {
		case 0:
			u.order, u.row = orderUpdate, rng.IntN(1000)
			u.reqs = []*sheets.Request{updateCellsRequest(sheet, u.row, rng.IntN(4), rowData(spec, randomRow(rng, spec)[:1]))}
			u.check = &rowCheck{spec: spec, anchor: "a", title: []string{"Part_System", "Bob's tab", "Zürich <&>"}[rng.IntN(3)], cols: []int{0}}
		case 1:
			u.order, u.row = orderDelete, rng.IntN(1000)
			u.reqs = []*sheets.Request{deleteRowRequest(sheet, u.row)}
		default:
			js, err := encodeRow(spec, randomRow(rng, spec))
			if err != nil {
				t.Fatal(err)
			}
			u.appends = []appendRow{{sheetID: sheet, js: js}}
		}
		u.measure()
		units, size, biggest = append(units, u), size+u.bytes, max(biggest, u.bytes)
	}
	sortUnits(units)
	return units, biggest
}

// bodyOf is the length of the body sendBatch posts for chunk c, its
// response ranges included.
func bodyOf(t *testing.T, c []*unit, rm receiptMeta) int {
	t.Helper()
	reqs, raw, err := assemble(c, rm)
	if err != nil {
		t.Fatal(err)
	}
	body := &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}
	if ranges, verify := responseRanges(c); verify {
		body.IncludeSpreadsheetInResponse, body.ResponseIncludeGridData, body.ResponseRanges = true, true, ranges
	}
	b, err := batchBodyRaw(body, raw, bodySize(c))
	if err != nil {
		t.Fatal(err)
	}
	return len(b) + 1 // the newline postBatchUpdate ends it with
}
