package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// sleepLog records the provider's backoff waits instead of sleeping.
type sleepLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (l *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	l.mu.Lock()
	l.waits = append(l.waits, d)
	l.mu.Unlock()
	return ctx.Err()
}

func TestC08_QuotaErrorsBackOffAndNothingIsDroppedOrTerminal(t *testing.T) {
	waits := &sleepLog{}
	sheet := hikouteitest.NewSheet(t, func(pc *gsheets.Config) {
		pc.Backoff = gsheets.Backoff{Initial: 100 * time.Millisecond, Max: 10 * time.Second, Attempts: 6}
		pc.Sleep = waits.sleep
		pc.TrustTTL = -1 // every dispatch reads first (no blind append): the first faults answer its reads
	})
	x := openSyncedOn(t, t.TempDir(), sheet, nil, airports)
	for i := range 5 {
		commit(t, x.Store, &Airport{ID: fmt.Sprintf("q%d", i), Name: "quota"})
	}
	x.emu.ScriptFaults(
		emulator.Fault{Kind: emulator.Fault429, RetryAfter: 2 * time.Second},
		emulator.Fault{Kind: emulator.Fault429, RetryAfter: 2 * time.Second},
		emulator.Fault{Kind: emulator.Fault429, RetryAfter: 2 * time.Second},
		emulator.Fault{Kind: emulator.Fault500, Message: "Quota exceeded for quota metric 'Read requests'"},
	)
	x.pass()
	if c := x.outbox(); c[aggregates.EffectApplied] != 10 || c[aggregates.EffectFailed] != 0 {
		t.Fatalf("outbox after quota errors: %v", c)
	}
	waits.mu.Lock()
	defer waits.mu.Unlock()
	if len(waits.waits) != 4 || waits.waits[0] < 2*time.Second {
		t.Fatalf("backoff waits %v: want 4, the first honouring Retry-After", waits.waits)
	}
	// A 429 on the write itself proves nothing: uncertain, probed, retried.
	// The pass's two effects (System and Input rows) go out in one batch or
	// in two lanes: the effects of the batchUpdate the 429 answered are
	// uncertain, a lane it did not answer applied.
	commit(t, x.Store, &Airport{ID: "q9", Name: "quota"})
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchWrites})
	x.pass()
	if c := x.outbox(); c[aggregates.EffectUncertain] < 1 || c[aggregates.EffectUncertain]+c[aggregates.EffectApplied] != 12 {
		t.Fatalf("after a write 429: %v", c)
	}
	x.drain()
	if c := x.outbox(); c[aggregates.EffectApplied] != 12 || len(x.rows("Airport_System")) != 7 {
		t.Fatalf("after the retry: %v, %d rows", c, len(x.rows("Airport_System")))
	}
}

func TestC10_HumanEditDuringSystemWriteIsNotOverwritten(t *testing.T) {
	x := openSynced(t, t.TempDir())
	a := &Airport{ID: "7", Name: "Bolt", Altitude: 5, Notes: "qty 5"}
	commit(t, x.Store, a)
	x.drain()
	// A person edits the user-owned notes on the Input tab while the
	// application renames the airport.
	mustT(t, x.sheet.Person().Type("Airport_Input", x.cellRef("Airport_Input", "7", "notes"), "qty 6"))
	a.Name = "Bolt M6"
	commit(t, x.Store, a)
	x.emu.ResetCounters()
	x.drain()
	if x.cellOf("Airport_Input", "7", "notes") != "qty 6" {
		t.Fatal("the person's edit on the Input tab was overwritten")
	}
	if x.cellOf("Airport_System", "7", "name") != "Bolt M6" || x.cellOf("Airport_System", "7", "notes") != "qty 5" {
		t.Fatalf("system row %v", x.rowOf("Airport_System", "7"))
	}
	if c := x.emu.Counters(sheetID); c.Writes != 1 {
		t.Fatalf("the rename cost %d writes, want one guarded batchUpdate", c.Writes)
	}
}

func TestCrashBetweenRemoteApplyAndSettleLeavesNoDuplicateRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	x := openSyncedOn(t, dir, sheet, nil, airports)
	loadAirports(t, x.Store, 30)
	claimed, err := x.e.Claim(x.e.Target(), 1000)
	mustT(t, err)
	ops := make([]sheetsio.Op, len(claimed))
	for i, c := range claimed {
		ops[i] = sheetsio.Op{ID: c.ID, Tab: c.Target.Tab, Kind: sheetsio.OpAppend, Anchor: c.Target.Anchor, Values: c.Values,
			Receipt: &sheetsio.Receipt{EffectID: c.ID, PayloadHash: c.PayloadHash}}
	}
	f := x.e.Fence()
	if _, err := x.prov.Dispatch(ctx, x.wb, sheetsio.Batch{Fence: &f, Ops: ops}); err != nil {
		t.Fatal(err)
	}
	mustT(t, x.Close()) // the process dies before settling: claims stay "processing"
	y := openSyncedOn(t, dir, restarted(t, sheet), nil, airports)
	if n, err := y.e.RecoverProcessing(y.e.Target(), y.e.Now()); err != nil || n != 60 {
		t.Fatalf("recovered %d: %v", n, err)
	}
	y.clock.Advance(time.Minute)
	y.drain()
	if rows := y.rows("Airport_System"); len(rows) != 31 {
		t.Fatalf("system tab has %d rows after recovery, want 31 (no duplicates)", len(rows))
	}
	if c := y.outbox(); c[aggregates.EffectApplied] != 60 {
		t.Fatalf("outbox %v", c)
	}
}

func TestEntitiesCommittedBeforeSyncAreBackfilledOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 20)
	u := s.Begin()
	mustT(t, u.Remove(&Airport{ID: "5"}))
	_, err := u.Commit(ctx)
	mustT(t, err)
	mustT(t, s.Close())
	x := openSynced(t, dir)
	n, err := x.e.QueueUnsynced(x.e.Target(), 100)
	if err != nil || n != 38 {
		t.Fatalf("queued %d rows: %v, want 19 entities × 2 row tabs", n, err)
	}
	if again, err := x.e.QueueUnsynced(x.e.Target(), 100); err != nil || again != 0 {
		t.Fatalf("second scan queued %d: %v", again, err)
	}
	x.drain()
	if rows := x.rows("Airport_System"); len(rows) != 20 || x.rowOf("Airport_System", "5") != nil {
		t.Fatalf("system tab has %d rows", len(rows))
	}
}
