// Package hikouteitest drives a store's sync deterministically, for the
// tests and tools of applications that embed Hikoutei (in the spirit of
// hashicorp/raft's testing helpers). A Sheet is an in-process emulator of
// the Google Sheets REST API served over HTTP, talked to by the real
// sheets/v4 client; a Harness runs one dispatch pass, one poll, one
// reconciliation at a time against a store opened with SyncOptions.Manual,
// and the emulator's person API edits the sheet as people would.
//
//	sheet := hikouteitest.NewSheet(t)
//	s, _ := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: sheet.SyncOptions()}, hikoutei.Entity[Airport]("Airport"))
//	h := hikouteitest.New(t, s)
//	// … commit …
//	h.Drain(ctx)                                           // the rows are on the sheet
//	sheet.Person().Type("Airport_Input", "B2", "a note")   // a person edits
//	h.Poll(ctx)                                            // the edit is accepted
package hikouteitest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// SpreadsheetID is the id of the emulated spreadsheet a Sheet serves.
const SpreadsheetID = "hikouteitest-sheet"

// Sheet is an emulated spreadsheet served over HTTP on loopback until the
// test ends.
type Sheet struct {
	Emulator *emulator.Emulator
	URL      string
	Provider *gsheets.Provider
}

// NewSheet starts an emulator (creating spreadsheets on first use) and a
// provider for it with no pacing and short retries. Tune the provider's
// configuration with tune.
func NewSheet(t testing.TB, tune ...func(*gsheets.Config)) *Sheet {
	t.Helper()
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	cfg := gsheets.Config{Endpoint: srv.URL, Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff: gsheets.Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond, Attempts: 3}, RequestTimeout: 5 * time.Second}
	for _, f := range tune {
		f(&cfg)
	}
	prov, err := gsheets.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("hikouteitest: provider: %v", err)
	}
	return &Sheet{Emulator: emu, URL: srv.URL, Provider: prov}
}

// SyncOptions are options syncing to this sheet with the workers stopped
// (Manual): a Harness drives them. The cadences are fixed (the
// environment is not read).
func (sh *Sheet) SyncOptions() *hikoutei.SyncOptions {
	return &hikoutei.SyncOptions{SpreadsheetID: SpreadsheetID, Provider: sh.Provider, Manual: true,
		PollingInterval: time.Minute, FullScanInterval: time.Minute}
}

// Person edits the spreadsheet as a person would (type, paste, sort,
// delete rows, merge) and reads what it displays.
func (sh *Sheet) Person() *emulator.Person { return sh.Emulator.Person(SpreadsheetID) }

// PersonOf is Person for another spreadsheet the emulator serves (a
// route's, SyncOptions.Routes).
func (sh *Sheet) PersonOf(spreadsheetID string) *emulator.Person {
	return sh.Emulator.Person(spreadsheetID)
}

// Harness drives the sync workers of one store by hand.
type Harness struct {
	t testing.TB
	e *engine.Engine
	d *effects.Dispatcher
	p *effects.Poller
	// routes drive the routed spreadsheets' workers (SyncOptions.Routes),
	// by spreadsheet id.
	routes map[string]*Harness
}

// New provisions the spreadsheet of s and returns its harness. s must be
// open with SyncOptions.Manual (Sheet.SyncOptions sets it): a harness
// racing the store's own workers would drive nothing deterministically.
func New(t testing.TB, s *hikoutei.Store) *Harness {
	t.Helper()
	e := engine.Of(s)
	if e == nil || !e.Manual() {
		t.Fatal("hikouteitest: open the store with SyncOptions.Manual (Sheet.SyncOptions sets it)")
	}
	d, err := e.Provision(context.Background())
	if err != nil {
		t.Fatalf("hikouteitest: provision: %v", err)
	}
	_, p, _ := e.Workers()
	h := &Harness{t: t, e: e, d: d, p: p, routes: map[string]*Harness{}}
	for _, name := range e.Targets()[1:] {
		d, err := e.ProvisionTarget(context.Background(), name)
		if err != nil {
			t.Fatalf("hikouteitest: provision a routed spreadsheet: %v", err)
		}
		_, p, _ := e.TargetWorkers(name)
		h.routes[name] = &Harness{t: t, e: e, d: d, p: p}
	}
	return h
}

// Route returns the harness of the routed spreadsheet spreadsheetID
// (SyncOptions.Routes): its Dispatch, Poll, FullScan, Reconcile and
// Cleanup drive that spreadsheet's workers. It fails the test when the
// store does not route to it.
func (h *Harness) Route(spreadsheetID string) *Harness {
	h.t.Helper()
	r := h.routes[h.e.TargetOfSpreadsheet(spreadsheetID)]
	if r == nil {
		h.t.Fatal("hikouteitest: the store routes no entity to that spreadsheet")
	}
	return r
}

// Dispatch runs one dispatch pass: due probes, the migration of any tab
// that still shows an older layout of the entities (after a change of
// shape), then one claimed batch sent and settled. It reports whether a
// full batch went out (more may wait).
func (h *Harness) Dispatch(ctx context.Context) (bool, error) { return h.d.Pass(ctx) }

// Reconcile runs one reconciliation: terminal failures superseded by
// corrections, entities the sheet never received queued.
func (h *Harness) Reconcile(ctx context.Context) (int, error) { return h.d.Reconcile(ctx) }

// Poll runs one poll of the Input tabs.
func (h *Harness) Poll(ctx context.Context) (effects.PollResult, error) { return h.p.Poll(ctx) }

// FullScan runs one safety full scan of the Input tabs.
func (h *Harness) FullScan(ctx context.Context) (effects.PollResult, error) { return h.p.FullScan(ctx) }

// Cleanup runs one surplus-row cleanup of the Input tabs.
func (h *Harness) Cleanup(ctx context.Context) (int, error) { return h.p.Cleanup(ctx) }

// Outbox counts the effects in every state.
func (h *Harness) Outbox() map[aggregates.EffectState]int64 {
	h.t.Helper()
	c, err := h.e.OutboxCounts()
	if err != nil {
		h.t.Fatalf("hikouteitest: outbox: %v", err)
	}
	return c
}

// Unsettled counts the effects that still hold their rows (pending,
// processing, delivery_uncertain, failed).
func (h *Harness) Unsettled() int64 {
	c, n := h.Outbox(), int64(0)
	for _, s := range aggregates.Unsettled() {
		n += c[s]
	}
	return n
}

// Drain runs dispatch passes until no effect is unsettled, calling wait
// (when not nil) between passes that leave probes or retries pending, so a
// test can move its clock; it fails the test after 50 passes.
func (h *Harness) Drain(ctx context.Context, wait ...func()) {
	h.t.Helper()
	for range 50 {
		for _, d := range h.drivers() {
			if _, err := d.Dispatch(ctx); err != nil {
				h.t.Fatalf("hikouteitest: dispatch: %v", err)
			}
		}
		if h.Unsettled() == 0 {
			return
		}
		for _, w := range wait {
			w()
		}
	}
	h.t.Fatalf("hikouteitest: the outbox did not drain: %v", h.Outbox())
}

// drivers are h and the harnesses of its routes, in the order of the
// store's targets.
func (h *Harness) drivers() []*Harness {
	out := []*Harness{h}
	for _, name := range h.e.Targets()[1:] {
		if r := h.routes[name]; r != nil {
			out = append(out, r)
		}
	}
	return out
}
