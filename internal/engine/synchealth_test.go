package engine_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// syncHealth is the store's sync health, which must be there.
func (x *synced) syncHealth() *hikoutei.SyncHealth {
	x.t.Helper()
	h := x.Health().SyncHealth
	if h == nil {
		x.t.Fatalf("no sync health with sync on: %v", x.Health().Sync)
	}
	return h
}

func tabOf(t testing.TB, h *hikoutei.SyncHealth, tab string) hikoutei.TabHealth {
	t.Helper()
	for _, th := range h.Tabs {
		if th.Tab == tab {
			return th
		}
	}
	t.Fatalf("no tab %s in sync health %+v", tab, h)
	return hikoutei.TabHealth{}
}

// wantBlocked checks that tab (and so the spreadsheet) is blocked for reason.
func wantBlocked(t testing.TB, x *synced, tab string, reason hikoutei.SyncReason) {
	t.Helper()
	h := x.syncHealth()
	if th := tabOf(t, h, tab); th.State != hikoutei.SyncBlocked || th.Reason != reason {
		t.Fatalf("%s: %s %q, want blocked %q", tab, th.State, th.Reason, reason)
	}
	if h.State != hikoutei.SyncBlocked || !h.Failing() {
		t.Fatalf("spreadsheet %s %q, failing %v", h.State, h.Reason, h.Failing())
	}
	if err := x.Health().Sync; !errors.Is(err, hikoutei.ErrSyncBlocked) || !strings.Contains(err.Error(), string(reason)) {
		t.Fatalf("Health.Sync = %v, want sync_blocked with %s", err, reason)
	}
}

func TestSyncHealthIsOKOnceEverythingIsWritten(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "one"})
	x.drain()
	h := x.syncHealth()
	if h.State != hikoutei.SyncOK || h.Pending != 0 || h.Failing() || x.Health().Sync != nil {
		t.Fatalf("health after drain: %+v, sync %v", h, x.Health().Sync)
	}
	if h.Spreadsheet != x.e.Target() || len(h.Tabs) != 2 || tabOf(t, h, "Airport_System").State != hikoutei.SyncOK {
		t.Fatalf("tabs %+v", h.Tabs)
	}
}

func TestSyncHealthIsBehindWithThePendingCountAndTheOldestAge(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "one"}, &Airport{ID: "2", Name: "two"})
	x.clock.Advance(90 * time.Second)
	commit(t, x.Store, &Airport{ID: "3", Name: "three"})
	h := x.syncHealth()
	sys := tabOf(t, h, "Airport_System")
	if sys.State != hikoutei.SyncBehind || sys.Pending != 3 || sys.OldestPending != 90*time.Second {
		t.Fatalf("System tab %+v, want behind, 3 pending, oldest 90s", sys)
	}
	if h.State != hikoutei.SyncBehind || h.Pending < 3 || h.OldestPending != 90*time.Second || h.Failing() || x.Health().Sync != nil {
		t.Fatalf("spreadsheet %+v (behind is not failing), sync %v", h, x.Health().Sync)
	}
	x.drain()
	if h := x.syncHealth(); h.State != hikoutei.SyncOK {
		t.Fatalf("after drain %+v", h)
	}
}

func TestSyncHealthIsDivergedFromReconcileNotesAndFailsPastTheBound(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "one"})
	x.drain()
	first := x.clock.Now()
	x.e.NoteReconcile(x.e.Target(), "Airport_System", 3, first)
	h := x.syncHealth()
	sys := tabOf(t, h, "Airport_System")
	if sys.State != hikoutei.SyncDiverged || sys.Diverged != 3 || !sys.LastReconcile.Equal(first) || h.State != hikoutei.SyncDiverged {
		t.Fatalf("after a pass finding 3 rows: %+v", sys)
	}
	if h.Failing() || !errors.Is(x.Health().Sync, hikoutei.ErrSyncDiverged) {
		t.Fatalf("diverged within the bound: failing %v, sync %v", h.Failing(), x.Health().Sync)
	}
	// The default bound is twice the reconciliation interval (30 s).
	x.clock.Advance(61 * time.Second)
	x.e.NoteReconcile(x.e.Target(), "Airport_System", 1, x.clock.Now())
	h = x.syncHealth()
	if sys := tabOf(t, h, "Airport_System"); !sys.DivergedSince.Equal(first) || !sys.OverBound || !h.Failing() || h.DivergedBound != time.Minute {
		t.Fatalf("diverged past the bound: %+v, failing %v", sys, h.Failing())
	}
	x.e.NoteReconcile(x.e.Target(), "Airport_System", 0, x.clock.Now())
	if h := x.syncHealth(); h.State != hikoutei.SyncOK || h.Failing() || x.Health().Sync != nil {
		t.Fatalf("a clean pass clears the divergence: %+v", h)
	}
}

func TestSyncHealthDivergedBoundComesFromTheEnvironment(t *testing.T) {
	sheet := hikouteitest.NewSheet(t)
	env := map[string]string{"HIKOUTEI_SYNC_DIVERGED_BOUND_SECONDS": "5"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	x := openSyncedOn(t, t.TempDir(), sheet, nil, airports, func(o *hikoutei.SyncOptions) { o.LookupEnv = lookup })
	if b := x.syncHealth().DivergedBound; b != 5*time.Second {
		t.Fatalf("bound %v, want 5s", b)
	}
	for _, bad := range []string{"0", "-5", "5s", " 5", "05", "1.5"} {
		env["HIKOUTEI_SYNC_DIVERGED_BOUND_SECONDS"] = bad
		so := syncOptions(sheet)
		so.LookupEnv = lookup
		_, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Sync: so, Logger: quiet}, airports...)
		if !errors.Is(err, hikoutei.ErrSyncStartup) || !strings.Contains(err.Error(), "HIKOUTEI_SYNC_DIVERGED_BOUND_SECONDS") {
			t.Fatalf("bound %q: %v, want sync_startup_failed naming the variable", bad, err)
		}
	}
}

// sheetsClient is a plain sheets/v4 client of the emulated spreadsheet,
// acting as another tool would (e.g. a person's script deleting a tab).
func sheetsClient(t testing.TB, url string) *sheets.Service {
	t.Helper()
	svc, err := sheets.NewService(ctx, option.WithEndpoint(url+"/"), option.WithoutAuthentication())
	mustT(t, err)
	return svc
}

func deleteTab(t testing.TB, x *synced, title string) {
	t.Helper()
	svc := sheetsClient(t, x.sheet.URL)
	ss, err := svc.Spreadsheets.Get(sheetID).Do()
	mustT(t, err)
	for _, s := range ss.Sheets {
		if s.Properties.Title == title {
			_, err := svc.Spreadsheets.BatchUpdate(sheetID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
				{DeleteSheet: &sheets.DeleteSheetRequest{SheetId: s.Properties.SheetId}}}}).Do()
			mustT(t, err)
			return
		}
	}
	t.Fatalf("no tab %s", title)
}

func TestSyncHealthIsBlockedWhenATabIsDeleted(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "one"})
	x.drain()
	deleteTab(t, x, "Airport_System")
	commit(t, x.Store, &Airport{ID: "1", Name: "renamed"})
	x.pass()
	wantBlocked(t, x, "Airport_System", hikoutei.ReasonTabMissing)
	if in := tabOf(t, x.syncHealth(), "Airport_Input"); in.State == hikoutei.SyncBlocked {
		t.Fatalf("the Input tab is not missing: %+v", in)
	}
}

func TestSyncHealthIsBlockedWhenAHeaderChanges(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "one"})
	x.drain()
	mustT(t, x.sheet.Person().Type("Airport_System", "B1", "renamed column"))
	commit(t, x.Store, &Airport{ID: "1", Name: "renamed"})
	x.pass()
	wantBlocked(t, x, "Airport_System", hikoutei.ReasonHeaderDrift)
}

func TestSyncHealthIsBlockedWhenAccessIsDenied(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "one"})
	x.drain()
	x.emu.Deny(sheetID)
	commit(t, x.Store, &Airport{ID: "1", Name: "renamed"})
	if _, err := x.h.Dispatch(ctx); !errors.Is(err, sheetsio.ErrPermissionDenied) {
		t.Fatalf("dispatch while denied: %v", err)
	}
	wantBlocked(t, x, "Airport_System", hikoutei.ReasonAccessDenied)
	x.emu.Allow(sheetID)
	x.drain()
	if h := x.syncHealth(); h.State != hikoutei.SyncOK {
		t.Fatalf("access restored, drained: %+v", h)
	}
}

func TestSyncHealthIsBlockedWhenTheSpreadsheetIsNotFound(t *testing.T) {
	emu := emulator.New(emulator.Options{}) // no AutoCreate: the spreadsheet does not exist (404)
	sheet := serveSheet(t, emu, nil)
	so := syncOptions(sheet)
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Sync: so, Logger: quiet, HeartbeatInterval: -1, AcquireWait: -1}, airports...)
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	if _, err := engine.Of(s).Provision(ctx); !errors.Is(err, sheetsio.ErrSpreadsheetNotFound) {
		t.Fatalf("provision: %v", err)
	}
	h := s.Health()
	if h.SyncHealth == nil || h.SyncHealth.State != hikoutei.SyncBlocked || h.SyncHealth.Reason != hikoutei.ReasonNotFound {
		t.Fatalf("sync health %+v", h.SyncHealth)
	}
	if !errors.Is(h.Sync, hikoutei.ErrSyncNotProvisioned) || !strings.Contains(h.Sync.Error(), "spreadsheet_not_found") {
		t.Fatalf("Health.Sync = %v", h.Sync)
	}
	if strings.Contains(h.Sync.Error(), sheetID) {
		t.Fatal("health names the spreadsheet id")
	}
}

func TestSyncHealthIsBlockedOnQuota(t *testing.T) {
	sheet := hikouteitest.NewSheet(t, func(c *gsheets.Config) {
		c.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	})
	x := openSyncedOn(t, t.TempDir(), sheet, nil, airports)
	commit(t, x.Store, &Airport{ID: "1", Name: "one"})
	x.drain()
	// Every attempt of the dispatch's read answers 429.
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault429}, emulator.Fault{Kind: emulator.Fault429}, emulator.Fault{Kind: emulator.Fault429})
	commit(t, x.Store, &Airport{ID: "1", Name: "renamed"})
	if _, err := x.h.Dispatch(ctx); !errors.Is(err, sheetsio.ErrReadUnavailable) {
		t.Fatalf("dispatch under quota: %v", err)
	}
	wantBlocked(t, x, "Airport_System", hikoutei.ReasonQuota)
	// A 429 on the write itself: the effect is uncertain with write_rate_limited.
	x.clock.Advance(time.Minute)
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchWrites})
	x.pass()
	wantBlocked(t, x, "Airport_System", hikoutei.ReasonQuota)
	x.drain()
	if h := x.syncHealth(); h.State != hikoutei.SyncOK {
		t.Fatalf("quota back, drained: %+v", h)
	}
}

// hangingSheet wraps an emulator's handler: while hanging, every request
// blocks until the test ends (or its client gives up).
type hangingSheet struct {
	hanging  atomic.Bool
	inflight atomic.Int64
	release  chan struct{}
}

// serveHanging serves a new emulator through a hangingSheet; hung
// requests are released when the test ends, before its server closes.
func serveHanging(t testing.TB) (*hangingSheet, *hikouteitest.Sheet) {
	h := &hangingSheet{release: make(chan struct{})}
	sheet := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), h.wrap, plainProvider)
	t.Cleanup(func() { close(h.release) })
	return h, sheet
}

func (h *hangingSheet) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.hanging.Load() {
			next.ServeHTTP(w, r)
			return
		}
		h.inflight.Add(1)
		defer h.inflight.Add(-1)
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
	})
}

// answers runs Health on a goroutine and fails the test unless it
// returns within a generous bound (the 100 ms goal is measured by
// BenchmarkHealthWhileSheetsHangs).
func answers(t testing.TB, s *hikoutei.Store) hikoutei.Health {
	t.Helper()
	got := make(chan hikoutei.Health, 1)
	go func() { got <- s.Health() }()
	select {
	case h := <-got:
		return h
	case <-time.After(2 * time.Second):
		t.Fatal("Store.Health() waited on the hung spreadsheet")
	}
	return hikoutei.Health{}
}

// openRunning opens a store of airports whose sync workers run on their
// own (not Manual) against sheet, on the wall clock.
func openRunning(t testing.TB, dir string, sheet *hikouteitest.Sheet) *hikoutei.Store {
	t.Helper()
	so := syncOptions(sheet)
	so.Manual, so.Interval = false, 5*time.Millisecond
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Sync: so, Logger: quiet, NATS: &hikoutei.NATSOptions{Disabled: true}}, airports...)
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestI29_StoreHealthAnswersWhileProvisioningAndDispatchHang(t *testing.T) {
	t.Parallel()
	hang, sheet := serveHanging(t)

	// Provisioning is stuck inside a hung request.
	hang.hanging.Store(true)
	dir := t.TempDir()
	s := openRunning(t, dir, sheet)
	eventually(t, "provisioning to reach the hung sheet", func() bool { return hang.inflight.Load() > 0 })
	commit(t, s, &Airport{ID: "1", Name: "while provisioning hangs"})
	h := answers(t, s)
	if h.Local != nil || h.Sync == nil || !strings.Contains(h.Sync.Error(), "not provisioned") || h.SyncHealth == nil ||
		h.SyncHealth.State != hikoutei.SyncBehind {
		t.Fatalf("health while provisioning hangs: local %v, sync %v, %+v", h.Local, h.Sync, h.SyncHealth)
	}
	s.Close()

	// Dispatch is stuck inside a hung request, the workers provisioned.
	hang.hanging.Store(false)
	s = openRunning(t, dir, sheet)
	eventually(t, "the backlog to be written", func() bool {
		h := s.Health()
		return h.Sync == nil && h.SyncHealth != nil && h.SyncHealth.State == hikoutei.SyncOK
	})
	hang.hanging.Store(true)
	commit(t, s, &Airport{ID: "2", Name: "while dispatch hangs"})
	eventually(t, "the dispatcher to be inside the hung request", func() bool {
		st, err := s.Stats(ctx)
		return err == nil && st.Outbox["processing"] > 0 && hang.inflight.Load() > 0
	})
	h = answers(t, s)
	if h.Local != nil || h.Sync != nil || h.SyncHealth.State != hikoutei.SyncBehind || h.SyncHealth.Pending == 0 {
		t.Fatalf("health while dispatch hangs: local %v, sync %v, %+v", h.Local, h.Sync, h.SyncHealth)
	}
}

// BenchmarkHealthWhileSheetsHangs measures Store.Health() while the
// dispatcher is stuck in a hung request (I29's goal: well under 100 ms).
func BenchmarkHealthWhileSheetsHangs(b *testing.B) {
	hang, sheet := serveHanging(b)
	s := openRunning(b, b.TempDir(), sheet)
	loadAirports(b, s, 500)
	eventually(b, "the backlog to be written", func() bool {
		h := s.Health()
		return h.Sync == nil && h.SyncHealth != nil && h.SyncHealth.State == hikoutei.SyncOK
	})
	hang.hanging.Store(true)
	commit(b, s, &Airport{ID: "hung", Name: "while dispatch hangs"})
	eventually(b, "the dispatcher to be inside the hung request", func() bool { return hang.inflight.Load() > 0 })
	b.ResetTimer()
	for b.Loop() {
		if h := s.Health(); h.SyncHealth == nil {
			b.Fatal("no sync health")
		}
	}
}

// An endpoint that refuses connections never lets sync look healthy: once
// provisioning failed, the spreadsheet is blocked as sheets_unreachable.
func TestSyncHealthIsBlockedWhenSheetsIsUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	mustT(t, err)
	addr := l.Addr().String()
	mustT(t, l.Close()) // nothing listens there any more
	sheet := hikouteitest.NewSheet(t)
	sheet.Provider = newProvider(t, "http://"+addr)
	s := openRunning(t, t.TempDir(), sheet)
	eventually(t, "sync health to report the unreachable endpoint", func() bool {
		h := s.Health().SyncHealth
		return h != nil && h.State == hikoutei.SyncBlocked && h.Reason == hikoutei.ReasonUnreachable
	})
	if h := s.Health(); h.Local != nil || h.Sync == nil {
		t.Fatalf("local %v, sync %v", h.Local, h.Sync)
	}
}

// A reconciliation that fails on every pass corrects no failed write and
// compares no tab: sync health says so once two passes failed in a row,
// and clears with the next pass that succeeds.
func TestI28_SyncHealthIsBlockedWhileReconciliationFailsEveryPass(t *testing.T) {
	sheet := hikouteitest.NewSheet(t, func(c *gsheets.Config) {
		c.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	})
	x := openSyncedOn(t, t.TempDir(), sheet, nil, airports)
	commit(t, x.Store, &Airport{ID: "1", Name: "Narita-7734"})
	x.drain()
	failingReads := func() {
		x.emu.ClearFaults()
		for range 20 { // more than the read's retries: the pass's read fails
			x.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads})
		}
	}
	failingReads()
	if _, err := x.h.Reconcile(ctx); err == nil {
		t.Fatal("a reconciliation whose read answers 500 succeeded")
	}
	if h := x.syncHealth(); h.State != hikoutei.SyncOK {
		t.Fatalf("one failed pass (the next may recover): %s %q, want ok", h.State, h.Reason)
	}
	failingReads()
	if _, err := x.h.Reconcile(ctx); err == nil {
		t.Fatal("a reconciliation whose read answers 500 succeeded")
	}
	wantBlocked(t, x, "Airport_System", hikoutei.ReasonReconcileFailing)
	if err := x.Health().Sync; strings.Contains(err.Error(), "Narita") {
		t.Fatalf("health names a cell value: %v", err)
	}
	x.emu.ClearFaults()
	if _, err := x.h.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if h := x.syncHealth(); h.State != hikoutei.SyncOK || x.Health().Sync != nil {
		t.Fatalf("a pass succeeded: %s %q, sync %v", h.State, h.Reason, x.Health().Sync)
	}
}
