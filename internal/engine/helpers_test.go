package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
	hnats "github.com/hikoutei/hikoutei-go/natsserver"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Airport is the test entity, shaped like the OpenFlights data set; its
// notes are user-owned (an Input tab).
type Airport = fixtures.Airport

// Part has a system-owned name and three user-owned fields: its Input tab
// is id, sku, qty, notes, __hikoutei_row_id (columns A–E).
type Part struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	SKU   string `hikoutei:"sku,user"`
	Qty   int64  `hikoutei:"qty,user"`
	Notes string `hikoutei:"notes,user"`
}

const partInput = "Part_Input"

// sheetID is the emulated spreadsheet's id.
const sheetID = hikouteitest.SpreadsheetID

var ctx = context.Background()

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testLeaseTTL outlives every clock jump of these tests (the heartbeat is
// off: the manual clock would not drive it).
const testLeaseTTL = 1000 * time.Hour

var (
	airports = []hikoutei.EntityDef{hikoutei.Entity[Airport]("Airport")}
	parts    = []hikoutei.EntityDef{hikoutei.Entity[Part]("Part")}
)

// quiet is a logger that drops everything.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func mustT(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func commit(t testing.TB, s *hikoutei.Store, entities ...any) hikoutei.CommitResult {
	t.Helper()
	u := s.Begin()
	for _, e := range entities {
		mustT(t, u.Persist(e))
	}
	res, err := u.Commit(ctx)
	mustT(t, err)
	return res
}

func readAirports(t testing.TB) []Airport { return fixtures.Airports(t) }

func loadAirports(t testing.TB, s *hikoutei.Store, n int) {
	t.Helper()
	all := readAirports(t)[:n]
	for i := 0; i < len(all); i += 250 {
		u := s.Begin()
		for j := i; j < min(i+250, len(all)); j++ {
			mustT(t, u.Persist(&all[j]))
		}
		_, err := u.Commit(ctx)
		mustT(t, err)
	}
}

// openStore opens a store of airports on a manual clock: local-only
// unless opts turn NATS on (the embedded server is linked).
func openStore(t testing.TB, dir string, opts ...func(*hikoutei.Options)) *hikoutei.Store {
	t.Helper()
	o := hikoutei.Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, NATSServer: hnats.Embedded()}
	for _, f := range opts {
		f(&o)
	}
	s, err := hikoutei.Open(t.Context(), dir, o, airports...)
	mustT(t, err)
	return s
}

func digest(t testing.TB, path string) string {
	t.Helper()
	d, err := projector.Digest(path)
	mustT(t, err)
	return d
}

// replayDigest replays the log of dir up to upTo into a fresh read model
// and returns its digest.
func replayDigest(t testing.TB, dir string, upTo uint64, defs ...hikoutei.EntityDef) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "replayed.sqlite")
	cp, err := hikoutei.Replay(t.Context(), dir, target, hikoutei.ReplayOptions{UpTo: upTo}, defs...)
	mustT(t, err)
	if cp != upTo {
		t.Fatalf("replay reached %d, want %d", cp, upTo)
	}
	return digest(t, target)
}

// removeReadModel deletes a read model file and its WAL files.
func removeReadModel(path string) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// eventually polls cond until it holds or 20 s pass (a bound, not a sleep
// the test relies on).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// plainProvider leaves the provider's backoff and request timeout at
// their defaults (hikouteitest.NewSheet shortens them).
func plainProvider(c *gsheets.Config) { c.Backoff, c.RequestTimeout = gsheets.Backoff{}, 0 }

// newProvider is a provider for the emulator at url configured as
// hikouteitest.NewSheet's, then tuned.
func newProvider(t testing.TB, url string, tune ...func(*gsheets.Config)) *gsheets.Provider {
	t.Helper()
	cfg := gsheets.Config{Endpoint: url, Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff: gsheets.Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond, Attempts: 3}, RequestTimeout: 5 * time.Second}
	for _, f := range tune {
		f(&cfg)
	}
	prov, err := gsheets.New(ctx, cfg)
	mustT(t, err)
	return prov
}

// serveSheet serves emu over loopback (through wrap, when set) until the
// test ends, with a provider as newProvider's.
func serveSheet(t testing.TB, emu *emulator.Emulator, wrap func(http.Handler) http.Handler, tune ...func(*gsheets.Config)) *hikouteitest.Sheet {
	t.Helper()
	h := emu.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &hikouteitest.Sheet{Emulator: emu, URL: srv.URL, Provider: newProvider(t, srv.URL, tune...)}
}

// restarted is sheet as a restarted process sees it: the same emulated
// spreadsheet through a new provider.
func restarted(t testing.TB, sheet *hikouteitest.Sheet, tune ...func(*gsheets.Config)) *hikouteitest.Sheet {
	return &hikouteitest.Sheet{Emulator: sheet.Emulator, URL: sheet.URL, Provider: newProvider(t, sheet.URL, tune...)}
}

// synced is a store with sync on, driven by hand through the hikouteitest
// harness, against the emulator through the real sheets/v4 client over
// HTTP.
type synced struct {
	*hikoutei.Store
	t     testing.TB
	h     *hikouteitest.Harness
	e     *engine.Engine
	sheet *hikouteitest.Sheet
	emu   *emulator.Emulator
	prov  *gsheets.Provider
	clock *events.ManualClock
	disp  *effects.Dispatcher
	wb    *sheetsio.Workbook
}

// syncOptions are the sync options of the hand-driven stores: the
// sheet's (Manual, fixed cadences), with probes due after 10 s, three
// probes, and an authority that outlives the tests' clock jumps.
func syncOptions(sheet *hikouteitest.Sheet) *hikoutei.SyncOptions {
	so := sheet.SyncOptions()
	so.ProbeDelay, so.MaxProbes, so.AuthorityTTL = 10*time.Second, 3, testLeaseTTL
	return so
}

// openSynced opens a store of airports syncing to a new sheet.
func openSynced(t testing.TB, dir string, tune ...func(*hikoutei.SyncOptions)) *synced {
	t.Helper()
	return openSyncedOn(t, dir, hikouteitest.NewSheet(t), nil, airports, tune...)
}

// openInbound opens a store of defs (nil: parts) syncing to a new sheet.
func openInbound(t testing.TB, dir string, defs []hikoutei.EntityDef, tune ...func(*hikoutei.SyncOptions)) *synced {
	t.Helper()
	if defs == nil {
		defs = parts
	}
	return openSyncedOn(t, dir, hikouteitest.NewSheet(t), nil, defs, tune...)
}

// openSyncedOn opens a store of defs syncing to sheet (syncOptions, then
// tuned) on clock (nil: a new manual clock at t0), and provisions it.
func openSyncedOn(t testing.TB, dir string, sheet *hikouteitest.Sheet, clock *events.ManualClock, defs []hikoutei.EntityDef,
	tune ...func(*hikoutei.SyncOptions)) *synced {
	t.Helper()
	return openSyncedWith(t, dir, sheet, clock, defs, nil, tune...)
}

// openSyncedWith is openSyncedOn with the store's options adjusted by
// opts (nil: none), e.g. to link the embedded NATS server.
func openSyncedWith(t testing.TB, dir string, sheet *hikouteitest.Sheet, clock *events.ManualClock, defs []hikoutei.EntityDef,
	opts func(*hikoutei.Options), tune ...func(*hikoutei.SyncOptions)) *synced {
	t.Helper()
	so := syncOptions(sheet)
	for _, f := range tune {
		f(so)
	}
	if clock == nil {
		clock = events.NewManualClock(t0)
	}
	o := hikoutei.Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, Sync: so, LeaseTTL: testLeaseTTL, Logger: quiet}
	if opts != nil {
		opts(&o)
	}
	s, err := hikoutei.Open(t.Context(), dir, o, defs...)
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	h := hikouteitest.New(t, s)
	e := engine.Of(s)
	disp, _, wb := e.Workers()
	return &synced{Store: s, t: t, h: h, e: e, sheet: sheet, emu: sheet.Emulator, prov: so.Provider.(*gsheets.Provider), clock: clock, disp: disp, wb: wb}
}

// pass runs one dispatcher pass and fails the test on error.
func (x *synced) pass() {
	x.t.Helper()
	if _, err := x.h.Dispatch(ctx); err != nil {
		x.t.Fatalf("pass: %v", err)
	}
}

// drain runs passes until no effect is unsettled, moving the clock a
// minute after a pass that left probes or retries pending.
func (x *synced) drain() {
	x.t.Helper()
	x.h.Drain(ctx, func() {
		if c := x.outbox(); c[aggregates.EffectUncertain] > 0 || c[aggregates.EffectFailed] > 0 {
			x.clock.Advance(time.Minute) // probes and retries become due
		}
	})
}

func (x *synced) outbox() map[aggregates.EffectState]int64 { return x.h.Outbox() }

// unsettled counts the effects that hold their rows.
func (x *synced) unsettled() int64 { return x.h.Unsettled() }

// readModel runs a read-only query of the live read model.
func (x *synced) readModel(fn func(*projector.Projector) error) {
	x.t.Helper()
	mustT(x.t, x.e.ReadModel(fn))
}

// inState lists up to max effects of the sheet in state, oldest first.
func (x *synced) inState(state aggregates.EffectState, max int) []aggregates.Effect {
	x.t.Helper()
	var out []aggregates.Effect
	x.readModel(func(p *projector.Projector) (err error) {
		out, err = p.Due(x.e.Target(), state, time.Time{}, max)
		return err
	})
	return out
}

// fieldState reads an entity's canonical state.
func (x *synced) fieldState(entity, id string) aggregates.EntityState {
	x.t.Helper()
	var st aggregates.EntityState
	x.readModel(func(p *projector.Projector) (err error) { st, err = p.EntityState(entity, id); return err })
	return st
}

// visible is the full-row visible hash of a row, as the read model has it.
func (x *synced) visible(tab, anchor string) string {
	x.t.Helper()
	var hash string
	x.readModel(func(p *projector.Projector) (err error) {
		hash, _, _, _, err = p.Visible(layout.RowBindingID(tab, anchor))
		return err
	})
	return hash
}

// quarantine returns the active evidence reasons of a tab by anchor.
func (x *synced) quarantine(tab string) map[string][]string {
	x.t.Helper()
	out := map[string][]string{}
	x.readModel(func(p *projector.Projector) error {
		q, err := p.ActiveQuarantine(tab)
		for _, r := range q {
			out[r.Anchor] = append(out[r.Anchor], r.Reason)
		}
		return err
	})
	return out
}

func (x *synced) sheetField(tab, anchor, field string) aggregates.SheetField {
	x.t.Helper()
	var f aggregates.SheetField
	x.readModel(func(p *projector.Projector) error {
		m, err := p.SheetFields(layout.RowBindingID(tab, anchor))
		f = m[field]
		return err
	})
	return f
}

func (x *synced) poll() effects.PollResult {
	x.t.Helper()
	r, err := x.h.Poll(ctx)
	if err != nil {
		x.t.Fatalf("poll: %v", err)
	}
	return r
}

func (x *synced) fullScan() effects.PollResult {
	x.t.Helper()
	r, err := x.h.FullScan(ctx)
	if err != nil {
		x.t.Fatalf("full scan: %v", err)
	}
	return r
}

func (x *synced) rows(tab string) [][]string {
	x.t.Helper()
	rows, err := x.sheet.Person().Displayed(tab)
	mustT(x.t, err)
	return rows
}

// rowOf returns the displayed row whose last cell (the anchor) is anchor.
func (x *synced) rowOf(tab, anchor string) []string {
	x.t.Helper()
	var found []string
	rows := x.rows(tab)
	for _, r := range rows[1:] {
		if anchorOf(rows[0], r) == anchor {
			if found != nil {
				x.t.Fatalf("anchor %s appears twice on %s", anchor, tab)
			}
			found = r
		}
	}
	return found
}

// anchorOf is row's anchor cell under header ("" when it has none).
func anchorOf(header, row []string) string {
	i := slices.Index(header, layout.AnchorHeader)
	if i < 0 || i >= len(row) {
		return ""
	}
	return row[i]
}

func (x *synced) cellOf(tab, anchor, column string) string {
	x.t.Helper()
	header := x.rows(tab)[0]
	row := x.rowOf(tab, anchor)
	for i, h := range header {
		if h == column && i < len(row) {
			return row[i]
		}
	}
	return ""
}

// overtypedAndRewritten has a person type typed over column of the row
// anchored at anchor on tab, runs one anti-entropy pass, which must find
// that row drifted and queue its rewrite, and checks that the cell shows
// want once the rewrite is sent.
func (x *synced) overtypedAndRewritten(tab, anchor, column, typed, want string) {
	x.t.Helper()
	mustT(x.t, x.sheet.Person().Type(tab, x.cellRef(tab, anchor, column), typed))
	reps, err := x.disp.AntiEntropy(x.t.Context())
	mustT(x.t, err)
	if r := reps[tab]; r.Drifted != 1 || r.Queued != 1 {
		x.t.Fatalf("the pass after a person typed over %s: %+v, want the row drifted and rewritten", anchor, r)
	}
	x.drain()
	if got := x.cellOf(tab, anchor, column); got != want {
		x.t.Fatalf("%s's %s after the pass: %q, want %q", anchor, column, got, want)
	}
}

// cellRef is the A1 reference of column on the row whose anchor is anchor.
func (x *synced) cellRef(tab, anchor, column string) string {
	x.t.Helper()
	rows := x.rows(tab)
	for i, r := range rows {
		if anchorOf(rows[0], r) == anchor {
			for j, h := range rows[0] {
				if h == column {
					return fmt.Sprintf("%c%d", 'A'+j, i+1)
				}
			}
		}
	}
	x.t.Fatalf("no cell %s/%s/%s", tab, anchor, column)
	return ""
}

// rowNumber is the 1-based sheet row showing anchor on the Input tab.
func (x *synced) rowNumber(anchor string) int {
	x.t.Helper()
	for i, r := range x.rows(partInput) {
		if len(r) > 0 && r[len(r)-1] == anchor {
			return i + 1
		}
	}
	x.t.Fatalf("no row for anchor %s", anchor)
	return 0
}

// typeIn types text (USER_ENTERED, as a person) into column of the Input
// row whose anchor is anchor.
func (x *synced) typeIn(anchor, column, text string) {
	x.t.Helper()
	mustT(x.t, x.sheet.Person().Type(partInput, x.cellRef(partInput, anchor, column), text))
}

func (x *synced) part(id string) *Part {
	x.t.Helper()
	p, err := hikoutei.Get[Part](ctx, x.Store, id)
	mustT(x.t, err)
	return p
}

// eventTypes counts the types of the events appended after seq.
func (x *synced) eventTypes(after uint64) map[events.Type]int {
	x.t.Helper()
	out := map[events.Type]int{}
	mustT(x.t, x.e.Log().ReadFrom(after+1, func(e events.Event) error { out[e.Type()]++; return nil }))
	return out
}

func (x *synced) head() uint64 {
	x.t.Helper()
	h, err := x.e.Log().Head()
	mustT(x.t, err)
	return h
}

// hang makes the next request to the sheet hang until release is closed,
// starts a dispatcher pass and returns once that pass is inside the hung
// request; the pass's outcome arrives on the channel returned.
func (x *synced) hang(release chan struct{}) <-chan error {
	x.t.Helper()
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultHang, Release: release})
	passDone := make(chan error, 1)
	go func() { _, err := x.disp.Pass(context.Background()); passDone <- err }()
	for deadline := time.Now().Add(10 * time.Second); x.emu.PendingFaults() != 0; {
		if time.Now().After(deadline) {
			x.t.Fatal("the dispatcher never reached the hung request")
		}
		select {
		case err := <-passDone:
			x.t.Fatalf("pass ended before hanging: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	return passDone
}

func seedParts(t testing.TB, x *synced, n int) {
	t.Helper()
	u := x.Begin()
	for i := 1; i <= n; i++ {
		mustT(t, u.Persist(&Part{ID: strconv.Itoa(i), Name: "part " + strconv.Itoa(i), SKU: fmt.Sprintf("%05d", i), Qty: int64(i)}))
	}
	_, err := u.Commit(ctx)
	mustT(t, err)
	x.drain()
}

func hasReason(reasons []string, want string) bool {
	for _, r := range reasons {
		if r == want {
			return true
		}
	}
	return false
}
