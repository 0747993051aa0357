package gsheets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// sameAsSheetsV4 fails unless ours is json.Marshal(v)'s bytes and both
// decode to the same value.
func sameAsSheetsV4(t *testing.T, what string, ours []byte, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: json.Marshal: %v", what, err)
	}
	if !bytes.Equal(ours, want) {
		t.Fatalf("%s:\nours     %s\nsheets/v4 %s", what, ours, want)
	}
	var a, b any
	if err := json.Unmarshal(ours, &a); err != nil {
		t.Fatalf("%s: ours does not decode: %v", what, err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s: decoded\n%v\nwant\n%v", what, a, b)
	}
}

// TestBatchBodyIsSheetsV4JSON: random batches of what a dispatch sends —
// appended rows of every value kind (text with unicode, escapes, invalid
// UTF-8 and formulas as text, numbers of every magnitude, booleans, empty
// cells, time formats), cell updates, row deletes, notes, note sweeps,
// receipt and authority rows, response ranges — encode to the bytes
// sheets/v4's json.Marshal gives the same request, which decode alike.
func TestBatchBodyIsSheetsV4JSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 4))
	for i := range 1000 {
		req := randomBatch(t, rng)
		got, err := batchBody(req, 0)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		sameAsSheetsV4(t, "batch", got, req)
	}
}

func randomBatch(t *testing.T, rng *rand.Rand) *sheets.BatchUpdateSpreadsheetRequest {
	req := &sheets.BatchUpdateSpreadsheetRequest{}
	for range rng.IntN(6) {
		req.Requests = append(req.Requests, randomRequest(t, rng))
	}
	if rng.IntN(3) == 0 {
		req.IncludeSpreadsheetInResponse, req.ResponseIncludeGridData = true, true
		req.ResponseRanges = []string{"'" + randomText(rng) + "'!A2:G2", "City!A1:G1"}
	}
	return req
}

func randomRequest(t *testing.T, rng *rand.Rand) *sheets.Request {
	spec := randomSpec(rng)
	sheetID := int64(rng.IntN(3)) * int64(rng.Uint32())
	switch rng.IntN(9) {
	case 0, 1, 2:
		var rows []*sheets.RowData
		for range 1 + rng.IntN(4) {
			rows = append(rows, rowData(spec, randomRow(rng, spec)))
		}
		return appendCellsRequest(sheetID, rows)
	case 3:
		return updateCellsRequest(sheetID, rng.IntN(3), rng.IntN(3), rowData(spec, randomRow(rng, spec)))
	case 4:
		return deleteRowRequest(sheetID, rng.IntN(3))
	case 5:
		rd := &sheets.RowData{Values: []*sheets.CellData{{Note: randomText(rng), ForceSendFields: []string{"Note"}}}}
		req := updateCellsRequest(sheetID, 1+rng.IntN(9), rng.IntN(4), rd)
		req.UpdateCells.Fields = noteFields
		return req
	case 6:
		return sweepRequest(sheetID, rng.IntN(2), 2+rng.IntN(3))
	case 7:
		req, err := authorityRequest(sheetID, sheetsio.Fence{StoreID: "st-" + strconv.Itoa(rng.IntN(99)), Epoch: rng.Int64(), Token: strconv.Itoa(rng.Int())},
			time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)))
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	rm := receiptMeta{sheetID: sheetID, now: time.Unix(rng.Int64N(4e9), 0)}
	if rng.IntN(2) == 0 {
		rm.fence = &sheetsio.Fence{StoreID: "s", Epoch: rng.Int64N(9), Token: strconv.Itoa(rng.Int())}
	}
	rows, err := rm.rows([]sheetsio.ReceiptEntry{randomReceipt(rng), randomReceipt(rng)})
	if err != nil {
		t.Fatal(err)
	}
	return appendCellsRequest(sheetID, rows)
}

// randomReceipt is a receipt entry of another shape than the engine's (an
// entry line) or, one in two, of the engine's (packed).
func randomReceipt(rng *rand.Rand) sheetsio.ReceiptEntry {
	if rng.IntN(2) == 0 {
		return sheetsio.ReceiptEntry{EffectID: fmt.Sprintf("fx%016x", rng.Uint64()), Op: "update", Tab: "Zürich <&>",
			Binding: fmt.Sprintf("%016x", rng.Uint64()), RowHash: fmt.Sprintf("%016x", rng.Uint64()), PayloadHash: fmt.Sprintf("xxh64:%016x", rng.Uint64())}
	}
	return sheetsio.ReceiptEntry{EffectID: "eff-" + strconv.Itoa(rng.Int()), Op: "append", Tab: "Zürich <&>", Binding: "b" + strconv.Itoa(rng.IntN(9)),
		RowHash: strconv.FormatUint(rng.Uint64(), 16)}
}

var specKinds = []cell.Kind{cell.String, cell.Float, cell.Bool, cell.Time, cell.Int}

func randomSpec(rng *rand.Rand) layout.TabSpec {
	spec := layout.TabSpec{}
	for range 1 + rng.IntN(8) {
		spec.Columns = append(spec.Columns, cell.Column{Kind: specKinds[rng.IntN(len(specKinds))]})
	}
	return spec
}

// randomRow is an encoded row (cell.Encode's output kinds) of spec.
func randomRow(rng *rand.Rand, spec layout.TabSpec) []any {
	row := make([]any, len(spec.Columns))
	for i := range row {
		switch rng.IntN(5) {
		case 0:
			row[i] = nil
		case 1:
			row[i] = randomText(rng)
		case 2:
			row[i] = randomNumber(rng)
		case 3:
			row[i] = rng.IntN(2) == 0
		default:
			row[i] = []string{"=1+1", "=SUM(A1:A2)", "'quoted", "", "0012", "+1 555", "TRUE"}[rng.IntN(7)]
		}
	}
	return row
}

// textPieces are the awkward parts of text: escapes, HTML characters,
// control bytes, U+2028/2029, invalid UTF-8, multibyte runes, a NUL.
var textPieces = []string{"a", "Zürich", "東京", "😀", "\"", "\\", "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01",
	"\x1f", "\x7f", "\u2028", "\u2029", "\xff", "\xe6\x97", "\u00a0", "=A1", "/", "'", " "}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(8) {
		b.WriteString(textPieces[rng.IntN(len(textPieces))])
	}
	return b.String()
}

var numberEdges = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 9.999e20, -1e21,
	math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 45000.25, 123456789012345678, 1e-9, 1.5e-10, -2.5e300}

func randomNumber(rng *rand.Rand) float64 {
	switch rng.IntN(4) {
	case 0:
		return numberEdges[rng.IntN(len(numberEdges))]
	case 1:
		return float64(rng.Int64N(1e12) - 5e11)
	case 2:
		return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(0x7ff))<<52) // any finite float
	}
	return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(40)-20))
}

// TestBatchBodyCoversEveryField: for each type batchBody writes itself,
// every field of sheets/v4's struct set alone (ForceSendFields and
// NullFields included) still gives sheets/v4's bytes, so a field a newer
// sheets/v4 adds fails here instead of being dropped from the wire.
func TestBatchBodyCoversEveryField(t *testing.T) {
	eachField(t, (*bodyEncoder).batch)
	eachField(t, (*bodyEncoder).request)
	eachField(t, (*bodyEncoder).appendCells)
	eachField(t, (*bodyEncoder).updateCells)
	eachField(t, (*bodyEncoder).gridRange)
	eachField(t, (*bodyEncoder).gridCoordinate)
	eachField(t, (*bodyEncoder).deleteDimension)
	eachField(t, (*bodyEncoder).dimensionRange)
	eachField(t, (*bodyEncoder).row)
	eachField(t, (*bodyEncoder).cell)
	eachField(t, (*bodyEncoder).cellFormat)
	eachField(t, (*bodyEncoder).numberFormat)
	eachField(t, (*bodyEncoder).value)
}

func eachField[T any](t *testing.T, enc func(*bodyEncoder, *T)) {
	t.Helper()
	typ := reflect.TypeFor[T]()
	for i := range typ.NumField() {
		for _, zero := range []bool{false, true} {
			var v T
			if !sample(reflect.ValueOf(&v).Elem().Field(i), typ, zero) {
				continue
			}
			e := &bodyEncoder{}
			enc(e, &v)
			if e.err != nil {
				t.Fatalf("%s.%s: %v", typ.Name(), typ.Field(i).Name, e.err)
			}
			sameAsSheetsV4(t, typ.Name()+"."+typ.Field(i).Name, e.b, &v)
		}
	}
}

// sample sets f to a value that is not empty (zero: the zero value a
// pointer or slice can carry) and reports whether it did.
func sample(f reflect.Value, owner reflect.Type, zero bool) bool {
	switch f.Kind() {
	case reflect.String:
		f.SetString(map[bool]string{false: "x<&\u2028"}[zero])
	case reflect.Int64, reflect.Int:
		f.SetInt(map[bool]int64{false: 7}[zero])
	case reflect.Bool:
		f.SetBool(!zero)
	case reflect.Float64:
		f.SetFloat(map[bool]float64{false: 1.5}[zero])
	case reflect.Pointer:
		f.Set(reflect.New(f.Type().Elem())) // points to an empty value
		if !zero && f.Elem().Kind() != reflect.Struct {
			sample(f.Elem(), owner, false)
		}
	case reflect.Slice:
		el := reflect.New(f.Type().Elem()).Elem()
		if el.Kind() == reflect.String {
			el.SetString(owner.Field(0).Name) // ForceSendFields / NullFields name a real field
		} else if !zero && el.Kind() == reflect.Pointer {
			el.Set(reflect.New(el.Type().Elem()))
		}
		f.Set(reflect.Append(reflect.MakeSlice(f.Type(), 0, 1), el))
	default:
		return false
	}
	return true
}

// TestBatchBodyRefusesWhatSheetsV4Refuses: NaN and infinities are no JSON
// number; both encoders refuse them.
func TestBatchBodyRefusesWhatSheetsV4Refuses(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		req := &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
			appendCellsRequest(1, []*sheets.RowData{rowData(layout.TabSpec{Columns: []cell.Column{{Kind: cell.Float}}}, []any{f})})}}
		if _, err := json.Marshal(req); err == nil {
			t.Fatalf("sheets/v4 encodes %v", f)
		}
		if _, err := batchBody(req, 0); err == nil {
			t.Fatalf("batchBody encodes %v", f)
		}
	}
}

// TestBatchBodyRawIsSheetsV4JSON: rows encoded when planned (encodeRow)
// and written by batchBodyRaw in front of their appendCells request's own
// rows give the bytes sheets/v4's json.Marshal gives for the request with
// those rows (without their trailing empty cells) in front as RowData.
func TestBatchBodyRawIsSheetsV4JSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 5))
	for i := range 1000 {
		req := randomBatch(t, rng)
		raw, front := rawRows{}, map[*sheets.AppendCellsRequest][]*sheets.RowData{}
		for _, r := range req.Requests {
			if a := r.AppendCells; a != nil && !forced(a.ForceSendFields, a.NullFields) && rng.IntN(4) > 0 {
				raw[a], front[a] = randomRawRows(t, rng)
			}
		}
		got, err := batchBodyRaw(req, raw, 0)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		for a, rows := range front {
			a.Rows = append(rows, a.Rows...)
		}
		sameAsSheetsV4(t, fmt.Sprint("batch ", i), got, req)
	}
}

// randomRawRows returns 1 to 3 random rows of one tab encoded ahead and
// the RowData sheets/v4 would send for them.
func randomRawRows(t *testing.T, rng *rand.Rand) ([][]byte, []*sheets.RowData) {
	spec := randomSpec(rng)
	var raw [][]byte
	var rds []*sheets.RowData
	for range 1 + rng.IntN(3) {
		row := randomRow(rng, spec)
		js, err := encodeRow(spec, row)
		if err != nil {
			t.Fatal(err)
		}
		n := len(row)
		for n > 0 && row[n-1] == nil {
			n--
		}
		raw, rds = append(raw, js), append(rds, rowData(spec, row[:n]))
	}
	return raw, rds
}
