package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// epochRun opens dir syncing to sheet (as a restarted process: a new
// provider), the workers driven by hand, on one manual clock.
type epochRun struct {
	t     *testing.T
	dir   string
	sheet *hikouteitest.Sheet
	clock *events.ManualClock
}

func (r epochRun) open(acceptGap bool) *hikoutei.Store {
	r.t.Helper()
	o := hikoutei.Options{Clock: r.clock, HeartbeatInterval: -1, AcquireWait: -1, Sync: syncOptions(restarted(r.t, r.sheet)),
		LeaseTTL: testLeaseTTL, Logger: quiet, AcceptLogGap: acceptGap}
	s, err := hikoutei.Open(r.t.Context(), r.dir, o, airports...)
	mustT(r.t, err)
	r.t.Cleanup(func() { s.Close() })
	return s
}

// authority reads the spreadsheet authority row through s's provider.
func authorityOf(t *testing.T, sheet *hikouteitest.Sheet, s *hikoutei.Store) sheetsio.Authority {
	t.Helper()
	e := engine.Of(s)
	_, _, wb := e.Workers()
	if wb == nil {
		t.Fatal("not provisioned")
	}
	a, err := sheet.Provider.ReadAuthority(ctx, wb)
	mustT(t, err)
	return a
}

// I05 with an accepted log gap: the epoch of the run whose records the
// log lost was mirrored into the spreadsheet authority. The next writer
// takes an epoch above every epoch handed out before (the read model's
// lease history keeps it; the log's epoch floor records it), so it claims
// the authority and sync goes on without a restart — never the lost run's
// epoch again, which the authority would refuse as a newer writer.
func TestI05_AfterAnAcceptedLogGapTheEpochIsNeverReusedAndSyncGoesOn(t *testing.T) {
	t.Parallel()
	r := epochRun{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t), clock: events.NewManualClock(t0)}
	s := r.open(false)
	h := hikouteitest.New(t, s)
	commit(t, s, &Airport{ID: "A1", Name: "before the backup"})
	h.Drain(ctx)
	mustT(t, s.Close())
	older, err := os.ReadFile(filepath.Join(r.dir, events.LogFileName)) // the operator's backup
	mustT(t, err)

	s = r.open(false) // the run the log will lose
	h = hikouteitest.New(t, s)
	commit(t, s, &Airport{ID: "A2", Name: "lost with the log"})
	h.Drain(ctx)
	lost := engine.Of(s).Lease().Epoch
	if a := authorityOf(t, r.sheet, s); a.Epoch != int64(lost) {
		t.Fatalf("authority %+v, want epoch %d", a, lost)
	}
	mustT(t, s.Close())
	mustT(t, os.WriteFile(filepath.Join(r.dir, events.LogFileName), older, 0o600)) // the backup restored over log.db

	s = r.open(true)
	e := engine.Of(s)
	if got := e.Lease().Epoch; got <= lost {
		t.Fatalf("after the accepted gap the writer took epoch %d: not above %d, the lost run's (the spreadsheet authority names it)", got, lost)
	}
	if _, err := e.Provision(ctx); err != nil {
		t.Fatalf("provisioning after the accepted gap: %v", err)
	}
	h = hikouteitest.New(t, s)
	commit(t, s, &Airport{ID: "A3", Name: "after the gap"})
	h.Drain(ctx)
	if c := h.Outbox(); c[aggregates.EffectApplied] == 0 || !onlyApplied(c) {
		t.Fatalf("outbox after the gap: %v", c)
	}
	if a := authorityOf(t, r.sheet, s); a.Epoch != int64(e.Lease().Epoch) {
		t.Fatalf("authority %+v, want this writer's epoch %d", a, e.Lease().Epoch)
	}
	if hl := e.Health(); hl.Sync != nil || hl.SyncHealth == nil || hl.SyncHealth.Failing() {
		t.Fatalf("sync health after the gap: %v %+v", hl.Sync, hl.SyncHealth)
	}
	if floor, err := e.Log().EpochFloor(); err != nil || floor < lost {
		t.Fatalf("the log's epoch floor %d (%v), want at least %d", floor, err, lost)
	}
}

// I05: when the authority names this store at an epoch not below the
// writer's (a run no file of the store remembers wrote it), sync stops
// with a precise reason — authority_diverged naming both epochs, never
// sheets_unreachable — and records that epoch, so the next open takes an
// epoch above it and claims the authority.
func TestI05_AnAuthorityOfThisStoreAtANewerEpochStopsSyncPreciselyAndARestartTakesAnEpochAboveIt(t *testing.T) {
	r := epochRun{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t), clock: events.NewManualClock(t0)}
	s := r.open(false)
	h := hikouteitest.New(t, s)
	commit(t, s, &Airport{ID: "A1", Name: "first"})
	h.Drain(ctx)
	e := engine.Of(s)
	f := e.Fence()
	_, _, wb := e.Workers()
	mustT(t, s.Close())
	f.Epoch, f.Token = f.Epoch+5, "a-writer-nobody-remembers"
	mustT(t, restarted(t, r.sheet).Provider.WriteAuthority(ctx, wb, f))

	s = r.open(false)
	e = engine.Of(s)
	_, err := e.Provision(ctx)
	var ahead *effects.AuthorityAheadError
	if !errors.As(err, &ahead) || !errors.Is(err, effects.ErrDivergence) || ahead.Epoch != f.Epoch {
		t.Fatalf("provisioning under an authority of this store at epoch %d: %v", f.Epoch, err)
	}
	hl := e.Health()
	if hl.SyncHealth == nil || hl.SyncHealth.Reason != engine.ReasonAuthorityDiverged {
		t.Fatalf("sync health %+v (%v): want %s, not %s", hl.SyncHealth, hl.Sync, engine.ReasonAuthorityDiverged, engine.ReasonUnreachable)
	}
	if msg := err.Error(); !strings.Contains(msg, "restart the store") || !strings.Contains(msg, "not below this writer's") {
		t.Fatalf("reason: %s", msg)
	}
	mustT(t, s.Close())

	s = r.open(false)
	e = engine.Of(s)
	if got := e.Lease().Epoch; int64(got) <= f.Epoch {
		t.Fatalf("after the restart the writer took epoch %d, not above the authority's %d", got, f.Epoch)
	}
	h = hikouteitest.New(t, s)
	commit(t, s, &Airport{ID: "A2", Name: "after the restart"})
	h.Drain(ctx)
	if a := authorityOf(t, r.sheet, s); a.Epoch != int64(e.Lease().Epoch) {
		t.Fatalf("authority %+v, want this writer's epoch %d", a, e.Lease().Epoch)
	}
}
