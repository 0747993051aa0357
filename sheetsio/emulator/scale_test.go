package emulator

import (
	"fmt"
	"math/rand"
	"testing"

	sheets "google.golang.org/api/sheets/v4"
)

func backfillRows(n, from int) [][]any {
	out := make([][]any, n)
	for i := range out {
		id := from + i
		out[i] = []any{fmt.Sprint(id), "name", "e@x", 1.5, true, "2020-01-01", "note", fmt.Sprintf("%05d", id)}
	}
	return out
}

func TestBackfillTwentyThousandRowsStaysFast(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	for from := 0; from < 20000; from += 2500 {
		_, err := svc.Spreadsheets.Values.Append(id, "Sheet1!A1", &sheets.ValueRange{Values: backfillRows(2500, from)}).
			ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Do()
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A19999:H20000").Do()
	if err != nil || len(got.Values) != 2 || got.Values[1][7] != "19999" {
		t.Fatalf("tail rows: %v %v", got, err)
	}
	if c := emu.Counters(id); c.Writes != 8 || c.Reads != 1 {
		t.Fatalf("counters: %+v", c)
	}
}

// TestRandomOperationsNeverFailServerSide drives a seeded mix of valid and
// invalid requests and checks the emulator never answers 5xx or panics.
func TestRandomOperationsNeverFailServerSide(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	rng := rand.New(rand.NewSource(7))
	ranges := []string{"A1", "Sheet1!B2:D9", "A:A", "3:4", "Nope!A1", "Sheet1!Z999:AA1000", "C5:C", "'Sheet1'"}
	for i := 0; i < 300; i++ {
		r := ranges[rng.Intn(len(ranges))]
		var err error
		switch rng.Intn(6) {
		case 0:
			_, err = svc.Spreadsheets.Values.Update(id, r, &sheets.ValueRange{Values: backfillRows(rng.Intn(3)+1, i)}).ValueInputOption("USER_ENTERED").Do()
		case 1:
			_, err = svc.Spreadsheets.Values.Append(id, r, &sheets.ValueRange{Values: backfillRows(1, i)}).ValueInputOption("RAW").Do()
		case 2:
			_, err = svc.Spreadsheets.Values.Get(id, r).ValueRenderOption("FORMULA").Do()
		case 3:
			_, err = svc.Spreadsheets.Values.Clear(id, r, &sheets.ClearValuesRequest{}).Do()
		case 4:
			dim := []string{"ROWS", "COLUMNS"}[rng.Intn(2)]
			start := int64(rng.Intn(30))
			_, err = svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
				{InsertDimension: &sheets.InsertDimensionRequest{Range: &sheets.DimensionRange{Dimension: dim, StartIndex: start, EndIndex: start + 1}}},
				{DeleteDimension: &sheets.DeleteDimensionRequest{Range: &sheets.DimensionRange{Dimension: dim, StartIndex: start + 1, EndIndex: start + 3}}},
			}}).Do()
		case 5:
			_, err = svc.Spreadsheets.Get(id).Ranges(r).IncludeGridData(true).Do()
		}
		if err != nil && apiCode(t, err) >= 500 {
			t.Fatalf("op %d on %q: %v", i, r, err)
		}
	}
}

func BenchmarkValuesUpdate(b *testing.B) {
	emu := New(Options{})
	_ = emu.CreateSpreadsheet("bench", "")
	svc := newClient(b, emu)
	vr := &sheets.ValueRange{Values: backfillRows(100, 0)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := svc.Spreadsheets.Values.Update("bench", "A1", vr).ValueInputOption("RAW").Do(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(emu.Counters("bench").Writes)/float64(b.N), "writes/op")
}
