package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// TestFaultCampaignConvergesWithoutDuplicates runs commits concurrently with
// dispatch passes while the emulator injects 5% 429, 2% 503, 2%
// applied-then-lost and 1% dropped connections (standing in for timeouts:
// both leave the outcome unknown). At the end the System tab equals
// canonical state, no row is duplicated, no effect is left pending,
// processing, uncertain or failed, and every superseded (terminal) effect
// has a recorded code.
func TestFaultCampaignConvergesWithoutDuplicates(t *testing.T) {
	t.Parallel()
	sheet := hikouteitest.NewSheet(t, func(pc *gsheets.Config) {
		pc.Backoff = gsheets.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 6}
		pc.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() } // Retry-After waits are not slept
	})
	x := openSyncedOn(t, t.TempDir(), sheet, nil, airports, func(so *hikoutei.SyncOptions) {
		so.MaxBatch = 8 // many small dispatches: many requests for the faults to hit
	})
	x.emu.SetFaultRates(emulator.FaultRates{P429: 0.05, P503: 0.02, PApplyThen503: 0.02, PApplyThenDrop: 0.01})
	all := readAirports(t)[:120]
	var wg sync.WaitGroup
	for w := range 4 { // concurrent committers: creates, then updates and removes
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(all); i += 4 {
				commit(t, x.Store, &all[i])
			}
		}()
	}
	for range 20 {
		x.disp.Pass(ctx) // errors are expected mid-campaign
		x.clock.Advance(time.Minute)
	}
	wg.Wait()
	for i := 0; i < len(all); i += 5 {
		all[i].Notes = fmt.Sprintf("rev %d", i)
		commit(t, x.Store, &all[i])
	}
	u := x.Begin()
	for i := 2; i < len(all); i += 9 {
		mustT(t, u.Remove(&all[i]))
	}
	_, err := u.Commit(ctx)
	mustT(t, err)
	x.converge(200)
	if x.disp.C.Uncertain.Load()+x.disp.C.Retried.Load() == 0 {
		t.Fatal("the campaign injected no fault that reached the dispatcher")
	}
	t.Logf("uncertain %d, retried %d, probes %d, superseded %d", x.disp.C.Uncertain.Load(), x.disp.C.Retried.Load(),
		x.disp.C.Probes.Load(), x.disp.C.Superseded.Load())
	x.emu.SetFaultRates(emulator.FaultRates{})
	x.converge(10)
	x.assertSheetEqualsCanonical()
}

// converge runs passes and reconciliation with the clock moving until the
// outbox is settled (or rounds run out).
func (x *synced) converge(rounds int) {
	for range rounds {
		x.disp.Pass(ctx)
		x.disp.Reconcile(ctx)
		x.clock.Advance(time.Minute)
		if x.unsettled() == 0 {
			return
		}
	}
}

func (x *synced) assertSheetEqualsCanonical() {
	t := x.t
	t.Helper()
	if x.unsettled() != 0 {
		t.Fatalf("outbox not settled: %v", x.outbox())
	}
	snaps, err := x.prov.Snapshot(ctx, x.wb, layout.SystemTabName("Airport"))
	mustT(t, err)
	snap := snaps[layout.SystemTabName("Airport")]
	spec, _ := x.wb.Schema().Tab(snap.Tab)
	live, err := hikoutei.Find[Airport](ctx, x.Store)
	mustT(t, err)
	if len(snap.Rows) != len(live) {
		t.Fatalf("sheet has %d rows, store %d", len(snap.Rows), len(live))
	}
	for _, a := range live {
		rows := snap.Find(a.ID)
		want, err := sheetsio.ExpectedRowHash(spec, a.ID, airportValues(a))
		mustT(t, err)
		if len(rows) != 1 || rows[0].Hash != want {
			t.Fatalf("airport %s: %d rows in the sheet, hash match %v", a.ID, len(rows), len(rows) == 1 && rows[0].Hash == want)
		}
	}
	var unexplained int
	for _, r := range x.inState(aggregates.EffectSuperseded, 1<<20) {
		if r.LastCode == "" {
			unexplained++
		}
	}
	if unexplained != 0 {
		t.Fatalf("%d terminal failures without a code", unexplained)
	}
}

func airportValues(a *Airport) map[string]any {
	v := map[string]any{"id": a.ID, "name": a.Name, "city": a.City, "country": a.Country, "iata": a.IATA,
		"latitude": a.Lat, "longitude": a.Lng, "altitude": a.Altitude, "tz": a.TZ, "notes": a.Notes, "active": a.Active, "checked": nil}
	if a.Checked != nil {
		v["checked"] = *a.Checked
	}
	return v
}
