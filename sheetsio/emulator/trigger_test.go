package emulator

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	sheets "google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
)

// The edit trigger calls the hook once per person's edit of values,
// signed so that the store's verifier accepts it, and never for
// structural changes, a look that types nothing, or API writes.
func TestEditTriggerCallsTheHookSignedForAPersonsEditsOnly(t *testing.T) {
	secret := "an emulated trigger's secret, 32 bytes or more"
	clock := events.NewManualClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	var results []string
	var hints []wakehook.Hint
	h, err := wakehook.NewHandler(wakehook.Config{Secret: []byte(secret), Clock: clock,
		Poll:     func(h wakehook.Hint) { mu.Lock(); hints = append(hints, h); mu.Unlock() },
		OnResult: func(r string) { mu.Lock(); results = append(results, r); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	hook := httptest.NewServer(h)
	defer hook.Close()
	emu, svc, id := newBookClient(t, Options{Clock: clock})
	var statuses []int
	emu.SetEditTrigger(&EditTrigger{URL: hook.URL, Secret: secret, Called: func(status int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("trigger call: %v", err)
		}
		statuses = append(statuses, status)
	}})
	p := emu.Person(id)
	edits := []func() error{
		func() error { return p.Type("Sheet1", "A1", "typed") },
		func() error { _, err := p.PasteRow("Sheet1", 1); return err },
		func() error { return p.LookAndType("Sheet1", func([][]string) (string, string) { return "B1", "x" }) },
		func() error { return p.ClearTab("Sheet1", 2) },
	}
	quiet := []func() error{
		func() error { return p.InsertRows("Sheet1", 1, 1) },
		func() error { return p.LookAndType("Sheet1", func([][]string) (string, string) { return "", "" }) },
		func() error {
			_, err := svc.Spreadsheets.Values.Update(id, "Sheet1!C1", &sheets.ValueRange{Values: rows([]any{"api"})}).ValueInputOption("RAW").Do()
			return err
		},
	}
	for _, f := range append(edits, quiet...) {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	emu.calls.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(statuses) != len(edits) {
		t.Fatalf("trigger calls: %v, want one per edit of values (%d)", statuses, len(edits))
	}
	for i, r := range results {
		if statuses[i] != http.StatusAccepted || (r != "polled" && r != "scheduled" && r != "coalesced") {
			t.Fatalf("call %d: status %d, result %s", i, statuses[i], r)
		}
	}
	if want := emu.sheetIDOf(id, "Sheet1"); len(hints) != 1 || hints[0].All || !slices.Equal(hints[0].Sheets, []int64{want}) {
		t.Fatalf("the first call polled for %+v, want the edited tab's sheetId %d", hints, want)
	}
}

// A trigger of the first script (Legacy) names no tab: the store's
// handler still accepts it, for every tab.
func TestEditTriggerOfTheFirstScriptNamesNoTab(t *testing.T) {
	secret := "an emulated trigger's secret, 32 bytes or more"
	clock := events.NewManualClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	hints := make(chan wakehook.Hint, 1)
	h, err := wakehook.NewHandler(wakehook.Config{Secret: []byte(secret), Clock: clock, Poll: func(h wakehook.Hint) { hints <- h }})
	if err != nil {
		t.Fatal(err)
	}
	hook := httptest.NewServer(h)
	defer hook.Close()
	emu, _, id := newBookClient(t, Options{Clock: clock})
	emu.SetEditTrigger(&EditTrigger{URL: hook.URL, Secret: secret, Legacy: true})
	if err := emu.Person(id).Type("Sheet1", "A1", "typed"); err != nil {
		t.Fatal(err)
	}
	if got := <-hints; !got.All {
		t.Fatalf("an old script's wake polled for %+v, want every tab", got)
	}
}
