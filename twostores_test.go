package hikoutei

import (
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// openOnClock opens a synced store whose store clock and provider clock are
// the shared manual clock, so authority ages are comparable.
func openOnClock(t *testing.T, emu *emulator.Emulator, url string, clock *events.ManualClock) *synced {
	t.Helper()
	prov, err := sheetsio.New(ctx, sheetsio.Config{Endpoint: url, Pacing: sheetsio.Pacing{ReadInterval: -1, WriteInterval: -1},
		LookupEnv: func(string) (string, bool) { return "", false }, Now: clock.Now})
	mustT(t, err)
	s, err := Open(t.TempDir(), Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, LeaseTTL: testLeaseTTL,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sync:   &SyncOptions{SpreadsheetID: sheetID, Provider: prov, Manual: true, AuthorityTTL: 2 * time.Minute}},
		Entity[Airport]("Airport"))
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	disp, err := s.Provision(ctx)
	mustT(t, err)
	return &synced{Store: s, t: t, emu: emu, prov: prov, clock: clock, disp: disp}
}

func TestTwoStoresOnOneSpreadsheetRefuseTakeOverOnExpiryAndFenceTheOldWriter(t *testing.T) {
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	clock := events.NewManualClock(t0)
	a := openOnClock(t, emu, srv.URL, clock)
	commit(t, a.Store, &Airport{ID: "a1", Name: "from store A"})
	a.pass()

	// Store B is configured for the same spreadsheet: it refuses, naming A.
	b := openOnClock(t, emu, srv.URL, clock)
	commit(t, b.Store, &Airport{ID: "b1", Name: "from store B"})
	emu.ResetCounters()
	_, err := b.disp.Pass(ctx)
	if !errors.Is(err, effects.ErrAuthorityHeld) || !strings.Contains(err.Error(), a.Log().StoreID()) {
		t.Fatalf("second store: %v", err)
	}
	if c := emu.Counters(sheetID); c.Writes != 0 {
		t.Fatalf("the refused store wrote %d times", c.Writes)
	}

	// A goes quiet; once its authority expired, B takes over (bumping it)…
	clock.Advance(3 * time.Minute)
	b.pass()
	if b.rowOf("Airport_System", "b1") == nil {
		t.Fatal("store B did not dispatch after taking over")
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
	mustT(t, a.onWriter(func() error { reason = metaOf(t, a.Store, "divergence:sheets"); return nil }))
	if !strings.Contains(reason, b.Log().StoreID()) {
		t.Fatalf("divergence not recorded: %q", reason)
	}
}

// metaOf reads an hk_meta value through the projector (writer goroutine).
func metaOf(t *testing.T, s *Store, key string) string {
	t.Helper()
	v, _ := s.proj.MetaValue(key)
	return v
}
