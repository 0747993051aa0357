package effects_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// turnProvider is the real provider whose read turn (AwaitRead) runs
// waiting first: what the application commits while a pass waits for
// its read.
type turnProvider struct {
	*gsheets.Provider
	waiting func()
}

func (p turnProvider) AwaitRead(ctx context.Context) error {
	p.waiting()
	return p.Provider.AwaitRead(ctx)
}

// A pass waits for its read turn before it claims: an update committed
// while the pass waits for the read budget rides in that pass, not in the
// next one (a claim taken before the wait would leave it queued for
// another read interval).
func TestDispatcherClaimsAfterItsReadTurn(t *testing.T) {
	var r *rig
	late := false
	r = newRig(t, func(c *effects.Config) {
		c.Provider = turnProvider{Provider: c.Provider.(*gsheets.Provider), waiting: func() {
			if r != nil && !late {
				late = true
				r.commit("LATE", airport("committed while the pass waited", 2))
			}
		}}
	})
	r.commit("EARLY", airport("committed before the pass", 1))
	r.clock.Advance(gsheets.DefaultTrustTTL) // past the trust window: the appends read first, so the pass waits for a read turn
	r.pass()
	if !late {
		t.Fatal("the pass never waited for its read turn")
	}
	for _, fx := range r.ob.Effects() {
		if fx.State != aggregates.EffectApplied {
			t.Fatalf("effect %s is %v after one pass, want applied", fx.ID, fx.State)
		}
	}
	if got := r.disp.C.Dispatches.Load(); got != 1 {
		t.Fatalf("%d dispatches, want the one pass's", got)
	}
}

// stolenTurn is the real provider where, as soon as a pass's read turn
// came, a woken poll's urgent read takes a token of the read budget.
type stolenTurn struct {
	*gsheets.Provider
	wb *sheetsio.Workbook
}

func (p stolenTurn) AwaitRead(ctx context.Context) error {
	if err := p.Provider.AwaitRead(ctx); err != nil {
		return err
	}
	_, err := p.ReadAuthority(sheetsio.WithReadPriority(ctx, sheetsio.PriorityUrgent), p.wb)
	return err
}

// A pass's preflight read takes the turn the pass waited for before it
// claimed: when another read took a token in between, the preflight
// still starts at once (on one token, the reserve's) instead of waiting
// for the budget to hold the reserve again while its claimed commits
// wait. The read budget here refills one token an hour, so a read that
// waited would never start.
func TestDispatcherReadsOnTheTurnItWaitedFor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	clock := events.NewManualClock(t0)
	provider := func(p gsheets.Pacing) *gsheets.Provider {
		prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: srv.URL, Pacing: p, TrustTTL: -1, RequestTimeout: 5 * time.Second, Now: clock.Now})
		must(t, err)
		return prov
	}
	schema, err := layout.NewSchema(airportLayout())
	must(t, err)
	wb, err := provider(gsheets.Pacing{ReadInterval: -1, WriteInterval: -1}).Provision(ctx, sheetID, schema)
	must(t, err)
	paced := provider(gsheets.Pacing{ReadInterval: time.Hour, WriteInterval: -1, Burst: 5, ReadReserve: 2})
	ob := effects.NewMemOutbox(effects.MemOutboxConfig{Clock: clock, Fence: testFence, Schema: schema})
	disp, err := effects.NewDispatcher(effects.Config{Spreadsheet: "sheets", Provider: stolenTurn{Provider: paced, wb: wb}, Workbook: wb,
		Outbox: ob, Clock: clock, Logger: slog.New(slog.DiscardHandler), AuthorityTTL: testTTL, Workers: 1})
	must(t, err)
	must(t, disp.ClaimAuthority(ctx)) // two reads: 3 tokens left, the reserve's 2 and one
	if n := paced.Headroom(); n != 3 {
		t.Fatalf("%d read tokens before the pass, want 3", n)
	}
	_, err = ob.Commit("Airport", "LAX", airport("Los Angeles", 38))
	must(t, err)
	if _, err := disp.Pass(ctx); err != nil { // the turn at 3 tokens, the poll's read, the preflight on the last but one
		t.Fatalf("the pass's read waited for the reserve again: %v", err)
	}
	for _, fx := range ob.Effects() {
		if fx.State != aggregates.EffectApplied {
			t.Fatalf("effect %s is %v, want applied", fx.ID, fx.State)
		}
	}
}

// urgencySpy records whether each poll's values read was urgent, and
// reads nothing.
type urgencySpy struct {
	sheetsio.Client
	seen chan bool
}

func (s urgencySpy) SnapshotChecked(ctx context.Context, _ *sheetsio.Workbook, _ map[string]sheetsio.RowCheck, _ ...string) (map[string]*sheetsio.TabSnapshot, error) {
	s.seen <- sheetsio.ReadPriority(ctx) == sheetsio.PriorityUrgent
	return nil, errors.New("spy: nothing read")
}

// quietInbound expects nothing and watches no conflicts.
type quietInbound struct{ effects.Inbound }

func (quietInbound) Expectations([]string) (map[string]aggregates.TabExpectation, uint64, error) {
	return nil, 0, nil
}
func (quietInbound) WatchesChoices() (bool, error) { return false, nil }

// A poll a wake starts reads urgently (ahead of the dispatcher's reads,
// with the reserve the read budget keeps); a poll the timer starts does
// not.
func TestWokenPollReadsUrgently(t *testing.T) {
	clock := events.NewManualClock(t0)
	wake, spy := make(chan struct{}, 1), urgencySpy{seen: make(chan bool, 4)}
	p, err := effects.NewPoller(effects.PollerConfig{Provider: spy, Workbook: new(sheetsio.Workbook), Inbound: quietInbound{},
		Tabs: []string{"Input"}, Clock: clock, Logger: slog.New(slog.DiscardHandler), Interval: time.Minute,
		FullScanInterval: time.Hour, CleanupInterval: time.Hour, Wake: wake})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wake <- struct{}{}
	if !<-spy.seen {
		t.Fatal("the woken poll's read was not urgent")
	}
	for n, changed := clock.Waiters(); n == 0; n, changed = clock.Waiters() {
		<-changed
	}
	clock.Advance(time.Minute)
	if <-spy.seen {
		t.Fatal("the timer's poll read urgently")
	}
}

// turnsProvider is the real provider counting the read and write turns
// the passes wait for.
type turnsProvider struct {
	*gsheets.Provider
	reads, writes *int
}

func (p turnsProvider) AwaitRead(ctx context.Context) error {
	*p.reads++
	return p.Provider.AwaitRead(ctx)
}

func (p turnsProvider) AwaitWrite(ctx context.Context) error {
	*p.writes++
	return p.Provider.AwaitWrite(ctx)
}

// While the provider keeps the rows of the System tab a read showed, with
// the fence verified, within its trust window (sheetsio.KnownRows), a
// pass of updates waits for its write's turn, not a read's, and reads
// nothing: it does not queue behind the woken polls' reads. Past the
// window (the injected clock moved) the pass waits for its read turn and
// reads again. Before the rows are kept, the first pass (new rows, a
// blind append after provisioning and the authority's claim) and the
// pass after it (the last read nothing) wait for their write's turn too
// (sheetsio.BlindAppends); the update's read then waits as any read.
func TestDispatcherWaitsForItsWriteTurnWhenItsRowsAreKnown(t *testing.T) {
	var reads, writes int
	r := newRig(t, func(c *effects.Config) {
		c.Provider = turnsProvider{Provider: c.Provider.(*gsheets.Provider), reads: &reads, writes: &writes}
	})
	r.commit("LAX", airport("Los Angeles", 38))
	r.pass() // appends, blind: nothing kept
	r.commit("LAX", airport("Los Angeles Intl", 38))
	r.pass() // an update: its read keeps the System tab's rows
	if reads != 0 || writes != 2 {
		t.Fatalf("%d read turns, %d write turns before the rows were known, want 0 and 2", reads, writes)
	}
	before := r.emu.Counters(sheetID).Reads
	r.commit("LAX", airport("LAX", 39))
	r.pass()
	if reads != 0 || writes != 3 || r.emu.Counters(sheetID).Reads != before {
		t.Fatalf("%d read turns, %d write turns, %d reads with the rows known, want 0, 3, 0", reads, writes, r.emu.Counters(sheetID).Reads-before)
	}
	for _, fx := range r.ob.Effects() {
		if fx.State != aggregates.EffectApplied {
			t.Fatalf("effect %s is %v, want applied", fx.ID, fx.State)
		}
	}
	r.clock.Advance(gsheets.DefaultTrustTTL)
	r.commit("LAX", airport("LAX again", 39))
	r.pass()
	if reads != 1 || writes != 3 || r.emu.Counters(sheetID).Reads == before {
		t.Fatalf("past the trust window: %d read turns, %d write turns, read %v", reads, writes, r.emu.Counters(sheetID).Reads != before)
	}
}

// The first pass after provisioning and the authority's claim sends new
// rows as a blind append: it waits for its write's turn, not a read's (a
// read budget provisioning spent does not hold it back), reads nothing,
// and does not sweep the notes of the Input tab provisioning created (a
// new tab carries no note an earlier run left): one request, a write.
func TestDispatcherSendsTheFirstNewRowsAfterProvisioningInOneWrite(t *testing.T) {
	var reads, writes int
	r := newRig(t, func(c *effects.Config) {
		c.Provider = turnsProvider{Provider: c.Provider.(*gsheets.Provider), reads: &reads, writes: &writes}
	})
	if !r.wb.Created(layout.InputTabName("Airport")) || !r.wb.Created(layout.SystemTabName("Airport")) {
		t.Fatal("provisioning did not note the tabs it created")
	}
	before := r.emu.Counters(sheetID)
	r.commit("LAX", airport("Los Angeles", 38))
	r.commit("SFO", airport("San Francisco", 4))
	r.pass()
	after := r.emu.Counters(sheetID)
	if reads != 0 || writes != 1 || after.Reads != before.Reads || after.Writes-before.Writes != 1 {
		t.Fatalf("%d read turns, %d write turns, %d reads, %d writes; want 0, 1, 0, 1", reads, writes,
			after.Reads-before.Reads, after.Writes-before.Writes)
	}
	for _, fx := range r.ob.Effects() {
		if fx.State != aggregates.EffectApplied {
			t.Fatalf("effect %s is %v, want applied", fx.ID, fx.State)
		}
	}
}

// A tab provisioning found (a later run's, or an adopted sheet's) may
// carry notes an earlier run left: the first pass still sweeps it, a
// read the blind first pass of a created tab saves.
func TestDispatcherSweepsTheNotesOfATabProvisioningFound(t *testing.T) {
	var found *sheetsio.Workbook
	r := newRig(t, func(c *effects.Config) {
		wb, err := c.Provider.(*gsheets.Provider).Provision(context.Background(), sheetID, c.Workbook.Schema())
		must(t, err)
		found, c.Workbook, c.Notes = wb, wb, &staticNotes{}
	})
	if found.Created(layout.InputTabName("Airport")) {
		t.Fatal("a tab that existed is noted as created")
	}
	before := r.emu.Counters(sheetID)
	r.commit("LAX", airport("Los Angeles", 38))
	r.pass()
	if after := r.emu.Counters(sheetID); after.Reads == before.Reads {
		t.Fatalf("the first pass read nothing (%d writes): the found tab was not swept", after.Writes-before.Writes)
	}
}
