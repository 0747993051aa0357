// Command adoptsheet prepares the measurement of hikoutei adopt in
// docs/adopt.md ("Measured: the 7,184 airports"): it declares the Airport
// entity in a new store and writes the OpenFlights airports into a plain
// tab "Airports" of a Sheets emulator (hikoutei fake-sheets --auto-create)
// as people would keep it: no anchors, ids typed as numbers, a "Last
// checked" date kept as ISO text on two rows of three, and 19 rows that
// cannot be adopted (pasted copies, text in a number column, ambiguous
// dates, a formula, a merge, a key with a trailing space, no key).
//
//	go run -C bench ./cmd/adoptsheet -dir /tmp/airports -endpoint http://127.0.0.1:8787/ \
//	    -spreadsheet airports-adopt-sheet -data ../testdata/data/airports.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Airport is internal/above/demo's Airport, plus the date people keep when they
// last checked the row.
type Airport struct {
	ID          string     `hikoutei:"id,pk"`
	Name        string     `hikoutei:"name"`
	City        string     `hikoutei:"city"`
	Country     string     `hikoutei:"country"`
	IATA        string     `hikoutei:"iata"`
	ICAO        string     `hikoutei:"icao"`
	Latitude    float64    `hikoutei:"latitude"`
	Longitude   float64    `hikoutei:"longitude"`
	Altitude    int64      `hikoutei:"altitude,user"`
	Timezone    float64    `hikoutei:"timezone"`
	DST         string     `hikoutei:"dst"`
	TZ          string     `hikoutei:"tz"`
	Type        string     `hikoutei:"type"`
	Source      string     `hikoutei:"source"`
	Notes       string     `hikoutei:"notes,user"`
	LastChecked *time.Time `hikoutei:"last_checked"`
}

type raw struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	City      string  `json:"city"`
	Country   string  `json:"country"`
	IATA      string  `json:"iata"`
	ICAO      string  `json:"icao"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Altitude  int64   `json:"altitude"`
	Timezone  any     `json:"timezone"`
	DST       string  `json:"dst"`
	TZ        string  `json:"tz"`
	Type      string  `json:"type"`
	Source    string  `json:"source"`
}

func main() {
	dir := flag.String("dir", "", "store directory to create")
	endpoint := flag.String("endpoint", "", "emulator URL")
	id := flag.String("spreadsheet", "", "spreadsheet id")
	data := flag.String("data", "", "airports.json")
	flag.Parse()
	ctx := context.Background()
	s, err := hikoutei.Open(ctx, *dir, hikoutei.Options{NoAdmin: true}, hikoutei.Entity[Airport]("Airport"))
	check(err)
	check(s.Close())
	b, err := os.ReadFile(*data)
	check(err)
	var rows []raw
	check(json.Unmarshal(b, &rows))
	svc, err := sheets.NewService(ctx, option.WithEndpoint(*endpoint), option.WithoutAuthentication())
	check(err)
	grid := tab(rows)
	batch(ctx, svc, *id, &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: 0, Title: "Airports", ForceSendFields: []string{"SheetId"},
			GridProperties: &sheets.GridProperties{RowCount: int64(len(grid) + 10), ColumnCount: 17}},
		Fields: "title,gridProperties.rowCount,gridProperties.columnCount"}})
	_, err = svc.Spreadsheets.Values.Update(*id, "Airports!A1", &sheets.ValueRange{Values: grid}).ValueInputOption("RAW").Context(ctx).Do()
	check(err)
	// A formula a person typed (its result is never imported) and a merged cell.
	_, err = svc.Spreadsheets.Values.Update(*id, "Airports!I11", &sheets.ValueRange{Values: [][]any{{"=H11*3.28"}}}).ValueInputOption("USER_ENTERED").Context(ctx).Do()
	check(err)
	batch(ctx, svc, *id, &sheets.Request{MergeCells: &sheets.MergeCellsRequest{MergeType: "MERGE_ALL",
		Range: &sheets.GridRange{SheetId: 0, StartRowIndex: 20, EndRowIndex: 22, StartColumnIndex: 3, EndColumnIndex: 4, ForceSendFields: []string{"SheetId"}}}})
	fmt.Printf("wrote %d rows (header included) into tab Airports\n", len(grid))
}

var header = []any{"ID", "Name", "City", "Country", "IATA", "ICAO", "Latitude", "Longitude", "Altitude (ft)", "Timezone", "DST",
	"Tz database time zone", "Type", "Source", "Last checked", "Comments"}

// tab is the grid: the header, every airport (ids as numbers, dates as
// ISO text on most rows, typed-looking text elsewhere), then broken rows.
func tab(rows []raw) [][]any {
	grid := [][]any{header}
	for i, r := range rows {
		var checked any = ""
		if i%3 != 2 {
			checked = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%365).Format("2006-01-02")
		}
		grid = append(grid, []any{r.ID, r.Name, r.City, r.Country, r.IATA, r.ICAO, r.Latitude, r.Longitude, r.Altitude,
			number(r.Timezone), r.DST, r.TZ, r.Type, r.Source, checked, ""})
	}
	// People's mistakes: text where a number goes, an ambiguous date,
	// a key with a trailing space, a row without a key, pasted copies.
	grid[30][8] = "n/a"
	grid[31][8] = "about 300"
	grid[40][14] = "03/01/2024"
	grid[41][14] = "1 March 2024"
	grid[50][0] = strconv.FormatInt(rows[48].ID, 10) + " "
	grid = append(grid, []any{"", "Unnamed strip", "Nowhere", "Atlantis", "", "", 0, 0, 12, 0, "U", "", "airport", "hand", "", "ask Bob"})
	for _, i := range []int{100, 2000, 3000, 4000, 5000} {
		grid = append(grid, append([]any{}, grid[i]...))
	}
	grid[len(grid)-1][1] = grid[len(grid)-1][1].(string) + " (new name?)"
	return grid
}

func number(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

func batch(ctx context.Context, svc *sheets.Service, id string, reqs ...*sheets.Request) {
	_, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Context(ctx).Do()
	check(err)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
