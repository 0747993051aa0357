package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/echo"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// stocksTab is a tab people kept of stock levels: a number typed as the
// key (adopted with --numbers-as-text id), a duplicate, text in the qty
// column, a header that needs --map.
var stocksTab = [][]string{
	{"ID", "Quantity on hand", "Remarks"},
	{"'A1", "5"},
	{"'B2", "lots"},
	{"'C3", "7", "x"},
	{"'C3", "8"},
	{"44", "1"},
}

// writeStocksTab adds the Stocks tab to sheet as a person would.
func writeStocksTab(t *testing.T, sheet *hikouteitest.Sheet) {
	t.Helper()
	p := sheet.Person()
	if _, err := p.AddTab("Stocks", 100, 10); err != nil {
		t.Fatal(err)
	}
	for r, row := range stocksTab {
		for c, text := range row {
			if text != "" {
				if err := p.Type("Stocks", a1.CellLabel(r, c), text); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// stockStore is a closed store declaring Stock, synced once to a sheet
// that also holds the Stocks tab.
func stockStore(t *testing.T) (string, *hikouteitest.Sheet) {
	t.Helper()
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	writeStocksTab(t, sheet)
	s, err := hikoutei.Open(context.Background(), dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true},
		hikoutei.Entity[stock]("Stock"))
	if err != nil {
		t.Fatal(err)
	}
	hikouteitest.New(t, s) // provisions the store's own tabs
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, sheet
}

func adoptArgs(dir string, sheet *hikouteitest.Sheet, extra ...string) []string {
	return append([]string{"adopt", "--dir", dir, "--sheets-endpoint", sheet.URL, "--spreadsheet", hikouteitest.SpreadsheetID,
		"--tab", "Stocks", "--entity", "Stock", "--map", "Quantity on hand=qty"}, extra...)
}

// TestAdoptCLIDryRunJSONReportsEveryRowAndWritesNothing: `adopt --dry-run
// --json` prints one object with the column map and every row's outcome,
// appends nothing to the log, takes no lease and writes no cell.
func TestAdoptCLIDryRunJSONReportsEveryRowAndWritesNothing(t *testing.T) {
	dir, sheet := stockStore(t)
	head := logHead(t, dir)
	sheet.Emulator.ResetCounters()
	code, out, errOut := runSplit(adoptArgs(dir, sheet, "--numbers-as-text", "id", "--dry-run", "--json")...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var got adoptJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	var rows []string
	for _, r := range got.Rows {
		rows = append(rows, strings.TrimSpace(fmt.Sprintf("%d %s %s %s %s", r.Row, r.Key, r.Outcome, r.Reason, r.Field)))
	}
	want := []string{"2 A1 create", "3 B2 skip cell_type_mismatch qty", "4 C3 skip duplicate_key", "5 C3 skip duplicate_key", "6 44 create"}
	if !reflect.DeepEqual(rows, want) || !got.DryRun || got.Created != 2 || got.Skipped != 3 || got.KeptAs != "Stocks (before hikoutei)" {
		t.Fatalf("report %+v\nrows %v, want %v", got, rows, want)
	}
	cols := []adoptColJSON{{"A", "ID", "id", "header"}, {"B", "Quantity on hand", "qty", "map"}, {"C", "Remarks", "", "unknown"}}
	if !reflect.DeepEqual(got.Columns, cols) || got.SheetsReads != 2 || got.SheetsWrites != 0 {
		t.Fatalf("columns %+v, requests %d/%d", got.Columns, got.SheetsReads, got.SheetsWrites)
	}
	if c := sheet.Emulator.Counters(hikouteitest.SpreadsheetID); c.Writes != 0 {
		t.Fatalf("the dry run wrote %d times", c.Writes)
	}
	if h := logHead(t, dir); h != head {
		t.Fatalf("the dry run appended: head %d → %d", head, h)
	}
}

// TestAdoptCLIAdoptsKeepsTheTabAndRefusesASecondRun: the real run imports
// the rows, quarantines the others (quarantine list shows them on the
// kept tab), fills the store's tabs and keeps the original; a second run
// and an undeclared entity are typed errors (exit 1).
func TestAdoptCLIAdoptsKeepsTheTabAndRefusesASecondRun(t *testing.T) {
	t.Setenv(config.EnvRateLimitInterval, "1")
	dir, sheet := stockStore(t)
	code, out, errOut := runSplit(adoptArgs(dir, sheet, "--numbers-as-text", "id", "--unit", "1", "--wait", "1m", "--json")...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var got adoptJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Created != 2 || got.Units != 2 || got.Quarantined != 3 || !got.Renamed || got.BackfillPending == nil || *got.BackfillPending != 0 {
		t.Fatalf("report %s", out)
	}
	code, out, errOut = runSplit("quarantine", "list", "--dir", dir, "--tab", "Stocks (before hikoutei)", "--json")
	if code != exitOK || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"reason":"duplicate_key"`) {
		t.Fatalf("quarantine list: exit %d\n%s%s", code, out, errOut)
	}
	shown, err := sheet.Person().Displayed("Stock_System")
	if err != nil || len(shown) != 3 {
		t.Fatalf("Stock_System shows %v (%v), want the header and 2 rows", shown, err)
	}
	if kept, err := sheet.Person().Displayed("Stocks (before hikoutei)"); err != nil || len(kept) != len(stocksTab) {
		t.Fatalf("the kept tab: %v %v", kept, err)
	}
	code, _, errOut = runSplit(adoptArgs(dir, sheet, "--numbers-as-text", "id")...)
	if code != exitFailure || !strings.Contains(errOut, "adopt_tab_already_adopted") {
		t.Fatalf("second run: exit %d %s", code, errOut)
	}
	for _, dry := range []string{"--dry-run", "--wait=0"} {
		args := adoptArgs(dir, sheet, dry)
		args[len(args)-4] = "Nope"
		sheet.Emulator.ResetCounters()
		code, _, errOut = runSplit(args...)
		if code != exitFailure || !strings.Contains(errOut, "adopt_entity_not_declared") || !strings.Contains(errOut, "Stock") {
			t.Fatalf("undeclared entity (%s): exit %d %s", dry, code, errOut)
		}
		if c := sheet.Emulator.Counters(hikouteitest.SpreadsheetID); c.Writes != 0 {
			t.Fatalf("a refused adoption (%s) wrote %d times to the spreadsheet", dry, c.Writes)
		}
	}
}

// TestAdoptCLIRefusesBadFlagsBeforeTouchingTheStore: a malformed --map,
// a missing --tab or --entity, a --unit out of range exit 2 with the
// usage.
func TestAdoptCLIRefusesBadFlagsBeforeTouchingTheStore(t *testing.T) {
	c := findCommand(t, []string{"adopt"})
	base := []string{"adopt", "--dir", t.TempDir(), "--sheets-endpoint", "http://127.0.0.1:1", "--spreadsheet", "1AdoptTestSheetId"}
	for _, extra := range [][]string{
		{"--entity", "E"},
		{"--tab", "T"},
		{"--tab", "T", "--entity", "E", "--map", "nofield"},
		{"--tab", "T", "--entity", "E", "--map", "=x"},
		{"--tab", "T", "--entity", "E", "--unit", "0"},
		{"--tab", "T", "--entity", "E", "--wait", "-1s"},
	} {
		wantUsage(t, c, append(append([]string{}, base...), extra...))
	}
}

// TestAdoptCLIEchoesHostileNamesBounded: a header a person typed, a --map
// value and an entity name are echoed at most echo.MaxRunes characters
// long (then "…") with their control characters escaped: a hostile sheet
// or a pasted flag can neither flood the output nor drive the terminal.
func TestAdoptCLIEchoesHostileNamesBounded(t *testing.T) {
	dir, sheet := stockStore(t)
	hostile := "\x1b]0;pwned\x07\u202e" + strings.Repeat("W", 5000)
	if err := sheet.Person().Type("Stocks", "D1", hostile); err != nil {
		t.Fatal(err)
	}
	check := func(what, text string) {
		t.Helper()
		if strings.ContainsAny(text, "\x1b\x07\u202e") || strings.Contains(text, strings.Repeat("W", echo.MaxRunes+1)) {
			t.Fatalf("%s echoes the hostile name unbounded or raw:\n%q", what, text)
		}
	}
	code, out, errOut := runSplit(adoptArgs(dir, sheet, "--numbers-as-text", "id", "--dry-run")...)
	if code != exitOK || !strings.Contains(out, strings.Repeat("W", echo.MaxRunes-12)+echo.Ellipsis) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	check("the human report", out)
	code, out, errOut = runSplit(adoptArgs(dir, sheet, "--numbers-as-text", "id", "--dry-run", "--json")...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	check("the JSON report", out)
	code, out, errOut = runSplit(adoptArgs(dir, sheet, "--dry-run", "--map", "Remarks="+hostile)...)
	if code == exitOK || !strings.Contains(errOut, "adopt_map_invalid") {
		t.Fatalf("a --map to no field: exit %d\n%s%s", code, out, errOut)
	}
	check("the --map error", errOut)
	args := adoptArgs(dir, sheet, "--dry-run")
	args[slices.Index(args, "Stock")] = hostile
	code, out, errOut = runSplit(args...)
	if code == exitOK || !strings.Contains(errOut, "adopt_entity_not_declared") {
		t.Fatalf("an undeclared entity: exit %d\n%s%s", code, out, errOut)
	}
	check("the entity error", errOut)
}
