package effects_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// rowKey matches the keys of the rows the parallel test writes; each key
// names one row of one tab (the entities show no Input tab).
var rowKey = regexp.MustCompile(`row-E\d-\d{3}`)

// writeLog is the emulator's request log as the parallel test reads it:
// which rows each batchUpdate in flight carries (from its body), and, in
// the order accesses took effect (the emulator's Observer), the values
// each row showed.
type writeLog struct {
	mu        sync.Mutex
	inFlight  map[string]int // row key → batchUpdates carrying it now
	now, most int            // batchUpdates in flight now, and at most
	sameRow   []string       // rows two batchUpdates carried at once
	shown     map[string]int // row key → the last version the row showed
	reordered []string       // rows that went back to an older version
	observed  int
	paired    chan struct{} // closed once two batchUpdates were in flight together
	holds     int           // batchUpdates held waiting for a second one
}

func newWriteLog() *writeLog {
	return &writeLog{inFlight: map[string]int{}, shown: map[string]int{}, paired: make(chan struct{})}
}

// wrap logs every spreadsheets.batchUpdate while it is in flight.
func (l *writeLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, ":batchUpdate") || strings.Contains(r.URL.Path, "/values") {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		keys := uniq(rowKey.FindAllString(string(body), -1))
		hold := l.enter(keys)
		defer l.leave(keys)
		if hold { // the first few wait (bounded) for a second batchUpdate, so lanes sent together overlap here
			select {
			case <-l.paired:
			case <-time.After(2 * time.Second):
			}
		}
		h.ServeHTTP(w, r)
	})
}

// enter logs a batchUpdate arriving and says whether it waits for a
// second one.
func (l *writeLog) enter(keys []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now++
	if l.now == 2 && l.most < 2 {
		close(l.paired)
	}
	l.most = max(l.most, l.now)
	for _, k := range keys {
		if l.inFlight[k] > 0 {
			l.sameRow = append(l.sameRow, k)
		}
		l.inFlight[k]++
	}
	hold := l.most < 2 && l.holds < 3
	if hold {
		l.holds++
	}
	return hold
}

func (l *writeLog) leave(keys []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now--
	for _, k := range keys {
		l.inFlight[k]--
	}
}

// observe reads each API access's changed rows, in effect order: a row's
// name cell is "v<version>", and its versions must never go back.
func (l *writeLog) observe(a emulator.Access) {
	if a.Person {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ch := range a.Changed {
		for _, row := range ch.After {
			if len(row) < 2 || !rowKey.MatchString(row[0]) {
				continue
			}
			l.observed++
			v, _ := strconv.Atoi(strings.TrimPrefix(row[1], "v"))
			if v < l.shown[row[0]] {
				l.reordered = append(l.reordered, fmt.Sprintf("%s: v%d after v%d", row[0], v, l.shown[row[0]]))
			}
			l.shown[row[0]] = max(l.shown[row[0]], v)
		}
	}
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// The parallel dispatcher sends the tabs of a pass in lanes at once, yet
// the emulator's request log shows no row carried by two batchUpdates in
// flight together and no row going back to an older version (I07), while
// rows change again and again as the lanes run.
func TestI07_ParallelLanesNeverShareARowNorReorderItsEffects(t *testing.T) {
	runParallelLanes(t)
}

// With a pool of two service accounts the lanes' requests go out on both
// accounts, and still no row is carried by two batchUpdates at once nor
// goes back to an older version (I07): lanes are decided by the
// dispatcher, never by the account.
func TestI07_ParallelLanesOverTwoAccountsNeverShareARowNorReorderItsEffects(t *testing.T) {
	emu := runParallelLanes(t, pooled(poolTokens...))
	for _, tok := range poolTokens {
		if c := emu.CallerCounters(tok); c.Writes < 2 {
			t.Fatalf("an account sent %d writes: the lanes did not go out over both accounts", c.Writes)
		}
	}
}

// runParallelLanes is the I07 check of parallel lanes, with the
// provider's configuration tuned by tune; it returns the emulator.
func runParallelLanes(t *testing.T, tune ...func(*gsheets.Config)) *emulator.Emulator {
	const entities, rows, rounds, maxBatch = 6, 12, 5, 48
	log := newWriteLog()
	emu := emulator.New(emulator.Options{AutoCreate: true, Observe: log.observe, Latency: emulator.Latency{PerRequest: 2 * time.Millisecond}})
	srv := httptest.NewServer(log.wrap(emu.Handler()))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := events.NewManualClock(t0)
	cfg := gsheets.Config{Endpoint: srv.URL, Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1},
		RequestTimeout: 10 * time.Second, Now: clock.Now}
	for _, f := range tune {
		f(&cfg)
	}
	prov, err := gsheets.New(ctx, cfg)
	must(t, err)
	var defs []layout.Entity
	for e := range entities {
		defs = append(defs, layout.Entity{Name: "E" + strconv.Itoa(e), Fields: []layout.Field{{Name: "id", Kind: cell.String, Key: true},
			{Name: "name", Kind: cell.String}}})
	}
	schema, err := layout.NewSchema(defs...)
	must(t, err)
	wb, err := prov.Provision(ctx, sheetID, schema)
	must(t, err)
	ob := effects.NewMemOutbox(effects.MemOutboxConfig{Clock: clock, Fence: testFence, Schema: schema})
	disp, err := effects.NewDispatcher(effects.Config{Spreadsheet: "sheets", Provider: prov, Workbook: wb, Outbox: ob, Clock: clock,
		Logger: slog.New(slog.DiscardHandler), MaxBatch: maxBatch, Workers: 4, LaneLoad: 1, AuthorityTTL: testTTL})
	must(t, err)
	must(t, disp.ClaimAuthority(ctx))
	commitRound := func(v int) {
		for e := range entities {
			for i := range rows {
				_, err := ob.Commit("E"+strconv.Itoa(e), fmt.Sprintf("row-E%d-%03d", e, i), map[string]any{"name": "v" + strconv.Itoa(v)})
				must(t, err)
			}
		}
	}
	commitRound(1)
	done := make(chan error, 1)
	go func() { done <- disp.Run(ctx) }()
	settled := func() bool {
		for _, fx := range ob.Effects() {
			if !fx.State.Settled() {
				return false
			}
		}
		return true
	}
	round := 1
	deadline := time.After(60 * time.Second)
	for round < rounds || !settled() {
		n, changed := clock.Waiters()
		if n < 2 { // both loops wait on the clock only once the pass loop found nothing to claim
			select {
			case <-changed:
			case err := <-done:
				t.Fatalf("run stopped: %v", err)
			case <-deadline:
				log.mu.Lock()
				defer log.mu.Unlock()
				t.Fatalf("not converged after round %d; rows carried by two batchUpdates at once: %v; reordered: %v", round, log.sameRow, log.reordered)
			}
			continue
		}
		if round < rounds {
			round++
			commitRound(round) // while earlier rounds may still be in flight
		}
		clock.Advance(time.Second)
	}
	cancel()
	must(t, <-done)
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.sameRow) > 0 {
		t.Fatalf("rows carried by two batchUpdates in flight at once: %v", log.sameRow)
	}
	if len(log.reordered) > 0 {
		t.Fatalf("rows whose effects landed out of order: %v", log.reordered)
	}
	if log.most < 2 {
		t.Fatalf("at most %d batchUpdate in flight: the lanes did not run in parallel", log.most)
	}
	for e := range entities {
		for i := range rows {
			if k := fmt.Sprintf("row-E%d-%03d", e, i); log.shown[k] != rounds {
				t.Fatalf("%s shows v%d, want v%d", k, log.shown[k], rounds)
			}
		}
	}
	t.Logf("%d row states observed, at most %d batchUpdates in flight, %d dispatches", log.observed, log.most, disp.C.Dispatches.Load())
	return emu
}

// laneRig is a dispatcher of entities tabs (E0, E1, …) sending through
// a gsheets provider (as client shows it to the dispatcher) to an
// emulator, in as many lanes as tabs, its authority claimed.
type laneRig struct {
	emu      *emulator.Emulator
	ob       *effects.MemOutbox
	disp     *effects.Dispatcher
	entities int
}

func newLaneRig(t *testing.T, entities int, client func(*gsheets.Provider) sheetsio.Client) *laneRig {
	t.Helper()
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	ctx := context.Background()
	clock := events.NewManualClock(t0)
	prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: srv.URL, Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1},
		RequestTimeout: 10 * time.Second, Now: clock.Now})
	must(t, err)
	var defs []layout.Entity
	for e := range entities {
		defs = append(defs, layout.Entity{Name: "E" + strconv.Itoa(e), Fields: []layout.Field{{Name: "id", Kind: cell.String, Key: true},
			{Name: "name", Kind: cell.String}}})
	}
	schema, err := layout.NewSchema(defs...)
	must(t, err)
	wb, err := prov.Provision(ctx, sheetID, schema)
	must(t, err)
	ob := effects.NewMemOutbox(effects.MemOutboxConfig{Clock: clock, Fence: testFence, Schema: schema})
	disp, err := effects.NewDispatcher(effects.Config{Spreadsheet: "sheets", Provider: client(prov), Workbook: wb, Outbox: ob, Clock: clock,
		Logger: slog.New(slog.DiscardHandler), Workers: entities, LaneLoad: 1, AuthorityTTL: testTTL})
	must(t, err)
	must(t, disp.ClaimAuthority(ctx))
	return &laneRig{emu: emu, ob: ob, disp: disp, entities: entities}
}

// commitAll commits rows rows of every tab with the name v.
func (r *laneRig) commitAll(t *testing.T, rows int, v string) {
	t.Helper()
	for e := range r.entities {
		for i := range rows {
			_, err := r.ob.Commit("E"+strconv.Itoa(e), fmt.Sprintf("row-E%d-%03d", e, i), map[string]any{"name": v})
			must(t, err)
		}
	}
}

// A pass that goes out in several lanes reads once: the preflight ranges
// of every lane go out in one read request (sheetsio.LaneDispatcher), and
// each lane still sends its own batchUpdate.
func TestParallelLanesShareOnePreflightRead(t *testing.T) {
	const entities, rows = 4, 3
	r := newLaneRig(t, entities, func(p *gsheets.Provider) sheetsio.Client { return p })
	ctx := context.Background()
	r.commitAll(t, rows, "v1")
	_, err := r.disp.Pass(ctx) // the appends
	must(t, err)
	r.commitAll(t, rows, "v2")
	before, dispatches := r.emu.Counters(sheetID), r.disp.C.Dispatches.Load()
	_, err = r.disp.Pass(ctx) // the updates: each needs the preflight
	must(t, err)
	after := r.emu.Counters(sheetID)
	lanes := r.disp.C.Dispatches.Load() - dispatches
	if lanes != entities {
		t.Fatalf("the pass went out in %d lanes, want %d", lanes, entities)
	}
	if reads, writes := after.Reads-before.Reads, after.Writes-before.Writes; reads != 1 || writes != entities {
		t.Fatalf("a pass of %d lanes cost %d reads and %d writes, want 1 and %d", lanes, reads, writes, entities)
	}
	for _, fx := range r.ob.Effects() {
		if fx.State != aggregates.EffectApplied {
			t.Fatalf("effect %s is %v, want applied", fx.ID, fx.State)
		}
	}
}

// opSpy is a gsheets provider that notes the receipts of the ops its
// capacity gate (FansOut) saw and of those its lanes sent.
type opSpy struct {
	*gsheets.Provider
	mu          sync.Mutex
	gated, sent []*sheetsio.Receipt
}

func (s *opSpy) FansOut(w *sheetsio.Workbook, b sheetsio.Batch) bool {
	s.mu.Lock()
	for _, op := range b.Ops {
		s.gated = append(s.gated, op.Receipt)
	}
	s.mu.Unlock()
	return s.Provider.FansOut(w, b)
}

func (s *opSpy) DispatchLanes(ctx context.Context, w *sheetsio.Workbook, lanes []sheetsio.Batch) []sheetsio.LaneResult {
	s.mu.Lock()
	for _, b := range lanes {
		for _, op := range b.Ops {
			s.sent = append(s.sent, op.Receipt)
		}
	}
	s.mu.Unlock()
	return s.Provider.DispatchLanes(ctx, w, lanes)
}

// A pass that fans out builds each effect's op once: the lanes send the
// very ops the capacity gate checked, not copies built again.
func TestParallelLanesSendTheOpsTheCapacityGateChecked(t *testing.T) {
	const entities, rows = 3, 2
	var spy *opSpy
	r := newLaneRig(t, entities, func(p *gsheets.Provider) sheetsio.Client { spy = &opSpy{Provider: p}; return spy })
	r.commitAll(t, rows, "v1")
	_, err := r.disp.Pass(context.Background())
	must(t, err)
	if len(spy.gated) != entities*rows || len(spy.sent) != entities*rows {
		t.Fatalf("the gate saw %d ops and the lanes sent %d, want %d each", len(spy.gated), len(spy.sent), entities*rows)
	}
	checked := map[*sheetsio.Receipt]bool{}
	for _, rc := range spy.gated {
		checked[rc] = true
	}
	for _, rc := range spy.sent {
		if !checked[rc] {
			t.Fatalf("the lanes sent the op of %s built again, not the one the gate checked", rc.EffectID)
		}
	}
}
