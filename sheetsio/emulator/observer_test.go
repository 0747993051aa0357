package emulator

import (
	"context"
	"testing"

	"google.golang.org/api/sheets/v4"
)

// TestObserverSeesAccessesInOrder: an observer sees an API write (the tab
// before and after), a person's edit (marked Person), and an API read
// with the range it rendered, in the order they took effect; a failed
// batch reports nothing.
func TestObserverSeesAccessesInOrder(t *testing.T) {
	var seen []Access
	emu, svc, id := newBookClient(t, Options{Observe: func(a Access) { seen = append(seen, a) }})
	ctx := context.Background()
	vr := &sheets.ValueRange{Values: [][]any{{"h", "x"}, {"a", "1"}}}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Context(ctx).Do(); err != nil {
		t.Fatal(err)
	}
	if err := emu.Person(id).Type("Sheet1", "B2", "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Get(id, "Sheet1!B1:B5").Context(ctx).Do(); err != nil {
		t.Fatal(err)
	}
	bad := &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{DeleteSheet: &sheets.DeleteSheetRequest{SheetId: 99}}}}
	if _, err := svc.Spreadsheets.BatchUpdate(id, bad).Context(ctx).Do(); err == nil {
		t.Fatal("deleting an unknown tab succeeded")
	}
	if len(seen) != 3 {
		t.Fatalf("saw %d accesses, want 3: %+v", len(seen), seen)
	}
	w, p, r := seen[0], seen[1], seen[2]
	if w.Person || len(w.Changed) != 1 || len(w.Changed[0].Before) != 0 || w.Changed[0].After[1][1] != "1" {
		t.Errorf("write: %+v", w)
	}
	if !p.Person || len(p.Changed) != 1 || p.Changed[0].Before[1][1] != "1" || p.Changed[0].After[1][1] != "2" {
		t.Errorf("person: %+v", p)
	}
	want := Region{Tab: "Sheet1", R0: 0, R1: 5, C0: 1, C1: 2}
	if r.Person || len(r.Changed) != 0 || len(r.Reads) != 1 || r.Reads[0] != want {
		t.Errorf("read: %+v, want the region %+v", r, want)
	}
}
