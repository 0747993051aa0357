package hikoutei_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// Flight is the entity of the cell-rule tests: a user-owned time and a
// user-owned boolean.
type Flight struct {
	ID       string    `hikoutei:"id,pk"`
	Departs  time.Time `hikoutei:"departs,user"`
	Boarding bool      `hikoutei:"boarding,user"`
}

// farZone is a spreadsheet time zone far from UTC (UTC+14).
const farZone = "Pacific/Kiritimati"

// flightSheet opens a store syncing Flight to an emulated spreadsheet whose
// time zone is farZone, commits one flight and drains it to the sheet.
func flightSheet(t *testing.T, departs time.Time) (*hikoutei.Store, *hikouteitest.Sheet, *hikouteitest.Harness, *sheets.Service) {
	t.Helper()
	ctx := context.Background()
	sheet := hikouteitest.NewSheet(t)
	svc, err := sheets.NewService(ctx, option.WithEndpoint(sheet.URL), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Spreadsheets.BatchUpdate(hikouteitest.SpreadsheetID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{
		UpdateSpreadsheetProperties: &sheets.UpdateSpreadsheetPropertiesRequest{
			Properties: &sheets.SpreadsheetProperties{TimeZone: farZone}, Fields: "timeZone"}}}}).Context(ctx).Do()
	if err != nil {
		t.Fatalf("set the spreadsheet's time zone: %v", err)
	}
	s, err := hikoutei.Open(ctx, t.TempDir(), hikoutei.Options{Sync: sheet.SyncOptions(), NoAdmin: true}, hikoutei.Entity[Flight]("Flight"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := hikouteitest.New(t, s)
	u := s.Begin()
	if err := u.Persist(&Flight{ID: "HK1", Departs: departs}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	return s, sheet, h, svc
}

// inputCell is the A1 reference of column name in the first data row of
// the Flight_Input tab, found from its header row.
func inputCell(t *testing.T, sheet *hikouteitest.Sheet, name string) string {
	t.Helper()
	rows, err := sheet.Person().Displayed("Flight_Input")
	if err != nil || len(rows) < 2 {
		t.Fatalf("Flight_Input: %v %v", rows, err)
	}
	for i, h := range rows[0] {
		if h == name {
			return string(rune('A'+i)) + "2"
		}
	}
	t.Fatalf("Flight_Input has no column %q: %v", name, rows[0])
	return ""
}

// The time-zone rule (docs/sync.md "Cell encoding"): a time cell is written as
// the serial number of its UTC instant, and a serial a person types is
// read as UTC, whatever time zone the spreadsheet is set to.
func TestTimeCellsAreUTCSerialsWhateverTheSpreadsheetTimeZone(t *testing.T) {
	ctx := context.Background()
	departs := time.Date(2026, 11, 30, 12, 0, 0, 250_000_000, time.UTC)
	s, sheet, h, svc := flightSheet(t, departs)
	vr, err := svc.Spreadsheets.Values.Get(hikouteitest.SpreadsheetID, "Flight_System").ValueRenderOption("UNFORMATTED_VALUE").Context(ctx).Do()
	if err != nil || len(vr.Values) < 2 {
		t.Fatalf("read Flight_System: %v %v", vr, err)
	}
	col := -1
	for i, name := range vr.Values[0] {
		if name == "departs" {
			col = i
		}
	}
	if col < 0 || len(vr.Values[1]) <= col {
		t.Fatalf("Flight_System has no departs cell: %v", vr.Values)
	}
	if got, want := vr.Values[1][col], cell.SerialFromTime(departs); got != want {
		t.Fatalf("written serial = %v, want %v (the UTC instant, not the spreadsheet's %s wall clock)", got, want, farZone)
	}
	if err := sheet.Person().Type("Flight_Input", inputCell(t, sheet, "departs"), "2026-12-24 18:30:00"); err != nil {
		t.Fatal(err)
	}
	if res, err := h.Poll(ctx); err != nil || res.Stats.Accepted != 1 {
		t.Fatalf("poll: %+v %v", res.Stats, err)
	}
	f, err := hikoutei.Get[Flight](ctx, s, "HK1")
	if want := time.Date(2026, 12, 24, 18, 30, 0, 0, time.UTC); err != nil || !f.Departs.Equal(want) || f.Departs.Location() != time.UTC {
		t.Fatalf("typed 2026-12-24 18:30:00 read as %v (%v), want %v", f.Departs, err, want)
	}
}

// The boolean rule (docs/sync.md "Cell encoding"): a boolean column takes only
// a real boolean cell. Text that spells a boolean ("TRUE" typed as text,
// "yes") is quarantined as a type mismatch, never parsed; TRUE typed as
// people type it (the sheet stores a boolean) is accepted.
func TestBooleansAreNeverParsedFromText(t *testing.T) {
	ctx := context.Background()
	s, sheet, h, _ := flightSheet(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ref := inputCell(t, sheet, "boarding")
	for _, text := range []string{"'TRUE", "yes", "'1"} {
		if err := sheet.Person().Type("Flight_Input", ref, text); err != nil {
			t.Fatal(err)
		}
		res, err := h.Poll(ctx)
		if err != nil || res.Stats.Accepted != 0 || res.Stats.Quarantined != 1 {
			t.Fatalf("typed %q: poll %+v %v; want one quarantine record and nothing accepted", text, res.Stats, err)
		}
		if f, err := hikoutei.Get[Flight](ctx, s, "HK1"); err != nil || f.Boarding {
			t.Fatalf("typed %q: boarding = %v (%v), want false", text, f.Boarding, err)
		}
	}
	if err := sheet.Person().Type("Flight_Input", ref, "TRUE"); err != nil {
		t.Fatal(err)
	}
	if res, err := h.Poll(ctx); err != nil || res.Stats.Accepted != 1 {
		t.Fatalf("typed TRUE (a boolean cell): poll %+v %v", res.Stats, err)
	}
	if f, err := hikoutei.Get[Flight](ctx, s, "HK1"); err != nil || !f.Boarding {
		t.Fatalf("typed TRUE: boarding = %v (%v), want true", f.Boarding, err)
	}
}
