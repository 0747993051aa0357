package effects_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
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

// These tests drive the real Dispatcher through the real provider (the
// sheets/v4 client over HTTP) against the emulator, with MemOutbox as the
// store and a manual clock.

const sheetID = "sheet-under-test"

// testTTL outlives every clock jump of these tests.
const testTTL = 1000 * time.Hour

func airportLayout() layout.Entity {
	return layout.Entity{Name: "Airport", Fields: []layout.Field{{Name: "id", Kind: cell.String, Key: true},
		{Name: "name", Kind: cell.String}, {Name: "altitude", Kind: cell.Int}, {Name: "notes", Kind: cell.String, Editable: true}}}
}

func airport(name string, altitude int64) map[string]any {
	return map[string]any{"name": name, "altitude": altitude, "notes": nil}
}

type rig struct {
	t     *testing.T
	emu   *emulator.Emulator
	prov  *gsheets.Provider
	wb    *sheetsio.Workbook
	clock *events.ManualClock
	ob    *effects.MemOutbox
	disp  *effects.Dispatcher
}

func newRig(t *testing.T, tune ...func(*effects.Config)) *rig {
	t.Helper()
	ctx := context.Background()
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	clock := events.NewManualClock(t0)
	prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: srv.URL, Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff: gsheets.Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond, Attempts: 3}, RequestTimeout: 5 * time.Second, Now: clock.Now})
	must(t, err)
	schema, err := layout.NewSchema(airportLayout())
	must(t, err)
	wb, err := prov.Provision(ctx, sheetID, schema)
	must(t, err)
	ob := effects.NewMemOutbox(effects.MemOutboxConfig{Clock: clock, Fence: testFence, Schema: schema})
	cfg := effects.Config{Spreadsheet: "sheets", Provider: prov, Workbook: wb, Outbox: ob, Clock: clock,
		Logger: slog.New(slog.DiscardHandler), ProbeDelay: 10 * time.Second, MaxProbes: 3, AuthorityTTL: testTTL,
		Workers: 1} // one batch a pass: a scripted fault meets every effect of the pass (parallel_test.go runs lanes)
	for _, f := range tune {
		f(&cfg)
	}
	disp, err := effects.NewDispatcher(cfg)
	must(t, err)
	must(t, disp.ClaimAuthority(ctx)) // as the engine's Provision does before the first write
	return &rig{t: t, emu: emu, prov: prov, wb: wb, clock: clock, ob: ob, disp: disp}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) commit(id string, values map[string]any) []string {
	r.t.Helper()
	ids, err := r.ob.Commit("Airport", id, values)
	must(r.t, err)
	return ids
}

func (r *rig) pass() {
	r.t.Helper()
	if _, err := r.disp.Pass(context.Background()); err != nil {
		r.t.Fatalf("pass: %v", err)
	}
}

// counts is the number of effects in each state.
func (r *rig) counts() map[aggregates.EffectState]int {
	c := map[aggregates.EffectState]int{}
	for _, fx := range r.ob.Effects() {
		c[fx.State]++
	}
	return c
}

// runUntilApplied runs the dispatcher's Run loop until want effects are
// applied, advancing the clock only while both of its loops (passes,
// reconciliation) wait on it: the pass loop is then idle, with nothing
// claimable now. It fails the test when the loop stops or nothing
// converges within 30 s.
func (r *rig) runUntilApplied(t *testing.T, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.disp.Run(ctx) }()
	deadline := time.After(30 * time.Second)
	for r.counts()[aggregates.EffectApplied] < want {
		n, changed := r.clock.Waiters()
		if n < 2 {
			select {
			case <-changed:
			case err := <-done:
				t.Fatalf("run stopped: %v (outbox %v)", err, r.counts())
			case <-deadline:
				t.Fatalf("not converged: %v", r.counts())
			}
			continue
		}
		if r.counts()[aggregates.EffectApplied] >= want {
			break
		}
		r.clock.Advance(time.Second)
	}
	cancel()
	must(t, <-done)
}

func (r *rig) rows(tab string) [][]string {
	r.t.Helper()
	rows, err := r.emu.Person(sheetID).Displayed(tab)
	must(r.t, err)
	return rows
}

// rowOf returns the displayed row whose anchor (last cell) is anchor.
func (r *rig) rowOf(tab, anchor string) []string {
	r.t.Helper()
	var found []string
	for _, row := range r.rows(tab)[1:] {
		if len(row) > 0 && row[len(row)-1] == anchor {
			if found != nil {
				r.t.Fatalf("anchor %s shows twice on %s", anchor, tab)
			}
			found = row
		}
	}
	return found
}

func (r *rig) cellOf(tab, anchor, column string) string {
	r.t.Helper()
	header, row := r.rows(tab)[0], r.rowOf(tab, anchor)
	for i, h := range header {
		if h == column && i < len(row) {
			return row[i]
		}
	}
	return ""
}

// cellRef is the A1 reference of column on the row showing anchor.
func (r *rig) cellRef(tab, anchor, column string) string {
	r.t.Helper()
	rows := r.rows(tab)
	for i, row := range rows {
		if len(row) > 0 && row[len(row)-1] == anchor {
			for j, h := range rows[0] {
				if h == column {
					return fmt.Sprintf("%c%d", 'A'+j, i+1)
				}
			}
		}
	}
	r.t.Fatalf("no cell %s/%s/%s", tab, anchor, column)
	return ""
}

// eventsSince returns the outbox's events after the first n.
func (r *rig) eventsSince(n int) []events.Event { return r.ob.Events()[n:] }

func TestI04_DisplacedWriterAbortsBeforeAnyRemoteCall(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.commit("11", airport("Eleven", 1))
	r.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	r.pass() // both rows of 11 are now delivery_uncertain…
	r.clock.Advance(time.Minute)
	r.commit("12", airport("Twelve", 2))
	claimed, err := r.ob.Claim("sheets", 10) // …the old owner holds claims…
	must(t, err)
	if len(claimed) != 2 {
		t.Fatalf("claimed %d", len(claimed))
	}
	r.ob.Displace() // …and another writer takes the store over, with probes due
	r.emu.ResetCounters()
	if _, err := r.disp.Pass(ctx); !errors.Is(err, effects.ErrDisplaced) {
		t.Fatalf("pass of a displaced writer: %v", err)
	}
	if err := r.disp.Run(ctx); !errors.Is(err, effects.ErrDisplaced) {
		t.Fatalf("run of a displaced writer: %v", err)
	}
	if c := r.emu.Counters(sheetID); c.Reads+c.Writes != 0 {
		t.Fatalf("a displaced writer made %d reads and %d writes", c.Reads, c.Writes)
	}
	settle := []effects.Settlement{{ID: claimed[0].ID, ClaimToken: claimed[0].ClaimToken,
		Outcome: aggregates.Outcome{Kind: aggregates.OutcomeApplied, WrittenHash: "h", Via: "dispatch"}}}
	if err := r.ob.Settle(settle); !errors.Is(err, events.ErrStaleWriterFence) {
		t.Fatalf("post-ack bookkeeping of the displaced writer: %v", err)
	}
	if c := r.counts(); c[aggregates.EffectProcessing] != 2 || c[aggregates.EffectUncertain] != 2 {
		t.Fatalf("outbox %v: the new owner must find the claims as they were", c)
	}
}

func TestI05_OlderEpochThanTheSheetsAuthorityStopsTheWorker(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	f := r.ob.Fence()
	f.Epoch += 5
	must(t, r.prov.WriteAuthority(ctx, r.wb, f))
	// A dispatcher that has not seen the authority yet (a new run) reads it first.
	disp, err := effects.NewDispatcher(effects.Config{Spreadsheet: "sheets", Provider: r.prov, Workbook: r.wb, Outbox: r.ob,
		Clock: r.clock, Logger: slog.New(slog.DiscardHandler), AuthorityTTL: testTTL})
	must(t, err)
	r.commit("12", airport("Twelve", 2))
	r.emu.ResetCounters()
	if _, err := disp.Pass(ctx); !errors.Is(err, effects.ErrDivergence) {
		t.Fatalf("dispatch under a newer authority: %v", err)
	}
	// The running dispatcher, which owned the authority, stops as well once
	// it checks again.
	r.clock.Advance(testTTL)
	if _, err := r.disp.Pass(ctx); !errors.Is(err, effects.ErrDivergence) {
		t.Fatalf("dispatch of the former owner under a newer authority: %v", err)
	}
	if c := r.emu.Counters(sheetID); c.Writes != 0 || r.rowOf("Airport_System", "12") != nil {
		t.Fatalf("%d writes under a newer authority", c.Writes)
	}
	var reasons []string
	for _, e := range r.ob.Events() {
		if d, ok := e.Payload.(events.SyncDiverged); ok && d.Target == "sheets" {
			reasons = append(reasons, d.Reason)
		}
	}
	if len(reasons) != 2 || !strings.Contains(reasons[0], fmt.Sprint("epoch ", f.Epoch)) {
		t.Fatalf("divergence records %q", reasons)
	}
	if c := r.counts(); c[aggregates.EffectPending] != 2 {
		t.Fatalf("outbox %v: nothing may be claimed under a newer authority", c)
	}
}

// The Run loop settles a full batch in the background while it sends the
// next one, and claims the next batch while one is in flight. Claims skip
// rows with an unsettled effect (I07), so the append and the later update
// of each row still land in order.
func TestI07_PipelinedRunLoopKeepsPerRowOrder(t *testing.T) {
	r := newRig(t, func(c *effects.Config) { c.MaxBatch = 16 })
	// Each Input row's update is queued right behind its append, so a
	// batch in queue order would carry both if claims ignored the order
	// (Input rows never coalesce, I32; the System update merges into its
	// pending append).
	for i := range 100 {
		r.commit(strconv.Itoa(i), airport("first", int64(i)))
		second := airport("second "+strconv.Itoa(i), int64(i))
		second["notes"] = "note " + strconv.Itoa(i)
		r.commit(strconv.Itoa(i), second)
	}
	r.runUntilApplied(t, 300)
	if c := r.counts(); len(c) != 1 {
		t.Fatalf("outbox %v, want 300 applied (100 System appends, 100 Input appends, 100 Input updates)", c)
	}
	if rows := r.rows("Airport_System"); len(rows) != 101 {
		t.Fatalf("%d rows, want header + 100", len(rows))
	}
	for i := range 100 {
		if got := r.cellOf("Airport_System", strconv.Itoa(i), "name"); got != "second "+strconv.Itoa(i) {
			t.Fatalf("row %d shows %q", i, got)
		}
		if got := r.cellOf("Airport_Input", strconv.Itoa(i), "notes"); got != "note "+strconv.Itoa(i) {
			t.Fatalf("Input row %d shows %q", i, got)
		}
	}
	if r.disp.C.Dispatches.Load() < 300/16 {
		t.Fatalf("%d dispatches for 300 effects in batches of 16", r.disp.C.Dispatches.Load())
	}
}

func TestI08_AWriteAppliedThenLostIsSettledByADueProbeFromItsReceipt(t *testing.T) {
	for _, kind := range []emulator.FaultKind{emulator.FaultApplyThen503, emulator.FaultApplyThenDrop} {
		t.Run(string(kind), func(t *testing.T) {
			r := newRig(t)
			r.commit("12", airport("Twelve", 12))
			r.emu.ScriptFaults(emulator.Fault{Kind: kind, Match: emulator.MatchWrites})
			r.pass()
			if c := r.counts(); c[aggregates.EffectUncertain] != 2 {
				t.Fatalf("after %s: %v", kind, c)
			}
			r.clock.Advance(9 * time.Second)
			r.pass() // the probe is not due: nothing is probed or redone
			if c := r.counts(); c[aggregates.EffectUncertain] != 2 || r.disp.C.Probes.Load() != 0 {
				t.Fatalf("an undue probe ran: %v, %d probes", c, r.disp.C.Probes.Load())
			}
			r.clock.Advance(time.Second)
			mark := len(r.ob.Events())
			r.pass()
			if c := r.counts(); c[aggregates.EffectApplied] != 2 || r.disp.C.Probes.Load() != 2 {
				t.Fatalf("after the due probe: %v, %d probes", c, r.disp.C.Probes.Load())
			}
			for _, e := range r.eventsSince(mark) {
				if a, ok := e.Payload.(events.EffectApplied); ok && (a.Via != "probe" || a.WrittenHash == "") {
					t.Fatalf("settled %+v, want from the receipt", a)
				}
			}
			if n := len(r.rows("Airport_System")); n != 2 || r.rowOf("Airport_System", "12") == nil {
				t.Fatalf("system tab has %d rows", n)
			}
		})
	}
}

func TestI08_AProbeThatCannotReadIsRescheduledThenTimesOut(t *testing.T) {
	r := newRig(t)
	r.commit("12", airport("Twelve", 12))
	r.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	r.pass()
	for round := 1; round <= 3; round++ { // every probe's read fails: the question stays open
		for range 6 {
			r.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault503, Match: emulator.MatchReads})
		}
		r.clock.Advance(time.Hour)
		if _, err := r.disp.Pass(context.Background()); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, fx := range r.ob.Effects() {
			switch {
			case round < 3 && (fx.State != aggregates.EffectUncertain || fx.Probes != int64(round)):
				t.Fatalf("round %d: %s is %s after %d probes", round, fx.ID, fx.State, fx.Probes)
			case round == 3 && (fx.State != aggregates.EffectFailed || !fx.Terminal || fx.LastCode != aggregates.TerminalUncertainTimeout):
				t.Fatalf("after bounded probing: %+v", fx)
			}
		}
	}
	if got := r.disp.C.Probes.Load(); got != 6 {
		t.Fatalf("%d probes, want 2 effects × MaxProbes 3", got)
	}
	// Reconciliation supersedes the timed-out heads; their corrections
	// recognise the rows the lost write did land.
	r.emu.ClearFaults()
	if n, err := r.disp.Reconcile(context.Background()); err != nil || n != 2 {
		t.Fatalf("reconcile: %d, %v", n, err)
	}
	r.pass()
	if c := r.counts(); c[aggregates.EffectApplied] != 2 || c[aggregates.EffectSuperseded] != 2 || len(c) != 2 {
		t.Fatalf("outbox %v", c)
	}
	if n := len(r.rows("Airport_System")); n != 2 {
		t.Fatalf("system tab has %d rows, want header + 1", n)
	}
}

func TestI09_SameEffectIDWithAnotherPayloadFailsClosed(t *testing.T) {
	r := newRig(t)
	r.commit("12", airport("Twelve", 12))
	r.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	r.pass()
	// The receipt of the System row's effect now names another payload.
	spec, _ := r.wb.Schema().Tab(layout.ReceiptsTab)
	col := spec.ColumnIndex(layout.ReceiptEntries)
	binding := layout.RowBindingID("Airport_System", "12")
	id := aggregates.EffectID(binding, 1)
	tampered := 0
	for i, row := range r.rows(layout.ReceiptsTab)[1:] {
		entries, err := sheetsio.ParseReceiptEntries(row[col])
		must(t, err)
		for j := range entries {
			if entries[j].EffectID == id {
				entries[j].PayloadHash = "xxh64:0000000000000000"
				tampered++
			}
		}
		must(t, r.emu.Person(sheetID).Type(layout.ReceiptsTab, fmt.Sprintf("%c%d", 'A'+col, i+2), sheetsio.FormatReceiptEntries(entries)))
	}
	if tampered != 1 {
		t.Fatalf("tampered %d receipt entries", tampered)
	}
	r.clock.Advance(time.Minute)
	r.pass()
	var failed []aggregates.Effect
	for _, fx := range r.ob.Effects() {
		if fx.State == aggregates.EffectFailed {
			failed = append(failed, fx)
		}
	}
	if len(failed) != 1 || !failed[0].Terminal || failed[0].LastCode != aggregates.ErrEffectPayloadMismatch.Error() ||
		failed[0].Target.Binding != binding {
		t.Fatalf("failed %+v (outbox %v)", failed, r.counts())
	}
	if c := r.counts(); c[aggregates.EffectApplied] != 1 {
		t.Fatalf("outbox %v: the Input row's receipt matches and settles it", c)
	}
}

// TestI08_ReceiptsOfAnEarlierBuildCertify: receipt rows an earlier build
// wrote (every entry a line of six fields, tab and binding included) still
// settle the effects they list as applied, and one naming another row is
// still no evidence (receipt_target_mismatch).
func TestI08_ReceiptsOfAnEarlierBuildCertify(t *testing.T) {
	r := newRig(t)
	r.commit("12", airport("Twelve", 12))
	r.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	r.pass()
	targets := map[string]aggregates.Target{}
	for _, fx := range r.ob.Effects() {
		targets[fx.ID] = fx.Target
	}
	input := layout.RowBindingID("Airport_Input", "12")
	spec, _ := r.wb.Schema().Tab(layout.ReceiptsTab)
	col := spec.ColumnIndex(layout.ReceiptEntries)
	var lines []string
	for i, row := range r.rows(layout.ReceiptsTab)[1:] {
		entries, err := sheetsio.ParseReceiptEntries(row[col])
		must(t, err)
		var old []string
		for _, e := range entries {
			if !e.Packed() {
				t.Fatalf("entry %+v of the engine's shapes was not packed", e)
			}
			e.Tab, e.Binding = targets[e.EffectID].Tab, targets[e.EffectID].Binding
			if e.Binding == input {
				e.Binding = layout.RowBindingID("Airport_Input", "13") // names another row
			}
			old = append(old, e.Line())
		}
		lines = append(lines, old...)
		must(t, r.emu.Person(sheetID).Type(layout.ReceiptsTab, fmt.Sprintf("%c%d", 'A'+col, i+2), strings.Join(old, "\n")))
	}
	if len(lines) != 2 {
		t.Fatalf("%d receipt entries, want 2", len(lines))
	}
	r.clock.Advance(time.Minute)
	r.pass()
	for _, fx := range r.ob.Effects() {
		want := aggregates.EffectApplied
		if fx.Target.Binding == input {
			want = aggregates.EffectFailed
		}
		if fx.State != want || want == aggregates.EffectFailed && fx.LastCode != "receipt_target_mismatch" {
			t.Fatalf("effect on %s: %s %q, want %s", fx.Target.Tab, fx.State, fx.LastCode, want)
		}
	}
}

func TestI10_TerminalHeadIsSupersededByACorrectionThatRewritesTheRow(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.commit("7", airport("Bolt", 5))
	r.pass()
	if c := r.counts(); c[aggregates.EffectApplied] != 2 {
		t.Fatalf("outbox %v", c)
	}
	// Someone overwrites the system-owned row: the next update's guard fails.
	must(t, r.emu.Person(sheetID).Type("Airport_System", r.cellRef("Airport_System", "7", "name"), "Vandalised"))
	r.commit("7", airport("Bolt", 6))
	r.pass()
	var head aggregates.Effect
	for _, fx := range r.ob.Effects() {
		if fx.State == aggregates.EffectFailed {
			head = fx
		}
	}
	if !head.Terminal || head.LastCode != "row_hash_mismatch" || head.ObservedHash == "" {
		t.Fatalf("after the guard failure: %+v (outbox %v)", head, r.counts())
	}
	if r.cellOf("Airport_System", "7", "name") != "Vandalised" {
		t.Fatal("the guarded update overwrote a row it had not seen")
	}
	r.pass() // the terminal head is never claimed again
	if got, _ := r.ob.Effect(head.ID); got.State != aggregates.EffectFailed || got.Attempts != head.Attempts {
		t.Fatalf("terminal head after a pass: %+v", got)
	}
	mark := len(r.ob.Events())
	if n, err := r.disp.Reconcile(ctx); err != nil || n != 1 {
		t.Fatalf("reconcile superseded %d: %v", n, err)
	}
	var superseded, queued events.Event
	for _, e := range r.eventsSince(mark) {
		switch e.Payload.(type) {
		case events.EffectSuperseded:
			superseded = e
		case events.EffectQueued:
			queued = e
		}
	}
	s, q := superseded.Payload.(events.EffectSuperseded), queued.Payload.(events.EffectQueued)
	if superseded.Commit == "" || superseded.Commit != queued.Commit || s.By != q.EffectID || s.EffectID != head.ID ||
		q.ExpectedHash != head.ObservedHash {
		t.Fatalf("supersede %+v and correction %+v are not one fenced commit", superseded, queued)
	}
	r.pass()
	if r.cellOf("Airport_System", "7", "name") != "Bolt" || r.cellOf("Airport_System", "7", "altitude") != "6" {
		t.Fatalf("the correction did not restore canonical state: %v", r.rowOf("Airport_System", "7"))
	}
	if c := r.counts(); c[aggregates.EffectApplied] != 3 || c[aggregates.EffectSuperseded] != 1 || len(c) != 2 {
		t.Fatalf("outbox %v", c)
	}
}

func TestI10_RecoverableFailureStaysOnTheRetryPathAndIsNeverSuperseded(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.commit("7", airport("Bolt", 5))
	for range 8 {
		r.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads})
	}
	r.clock.Advance(gsheets.DefaultTrustTTL) // past the trust window the first appends read first (no blind append)
	if _, err := r.disp.Pass(ctx); err == nil {
		t.Fatal("a pass whose reads all fail reported success")
	}
	for _, fx := range r.ob.Effects() {
		if fx.State != aggregates.EffectFailed || fx.Terminal {
			t.Fatalf("after a read failure: %+v", fx)
		}
	}
	r.emu.ClearFaults() // the reconciliation's own reads (anti-entropy) succeed
	if n, err := r.disp.Reconcile(ctx); err != nil || n != 0 {
		t.Fatalf("reconcile superseded %d recoverable heads (%v)", n, err)
	}
	r.clock.Advance(time.Minute) // the retry is due
	r.pass()
	if c := r.counts(); c[aggregates.EffectApplied] != 2 || len(c) != 1 {
		t.Fatalf("outbox %v", c)
	}
}
