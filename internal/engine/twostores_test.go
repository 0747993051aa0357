package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// openOnClock opens a synced store whose store clock and provider clock are
// the shared manual clock, so authority ages are comparable.
func openOnClock(t *testing.T, emu *emulator.Emulator, url string, clock *events.ManualClock) *synced {
	t.Helper()
	sheet := &hikouteitest.Sheet{Emulator: emu, URL: url, Provider: newProvider(t, url, plainProvider, func(c *gsheets.Config) { c.Now = clock.Now })}
	return openSyncedOn(t, t.TempDir(), sheet, clock, airports, func(o *hikoutei.SyncOptions) {
		o.ProbeDelay, o.MaxProbes, o.AuthorityTTL = 0, 0, 2*time.Minute // default probing
	})
}

func TestTwoStoresOnOneSpreadsheetRefuseTakeOverOnExpiryAndFenceTheOldWriter(t *testing.T) {
	t.Parallel()
	shared := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil)
	emu := shared.Emulator
	clock := events.NewManualClock(t0)
	a := openOnClock(t, emu, shared.URL, clock)
	commit(t, a.Store, &Airport{ID: "a1", Name: "from store A"})
	a.pass()

	// Store B is configured for the same spreadsheet: it refuses, naming A.
	b := openOnClock(t, emu, shared.URL, clock)
	commit(t, b.Store, &Airport{ID: "b1", Name: "from store B"})
	emu.ResetCounters()
	_, err := b.disp.Pass(ctx)
	if !errors.Is(err, effects.ErrAuthorityHeld) || !strings.Contains(err.Error(), a.e.Log().StoreID()) {
		t.Fatalf("second store: %v", err)
	}
	if c := emu.Counters(sheetID); c.Writes != 0 {
		t.Fatalf("the refused store wrote %d times", c.Writes)
	}
	// Its health says why nothing of it reaches the sheet.
	if h, err := b.e.SyncHealth(); err != nil || h.State != engine.SyncBlocked || h.Reason != engine.ReasonAuthorityHeld {
		t.Fatalf("the waiting store's sync health: %+v, %v; want blocked, %s", h, err, engine.ReasonAuthorityHeld)
	}

	// A goes quiet; once its authority expired, B takes over (bumping it)…
	clock.Advance(3 * time.Minute)
	b.pass()
	if b.rowOf("Airport_System", "b1") == nil {
		t.Fatal("store B did not dispatch after taking over")
	}
	if h, err := b.e.SyncHealth(); err != nil || h.Reason == engine.ReasonAuthorityHeld {
		t.Fatalf("sync health after the takeover: %+v, %v", h, err)
	}
	// …and the old writer is fenced: it detects the divergence and stops.
	commit(t, a.Store, &Airport{ID: "a2", Name: "late write from A"})
	emu.ResetCounters()
	_, err = a.disp.Pass(ctx)
	if !errors.Is(err, effects.ErrDivergence) {
		t.Fatalf("old writer after the takeover: %v", err)
	}
	if c := emu.Counters(sheetID); c.Writes != 0 || a.rowOf("Airport_System", "a2") != nil {
		t.Fatalf("the fenced store wrote %d times", c.Writes)
	}
	var reason string
	a.readModel(func(p *projector.Projector) (err error) {
		reason, err = p.MetaValue("divergence:" + a.e.Target())
		return err
	})
	if !strings.Contains(reason, b.e.Log().StoreID()) {
		t.Fatalf("divergence not recorded: %q", reason)
	}
}
