package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

const sheetID = "sheet-under-test"

// testLeaseTTL outlives every clock jump of these tests (the heartbeat is
// off: the manual clock would not drive it).
const testLeaseTTL = 1000 * time.Hour

// synced is a store with sync on, driven by hand, against the emulator
// through the real sheets/v4 client over HTTP.
type synced struct {
	*Store
	t     *testing.T
	emu   *emulator.Emulator
	prov  *sheetsio.Provider
	clock *events.ManualClock
	disp  *effects.Dispatcher
}

func openSynced(t *testing.T, dir string, tune ...func(*SyncOptions, *sheetsio.Config)) *synced {
	t.Helper()
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	return openSyncedOn(t, dir, emu, srv.URL, tune...)
}

func openSyncedOn(t *testing.T, dir string, emu *emulator.Emulator, url string, tune ...func(*SyncOptions, *sheetsio.Config)) *synced {
	t.Helper()
	pc := sheetsio.Config{Endpoint: url, Pacing: sheetsio.Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff:   sheetsio.Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond, Attempts: 3},
		LookupEnv: func(string) (string, bool) { return "", false }, RequestTimeout: 5 * time.Second}
	so := SyncOptions{SpreadsheetID: sheetID, Manual: true, ProbeDelay: 10 * time.Second, MaxProbes: 3, AuthorityTTL: testLeaseTTL}
	for _, f := range tune {
		f(&so, &pc)
	}
	prov, err := sheetsio.New(ctx, pc)
	mustT(t, err)
	so.Provider = prov
	clock := events.NewManualClock(t0)
	s, err := Open(dir, Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, Sync: &so, LeaseTTL: testLeaseTTL,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Entity[Airport]("Airport"))
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	disp, err := s.Provision(ctx)
	mustT(t, err)
	return &synced{Store: s, t: t, emu: emu, prov: prov, clock: clock, disp: disp}
}

// pass runs one dispatcher pass and fails the test on error.
func (x *synced) pass() {
	x.t.Helper()
	if _, err := x.disp.Pass(ctx); err != nil {
		x.t.Fatalf("pass: %v", err)
	}
}

// drain runs passes until nothing is claimable or probing is pending.
func (x *synced) drain() {
	x.t.Helper()
	for range 50 {
		x.pass()
		c := x.outbox()
		if c["pending"]+c["processing"]+c["delivery_uncertain"]+c["failed"] == 0 {
			return
		}
		if c["delivery_uncertain"] > 0 || c["failed"] > 0 {
			x.clock.Advance(time.Minute) // probes and retries become due
		}
	}
	x.t.Fatalf("outbox did not drain: %v", x.outbox())
}

func (x *synced) outbox() map[string]int64 {
	var c map[string]int64
	mustT(x.t, x.onWriter(func() (err error) { c, err = x.proj.OutboxCounts(); return err }))
	return c
}

func (x *synced) rows(tab string) [][]string {
	x.t.Helper()
	rows, err := x.emu.Person(sheetID).Displayed(tab)
	mustT(x.t, err)
	return rows
}

// rowOf returns the displayed row whose last cell (the anchor) is anchor.
func (x *synced) rowOf(tab, anchor string) []string {
	var found []string
	for _, r := range x.rows(tab)[1:] {
		if len(r) > 0 && r[len(r)-1] == anchor {
			if found != nil {
				x.t.Fatalf("anchor %s appears twice on %s", anchor, tab)
			}
			found = r
		}
	}
	return found
}

func (x *synced) cellOf(tab, anchor, column string) string {
	header := x.rows(tab)[0]
	row := x.rowOf(tab, anchor)
	for i, h := range header {
		if h == column && i < len(row) {
			return row[i]
		}
	}
	return ""
}

// cellRef is the A1 reference of column on the row whose anchor is anchor.
func (x *synced) cellRef(tab, anchor, column string) string {
	rows := x.rows(tab)
	for i, r := range rows {
		if len(r) > 0 && r[len(r)-1] == anchor {
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

func TestSyncBackfillMaterialisesSystemAndInputRows(t *testing.T) {
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
	if c := x.outbox(); c["applied"] != 120 {
		t.Fatalf("outbox %v", c)
	}
}

func TestI07_ClaimsAreOrderedPerTarget(t *testing.T) {
	x := openSynced(t, t.TempDir())
	a := &Airport{ID: "7", Name: "Bolt", Altitude: 5}
	commit(t, x.Store, a)
	a.Name = "Bolt M6"
	commit(t, x.Store, a)
	claimed, err := x.Claim("sheets", 100)
	mustT(t, err)
	ops := map[string]int{}
	for _, c := range claimed {
		ops[c.Tab+"/"+c.Op]++
	}
	if ops["Airport_System/append"] != 1 || ops["Airport_System/update"] != 0 {
		t.Fatalf("claimed %v: the update was claimable before the append settled", ops)
	}
	again, err := x.Claim("sheets", 100)
	mustT(t, err)
	if len(again) != 0 {
		t.Fatalf("claimed %d more while heads are processing", len(again))
	}
	settle := make([]effects.Settlement, len(claimed))
	for i, c := range claimed {
		settle[i] = effects.Settlement{ID: c.ID, ClaimToken: c.ClaimToken, Outcome: aggregates.Outcome{Kind: "retry", Code: "test", RetryAt: x.Now()}}
	}
	mustT(t, x.Settle(settle))
	x.drain()
	if got := x.cellOf("Airport_System", "7", "name"); got != "Bolt M6" {
		t.Fatalf("name %q after both effects", got)
	}
}

func TestI06_GuardedUpdateWritesAReceiptCheckedAgainstTheTarget(t *testing.T) {
	x := openSynced(t, t.TempDir())
	a := &Airport{ID: "7", Name: "Bolt", Altitude: 5}
	commit(t, x.Store, a)
	x.drain()
	a.Altitude = 6
	commit(t, x.Store, a)
	x.drain()
	var applied []string
	mustT(t, x.onWriter(func() error {
		rows, err := x.proj.InState("sheets", "applied", time.Time{}, 100)
		for _, r := range rows {
			if r.Op == "update" {
				applied = append(applied, r.ID)
			}
		}
		return err
	}))
	receipts, err := x.prov.ReadReceipts(ctx, x.Workbook(), applied...)
	mustT(t, err)
	r, ok := receipts[applied[0]]
	if len(applied) != 1 || !ok || r.Binding != layout.RowBindingID("Airport_System", "7") || r.Op != "update" {
		t.Fatalf("receipt %+v (ok %v) for %v", r, ok, applied)
	}
	visible, _, _, _ := x.visible("Airport_System", "7")
	if r.RowHash != visible || x.cellOf("Airport_System", "7", "altitude") != "6" {
		t.Fatalf("receipt row hash %s, visible %s", r.RowHash, visible)
	}
}

func (x *synced) visible(tab, anchor string) (hash string, rev int64, ok bool, err error) {
	err = x.onWriter(func() (e error) { hash, rev, ok, e = x.proj.Visible(layout.RowBindingID(tab, anchor)); return e })
	return
}

func TestI10_TerminalHeadSupersededWithCorrectionRecoverableNever(t *testing.T) {
	x := openSynced(t, t.TempDir())
	a := &Airport{ID: "7", Name: "Bolt", Altitude: 5}
	commit(t, x.Store, a)
	x.drain()
	// Someone overwrites the system-owned row: the next update's guard fails.
	mustT(t, x.emu.Person(sheetID).Type("Airport_System", x.cellRef("Airport_System", "7", "name"), "Vandalised"))
	a.Altitude = 6
	commit(t, x.Store, a)
	x.pass()
	if c := x.outbox(); c["failed"] != 1 {
		t.Fatalf("outbox after the guard failure %v", c)
	}
	if x.cellOf("Airport_System", "7", "name") != "Vandalised" {
		t.Fatal("the guarded update overwrote a row it had not seen")
	}
	before, _ := x.Log().Head()
	n, err := x.disp.Reconcile(ctx)
	if err != nil || n != 1 {
		t.Fatalf("reconcile superseded %d: %v", n, err)
	}
	var superseded, queued events.Event
	mustT(t, x.Log().ReadFrom(before+1, func(e events.Event) error {
		switch e.Type {
		case aggregates.TypeEffectSuperseded:
			superseded = e
		case aggregates.TypeEffectQueued:
			queued = e
		}
		return nil
	}))
	if superseded.Commit == "" || superseded.Commit != queued.Commit || superseded.Payload["by"] != queued.Payload["effect_id"] {
		t.Fatalf("supersede %+v and replacement %+v are not one commit", superseded, queued)
	}
	x.drain()
	if x.cellOf("Airport_System", "7", "name") != "Bolt" || x.cellOf("Airport_System", "7", "altitude") != "6" {
		t.Fatalf("correction did not restore canonical state: %v", x.rowOf("Airport_System", "7"))
	}
}

func TestI10_RecoverableFailureStaysOnRetryPathAndIsNeverSuperseded(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "7", Name: "Bolt"})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads},
		emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads}, emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads},
		emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads})
	if _, err := x.disp.Pass(ctx); err == nil {
		t.Fatal("a pass whose reads all fail reported success")
	}
	var failed []string
	mustT(t, x.onWriter(func() error {
		rows, err := x.proj.InState("sheets", "failed", time.Time{}, 10)
		for _, r := range rows {
			if r.Terminal {
				return fmt.Errorf("recoverable read failure made %s terminal", r.ID)
			}
			failed = append(failed, r.ID)
		}
		return err
	}))
	if n, err := x.disp.Reconcile(ctx); err != nil || n != 0 || len(failed) == 0 {
		t.Fatalf("reconcile superseded %d recoverable heads (%v); failed %v", n, err, failed)
	}
	x.emu.ClearFaults()
	x.drain()
}

func TestC07_WriteAppliedThen503IsUncertainAndProbeSettlesIt(t *testing.T) {
	for _, kind := range []emulator.FaultKind{emulator.FaultApplyThen503, emulator.FaultApplyThenDrop} {
		t.Run(string(kind), func(t *testing.T) {
			x := openSynced(t, t.TempDir())
			commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
			x.emu.ScriptFaults(emulator.Fault{Kind: kind, Match: emulator.MatchWrites})
			x.pass()
			if c := x.outbox(); c["delivery_uncertain"] != 2 {
				t.Fatalf("after %s: %v", kind, c)
			}
			x.pass() // I08: the probe is not due yet, so nothing is probed or redone
			if c := x.outbox(); c["delivery_uncertain"] != 2 || x.disp.C.Probes.Load() != 0 {
				t.Fatalf("an undue probe ran: %v probes %d", c, x.disp.C.Probes.Load())
			}
			x.clock.Advance(10 * time.Second)
			x.pass()
			if c := x.outbox(); c["applied"] != 2 {
				t.Fatalf("after the probe: %v", c)
			}
			if n := len(x.rows("Airport_System")); n != 2 || x.rowOf("Airport_System", "12") == nil {
				t.Fatalf("system tab has %d rows", n)
			}
		})
	}
}

func TestI08_ProbingIsBoundedThenTerminalTimeout(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	x.pass()
	for range 3 { // every probe's read fails: the question stays open
		for range 6 {
			x.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault503, Match: emulator.MatchReads})
		}
		x.clock.Advance(time.Hour)
		x.disp.Pass(ctx)
	}
	var codes []string
	mustT(t, x.onWriter(func() error {
		rows, err := x.proj.InState("sheets", "failed", time.Time{}, 10)
		for _, r := range rows {
			codes = append(codes, fmt.Sprintf("%s/%v", r.LastCode, r.Terminal))
		}
		return err
	}))
	if len(codes) != 2 || codes[0] != aggregates.TerminalUncertainTimeout+"/true" {
		t.Fatalf("after bounded probing: %v (outbox %v)", codes, x.outbox())
	}
}

func TestI09_SameEffectIDWithAnotherPayloadFailsClosed(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	x.pass()
	// The receipt of one effect now names another payload for the same id.
	rows := x.rows(layout.ReceiptsTab)
	binding := layout.RowBindingID("Airport_System", "12")
	for i, r := range rows[1:] {
		lines := strings.Split(r[5], "\n")
		for j, line := range lines {
			if f := strings.Split(line, "\t"); len(f) == 6 && f[1] == "append" && f[3] == binding {
				f[5] = "xxh64:0000000000000000"
				lines[j] = strings.Join(f, "\t")
			}
		}
		mustT(t, x.emu.Person(sheetID).Type(layout.ReceiptsTab, fmt.Sprintf("F%d", i+2), strings.Join(lines, "\n")))
	}
	x.clock.Advance(time.Minute)
	x.pass()
	var code string
	mustT(t, x.onWriter(func() error {
		rows, err := x.proj.InState("sheets", "failed", time.Time{}, 10)
		if len(rows) == 1 && rows[0].Terminal {
			code = rows[0].LastCode
		}
		return err
	}))
	if code != aggregates.ErrEffectPayloadMismatch.Error() {
		t.Fatalf("mismatching receipt settled as %q (outbox %v)", code, x.outbox())
	}
}

func TestI04_DisplacedWriterAbortsBeforeAnyRemoteCall(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "12", Name: "Twelve"})
	claimed, err := x.Claim("sheets", 10) // the old owner holds claims…
	mustT(t, err)
	x.clock.Advance(testLeaseTTL) // …its lease expires and another writer takes over
	_, err = x.Log().AcquireLease(events.AcquireRequest{WriterID: "new-owner"})
	mustT(t, err)
	x.emu.ResetCounters()
	if _, err := x.disp.Pass(ctx); !errors.Is(err, effects.ErrDisplaced) {
		t.Fatalf("pass of a displaced writer: %v", err)
	}
	if c := x.emu.Counters(sheetID); c.Reads+c.Writes != 0 {
		t.Fatalf("displaced writer made %d remote calls", c.Reads+c.Writes)
	}
	settle := []effects.Settlement{{ID: claimed[0].ID, ClaimToken: claimed[0].ClaimToken, Outcome: aggregates.Outcome{Kind: "applied"}}}
	if err := x.Settle(settle); !errors.Is(err, events.ErrStaleWriterFence) {
		t.Fatalf("post-ack bookkeeping of the displaced writer: %v", err)
	}
}

func TestI05_OlderEpochThanTheSheetsAuthorityStopsTheWorker(t *testing.T) {
	x := openSynced(t, t.TempDir())
	f := x.Fence()
	f.Epoch += 5
	mustT(t, x.prov.WriteAuthority(ctx, x.Workbook(), f))
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
	release := make(chan struct{})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultHang, Release: release})
	commit(t, x.Store, &Airport{ID: "1", Name: "first"})
	passDone := make(chan error, 1)
	go func() { _, err := x.disp.Pass(context.Background()); passDone <- err }()
	for x.emu.PendingFaults() != 0 { // the dispatcher is now inside the hung request
		select {
		case err := <-passDone:
			t.Fatalf("pass ended before hanging: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	for i := range 20 {
		commit(t, x.Store, &Airport{ID: fmt.Sprintf("n%d", i), Name: "while hung"})
	}
	select {
	case err := <-passDone:
		t.Fatalf("the hung dispatch returned (%v) before the commits were checked", err)
	default:
	}
	got, err := Find[Airport](ctx, x.Store, Where("name", "while hung"))
	if err != nil || len(got) != 20 {
		t.Fatalf("commits during the hang: %d %v", len(got), err)
	}
	close(release)
	<-passDone
	x.drain()
}

func newTestClock() *events.ManualClock { return events.NewManualClock(t0) }

// The Run loop settles a full batch in the background while it sends the
// next one. Claims skip bindings with an unsettled effect (I07), so an
// append and the later update of the same row still land in order, and the
// adaptive batch size grows back to MaxBatch between them.
func TestI07_PipelinedRunLoopKeepsPerRowOrder(t *testing.T) {
	x := openSynced(t, t.TempDir(), func(o *SyncOptions, _ *sheetsio.Config) { o.MaxBatch = 16 })
	u := x.Begin()
	for i := range 100 {
		mustT(t, u.Persist(&Airport{ID: strconv.Itoa(i), Name: "first"}))
	}
	_, err := u.Commit(ctx)
	mustT(t, err)
	u = x.Begin()
	for i := range 100 {
		mustT(t, u.Persist(&Airport{ID: strconv.Itoa(i), Name: "second " + strconv.Itoa(i)}))
	}
	_, err = u.Commit(ctx)
	mustT(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.disp.Run(runCtx) }()
	settled := func() bool { c := x.outbox(); return len(c) == 1 && c["applied"] > 0 }
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
	}
	if c := x.outbox(); c["applied"] != 300 {
		t.Fatalf("outbox %v, want 300 applied (100 System appends, 100 Input appends, 100 System updates)", c)
	}
}

func TestEffectStatesLooksUpManyIDsWithoutPayloads(t *testing.T) {
	x := openSynced(t, t.TempDir())
	commit(t, x.Store, &Airport{ID: "1", Name: "One"}, &Airport{ID: "2", Name: "Two"})
	mustT(t, x.onWriter(func() error {
		rows, err := x.proj.InState("sheets", "pending", time.Time{}, 10)
		if err != nil || len(rows) < 2 {
			return fmt.Errorf("pending %d: %v", len(rows), err)
		}
		ids := []string{"no-such-effect"}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		got, err := x.proj.EffectStates(ids)
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
	}))
}
