package engine_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// End-to-end tests of the outbox path through the engine: commits queue
// effects, the dispatcher claims, sends and settles them against the
// emulator. The rules themselves (I04–I10) are tested beside their code in
// aggregates and effects; these check that the engine wires them up.

func TestSyncBackfillMaterialisesSystemAndInputRows(t *testing.T) {
	t.Parallel()
	x := openSynced(t, t.TempDir())
	loadAirports(t, x.Store, 60)
	x.drain()
	sys := x.rows("Airport_System")
	if len(sys) != 61 || sys[0][0] != "id" || sys[0][len(sys[0])-1] != layout.AnchorHeader {
		t.Fatalf("system tab has %d rows, header %v", len(sys), sys[0])
	}
	if got := x.cellOf("Airport_System", "1", "name"); got != "Goroka Airport" {
		t.Fatalf("row 1 name %q", got)
	}
	if in := x.rows("Airport_Input"); len(in) != 61 || strings.Join(in[0], ",") != "id,notes,"+layout.AnchorHeader {
		t.Fatalf("input tab %d rows, header %v", len(in), in[0])
	}
	if c := x.outbox(); c[aggregates.EffectApplied] != 120 {
		t.Fatalf("outbox %v", c)
	}
}

func TestClaimsAreOrderedPerRowThroughTheEngine(t *testing.T) {
	x := openSynced(t, t.TempDir())
	a := &Airport{ID: "7", Name: "Bolt", Altitude: 5}
	commit(t, x.Store, a)
	a.Name = "Bolt M6"
	commit(t, x.Store, a)
	claimed, err := x.e.Claim(x.e.Target(), 100)
	mustT(t, err)
	ops := map[string]int{}
	for _, c := range claimed {
		ops[c.Target.Tab+"/"+string(c.Op)]++
	}
	if ops["Airport_System/append"] != 1 || ops["Airport_System/update"] != 0 {
		t.Fatalf("claimed %v: the update was claimable before the append settled", ops)
	}
	again, err := x.e.Claim(x.e.Target(), 100)
	mustT(t, err)
	if len(again) != 0 {
		t.Fatalf("claimed %d more while heads are processing", len(again))
	}
	settle := make([]effects.Settlement, len(claimed))
	for i, c := range claimed {
		settle[i] = effects.Settlement{ID: c.ID, ClaimToken: c.ClaimToken, Outcome: aggregates.Outcome{Kind: aggregates.OutcomeRetry, Code: "test", RetryAt: x.e.Now()}}
	}
	mustT(t, x.e.Settle(settle))
	x.drain()
	if got := x.cellOf("Airport_System", "7", "name"); got != "Bolt M6" {
		t.Fatalf("name %q after both effects", got)
	}
}

func TestGuardedUpdateWritesAReceiptCheckedAgainstTheTarget(t *testing.T) {
	x := openSynced(t, t.TempDir())
	a := &Airport{ID: "7", Name: "Bolt", Altitude: 5}
	commit(t, x.Store, a)
	x.drain()
	a.Altitude = 6
	commit(t, x.Store, a)
	x.drain()
	var applied []string
	var payload string // a hash of op, tab, anchor and values: it names the target
	for _, r := range x.inState(aggregates.EffectApplied, 100) {
		if r.Op == events.OpUpdate {
			applied, payload = append(applied, r.ID), r.PayloadHash
		}
	}
	receipts, err := x.prov.ReadReceipts(ctx, x.wb, applied...)
	mustT(t, err)
	r, ok := receipts[applied[0]]
	if len(applied) != 1 || !ok || r.PayloadHash != payload || r.Op != "update" {
		t.Fatalf("receipt %+v (ok %v) for %v", r, ok, applied)
	}
	visible := x.visible("Airport_System", "7")
	if r.RowHash != visible || x.cellOf("Airport_System", "7", "altitude") != "6" {
		t.Fatalf("receipt row hash %s, visible %s", r.RowHash, visible)
	}
}

func TestTerminalHeadIsSupersededWithItsCorrectionInOneCommit(t *testing.T) {
	t.Parallel()
	x := openSynced(t, t.TempDir())
	a := &Airport{ID: "7", Name: "Bolt", Altitude: 5}
	commit(t, x.Store, a)
	x.drain()
	// Someone overwrites the system-owned row: the next update's guard fails.
	mustT(t, x.sheet.Person().Type("Airport_System", x.cellRef("Airport_System", "7", "name"), "Vandalised"))
	a.Altitude = 6
	commit(t, x.Store, a)
	x.pass()
	if c := x.outbox(); c[aggregates.EffectFailed] != 1 {
		t.Fatalf("outbox after the guard failure %v", c)
	}
	if x.cellOf("Airport_System", "7", "name") != "Vandalised" {
		t.Fatal("the guarded update overwrote a row it had not seen")
	}
	before := x.head()
	n, err := x.disp.Reconcile(ctx)
	if err != nil || n != 1 {
		t.Fatalf("reconcile superseded %d: %v", n, err)
	}
	var superseded, queued events.Event
	var by, replacement string
	mustT(t, x.e.Log().ReadFrom(before+1, func(e events.Event) error {
		switch p := e.Payload.(type) {
		case events.EffectSuperseded:
			superseded, by = e, p.By
		case events.EffectQueued:
			queued, replacement = e, p.EffectID
		}
		return nil
	}))
	if superseded.Commit == "" || superseded.Commit != queued.Commit || by == "" || by != replacement {
		t.Fatalf("supersede %+v and replacement %+v are not one commit", superseded, queued)
	}
	x.drain()
	if x.cellOf("Airport_System", "7", "name") != "Bolt" || x.cellOf("Airport_System", "7", "altitude") != "6" {
		t.Fatalf("correction did not restore canonical state: %v", x.rowOf("Airport_System", "7"))
	}
}

func TestRecoverableFailureStaysOnTheRetryPathAndIsNeverSuperseded(t *testing.T) {
	t.Parallel()
	noBlind := func(pc *gsheets.Config) { pc.TrustTTL = -1 } // the first appends read first: the faults answer their reads
	x := openSyncedOn(t, t.TempDir(), hikouteitest.NewSheet(t, noBlind), nil, airports)
	commit(t, x.Store, &Airport{ID: "7", Name: "Bolt"})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads},
		emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads}, emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads},
		emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads})
	if _, err := x.disp.Pass(ctx); err == nil {
		t.Fatal("a pass whose reads all fail reported success")
	}
	var failed []string
	for _, r := range x.inState(aggregates.EffectFailed, 10) {
		if r.Terminal {
			t.Fatalf("recoverable read failure made %s terminal", r.ID)
		}
		failed = append(failed, r.ID)
	}
	if n, err := x.disp.Reconcile(ctx); err != nil || n != 0 || len(failed) == 0 {
		t.Fatalf("reconcile superseded %d recoverable heads (%v); failed %v", n, err, failed)
	}
	x.emu.ClearFaults()
	x.drain()
}

// oneBatch pins the dispatcher to one batch a pass (no parallel lanes):
// for the tests of what one batchUpdate's fault does to every effect it
// carries.
func oneBatch(so *hikoutei.SyncOptions) { so.Workers = 1 }

func TestC07_WriteAppliedThen503IsUncertainAndProbeSettlesIt(t *testing.T) {
	t.Parallel()
	for _, kind := range []emulator.FaultKind{emulator.FaultApplyThen503, emulator.FaultApplyThenDrop} {
		t.Run(string(kind), func(t *testing.T) {
			x := openSynced(t, t.TempDir(), oneBatch) // both effects in the faulted batchUpdate
			commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
			x.emu.ScriptFaults(emulator.Fault{Kind: kind, Match: emulator.MatchWrites})
			x.pass()
			if c := x.outbox(); c[aggregates.EffectUncertain] != 2 {
				t.Fatalf("after %s: %v", kind, c)
			}
			x.pass() // I08: the probe is not due yet, so nothing is probed or redone
			if c := x.outbox(); c[aggregates.EffectUncertain] != 2 || x.disp.C.Probes.Load() != 0 {
				t.Fatalf("an undue probe ran: %v probes %d", c, x.disp.C.Probes.Load())
			}
			x.clock.Advance(10 * time.Second)
			x.pass()
			if c := x.outbox(); c[aggregates.EffectApplied] != 2 {
				t.Fatalf("after the probe: %v", c)
			}
			if n := len(x.rows("Airport_System")); n != 2 || x.rowOf("Airport_System", "12") == nil {
				t.Fatalf("system tab has %d rows", n)
			}
		})
	}
}

// anyLane lets a pass of any size go out in parallel lanes (by default
// only a pass of two lanes' load does: SyncOptions.LaneLoad).
func anyLane(so *hikoutei.SyncOptions) { so.LaneLoad = 1 }

// With parallel lanes a pass's System and Input rows go out in two
// batchUpdates: a write applied then lost is only its own lane's, so
// that lane's effect is uncertain and probed while the other lane's
// applied; the probe settles it and no row is appended twice.
func TestC07_LanesWriteAppliedThen503LeavesOnlyItsLaneUncertain(t *testing.T) {
	t.Parallel()
	x := openSynced(t, t.TempDir(), anyLane)
	commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	dispatches := x.disp.C.Dispatches.Load()
	x.pass()
	if n := x.disp.C.Dispatches.Load() - dispatches; n != 2 {
		t.Fatalf("the pass went out in %d lanes, want 2", n)
	}
	if c := x.outbox(); c[aggregates.EffectUncertain] != 1 || c[aggregates.EffectApplied] != 1 {
		t.Fatalf("after a lost response of one lane: %v", c)
	}
	x.clock.Advance(10 * time.Second)
	x.pass()
	if c := x.outbox(); c[aggregates.EffectApplied] != 2 || x.disp.C.Probes.Load() != 1 {
		t.Fatalf("after the probe: %v, %d probes", c, x.disp.C.Probes.Load())
	}
	if n := len(x.rows("Airport_System")); n != 2 || x.rowOf("Airport_System", "12") == nil {
		t.Fatalf("system tab has %d rows", n)
	}
}

func TestProbingIsBoundedThenTerminalTimeout(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	x.pass()
	uncertain := x.outbox()[aggregates.EffectUncertain] // the faulted batchUpdate's: both effects, or one lane's
	if uncertain < 1 {
		t.Fatalf("no effect uncertain after a lost response: %v", x.outbox())
	}
	for range 3 { // every probe's read fails: the question stays open
		for range 6 {
			x.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault503, Match: emulator.MatchReads})
		}
		x.clock.Advance(time.Hour)
		x.disp.Pass(ctx)
	}
	var codes []string
	for _, r := range x.inState(aggregates.EffectFailed, 10) {
		codes = append(codes, fmt.Sprintf("%s/%v", r.LastCode, r.Terminal))
	}
	if int64(len(codes)) != uncertain || codes[0] != aggregates.TerminalUncertainTimeout+"/true" {
		t.Fatalf("after bounded probing: %v (outbox %v)", codes, x.outbox())
	}
}

func TestSameEffectIDWithAnotherPayloadFailsClosed(t *testing.T) {
	x := openSynced(t, t.TempDir(), oneBatch) // the System row's write is the faulted one
	commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	x.pass()
	// The receipt of one effect now names another payload for the same id.
	rows := x.rows(layout.ReceiptsTab)
	id := aggregates.EffectID(layout.RowBindingID("Airport_System", "12"), 1)
	for i, r := range rows[1:] {
		entries, err := sheetsio.ParseReceiptEntries(r[5])
		mustT(t, err)
		for j := range entries {
			if entries[j].EffectID == id && entries[j].Op == "append" {
				entries[j].PayloadHash = "xxh64:0000000000000000"
			}
		}
		mustT(t, x.sheet.Person().Type(layout.ReceiptsTab, fmt.Sprintf("F%d", i+2), sheetsio.FormatReceiptEntries(entries)))
	}
	x.clock.Advance(time.Minute)
	x.pass()
	var code string
	if rows := x.inState(aggregates.EffectFailed, 10); len(rows) == 1 && rows[0].Terminal {
		code = rows[0].LastCode
	}
	if code != aggregates.ErrEffectPayloadMismatch.Error() {
		t.Fatalf("mismatching receipt settled as %q (outbox %v)", code, x.outbox())
	}
}

func TestDisplacedWriterAbortsBeforeAnyRemoteCall(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
	claimed, err := x.e.Claim(x.e.Target(), 10) // the old owner holds claims…
	mustT(t, err)
	x.clock.Advance(testLeaseTTL) // …its lease expires and another writer takes over
	_, err = x.e.Log().AcquireLease(events.AcquireRequest{WriterID: "new-owner"})
	mustT(t, err)
	x.emu.ResetCounters()
	if _, err := x.disp.Pass(ctx); !errors.Is(err, effects.ErrDisplaced) {
		t.Fatalf("pass of a displaced writer: %v", err)
	}
	if c := x.emu.Counters(sheetID); c.Reads+c.Writes != 0 {
		t.Fatalf("displaced writer made %d remote calls", c.Reads+c.Writes)
	}
	settle := []effects.Settlement{{ID: claimed[0].ID, ClaimToken: claimed[0].ClaimToken, Outcome: aggregates.Outcome{Kind: aggregates.OutcomeApplied}}}
	if err := x.e.Settle(settle); !errors.Is(err, events.ErrStaleWriterFence) {
		t.Fatalf("post-ack bookkeeping of the displaced writer: %v", err)
	}
}

func TestOlderEpochThanTheSheetsAuthorityStopsTheWorker(t *testing.T) {
	x := openSynced(t, t.TempDir())
	f := x.e.Fence()
	f.Epoch += 5
	mustT(t, x.prov.WriteAuthority(ctx, x.wb, f))
	commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
	x.emu.ResetCounters()
	_, err := x.disp.Pass(ctx)
	if !errors.Is(err, effects.ErrDivergence) {
		t.Fatalf("dispatch under a newer authority: %v", err)
	}
	if c := x.emu.Counters(sheetID); c.Writes != 0 || x.rowOf("Airport_System", "12") != nil {
		t.Fatalf("writes %d under a newer authority", c.Writes)
	}
}

func TestI18_CommitsNeverWaitOnAHungSpreadsheet(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "first"})
	release := make(chan struct{})
	passDone := x.hang(release) // the dispatcher is now inside the hung request
	for i := range 20 {
		commit(t, x.Store, &Airport{ID: fmt.Sprintf("n%d", i), Name: "while hung"})
	}
	select {
	case err := <-passDone:
		t.Fatalf("the hung dispatch returned (%v) before the commits were checked", err)
	default:
	}
	got, err := hikoutei.Find[Airport](ctx, x.Store, hikoutei.Where("name", "while hung"))
	if err != nil || len(got) != 20 {
		t.Fatalf("commits during the hang: %d %v", len(got), err)
	}
	close(release)
	<-passDone
	x.drain()
}

// The Run loop settles a full batch in the background while it sends the
// next one. Claims skip bindings with an unsettled effect (I07), so an
// append and the later update of the same row still land in order, and the
// adaptive batch size grows back to MaxBatch between them.
func TestPipelinedRunLoopKeepsPerRowOrder(t *testing.T) {
	t.Parallel()
	x := openSynced(t, t.TempDir(), func(o *hikoutei.SyncOptions) { o.MaxBatch = 16 })
	u := x.Begin()
	for i := range 100 {
		mustT(t, u.Persist(&Airport{ID: strconv.Itoa(i), Name: "first"}))
	}
	_, err := u.Commit(ctx)
	mustT(t, err)
	u = x.Begin()
	for i := range 100 {
		// Notes is user-owned: its Input row's update is queued behind the
		// Input append (Input rows never coalesce, I32), while the System
		// update merges into its pending append.
		mustT(t, u.Persist(&Airport{ID: strconv.Itoa(i), Name: "second " + strconv.Itoa(i), Notes: "note " + strconv.Itoa(i)}))
	}
	_, err = u.Commit(ctx)
	mustT(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.disp.Run(runCtx) }()
	settled := func() bool { return onlyApplied(x.outbox()) }
	deadline := time.After(30 * time.Second)
	for !settled() {
		_, changed := x.clock.Waiters()
		if settled() {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("not converged: %v", x.outbox())
		}
		x.clock.Advance(time.Second)
	}
	cancel()
	mustT(t, <-done)
	rows := x.rows("Airport_System")
	if len(rows) != 101 {
		t.Fatalf("%d rows, want header + 100", len(rows))
	}
	for i := range 100 {
		if r := x.rowOf("Airport_System", strconv.Itoa(i)); r[1] != "second "+strconv.Itoa(i) {
			t.Fatalf("row %d shows %v", i, r)
		}
		if r := x.rowOf("Airport_Input", strconv.Itoa(i)); !slices.Contains(r, "note "+strconv.Itoa(i)) {
			t.Fatalf("Input row %d shows %v", i, r)
		}
	}
	if c := x.outbox(); c[aggregates.EffectApplied] != 300 {
		t.Fatalf("outbox %v, want 300 applied (100 System appends, 100 Input appends, 100 Input updates)", c)
	}
}

func TestEffectStatesLooksUpManyIDsWithoutPayloads(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "One"}, &Airport{ID: "2", Name: "Two"})
	x.readModel(func(p *projector.Projector) error {
		rows, err := p.Due(x.e.Target(), aggregates.EffectPending, time.Time{}, 10)
		if err != nil || len(rows) < 2 {
			return fmt.Errorf("pending %d: %v", len(rows), err)
		}
		ids := []string{"no-such-effect"}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		got, err := p.EffectStates(ids)
		if err != nil || len(got) != len(rows) {
			return fmt.Errorf("got %d of %d: %v", len(got), len(rows), err)
		}
		for _, r := range rows {
			g := got[r.ID]
			if g.Values != nil || r.Values == nil {
				return fmt.Errorf("%s: payload %v, want none (full row has %v)", r.ID, g.Values, r.Values)
			}
			g.Values = r.Values
			if !reflect.DeepEqual(g, r) {
				return fmt.Errorf("%s:\n%+v\n%+v", r.ID, g, r)
			}
		}
		return nil
	})
}

// onlyApplied reports whether every effect of counts is applied (and
// there is at least one).
func onlyApplied(counts map[aggregates.EffectState]int64) bool {
	for st, n := range counts {
		if st != aggregates.EffectApplied && n != 0 {
			return false
		}
	}
	return counts[aggregates.EffectApplied] > 0
}
