package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// openAuto opens a store whose sync workers run by themselves, on a manual
// clock whose timers never fire unless the test advances it.
func openAuto(t *testing.T, dir string, nats *hikoutei.NATSOptions) (*hikoutei.Store, *emulator.Emulator, *events.ManualClock) {
	t.Helper()
	sheet := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil, plainProvider)
	clock := events.NewManualClock(t0)
	s, err := hikoutei.Open(dir, hikoutei.Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, LeaseTTL: testLeaseTTL, NATS: nats,
		Logger: quiet,
		Sync:   &hikoutei.SyncOptions{SpreadsheetID: sheetID, Provider: sheet.Provider, Interval: time.Hour, ReconcileInterval: time.Hour}},
		airports...)
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	return s, sheet.Emulator, clock
}

func appliedCount(s *hikoutei.Store) int64 {
	c, err := engine.Of(s).OutboxCounts()
	if err != nil {
		return -1
	}
	return c[aggregates.EffectApplied]
}

// inboundWaiters is how many clock timers the inbound poller holds while
// idle (its single loop), for tests that count the workers' waiters.
func inboundWaiters(s *hikoutei.Store) int {
	if _, p, _ := engine.Of(s).Workers(); p != nil {
		return 1
	}
	return 0
}

// idle waits until the dispatcher and the reconciler both wait on the
// clock: from then on only a wake-up (or advancing the clock) moves them.
func idle(t *testing.T, s *hikoutei.Store, clock *events.ManualClock) {
	t.Helper()
	eventually(t, "workers idle", func() bool {
		n, _ := clock.Waiters()
		d, _, _ := engine.Of(s).Workers()
		return d != nil && d.C.Passes.Load() > 0 && n == 2+inboundWaiters(s)
	})
}

func TestNATSCommitWakesTheDispatcherBeforeItsTimer(t *testing.T) {
	s, _, clock := openAuto(t, t.TempDir(), nil)
	idle(t, s, clock)
	commit(t, s, &Airport{ID: "1", Name: "woken"})
	eventually(t, "the commit's effects applied", func() bool { return appliedCount(s) == 2 })
	if got := engine.Of(s).Bus().Stats().WakesPublished; got == 0 {
		t.Fatal("no wake-up was published")
	}
}

// startExternal runs a nats-server on a loopback port, standing in for an
// existing deployment reached through HIKOUTEI_NATS_URL.
func startExternal(t *testing.T, jetstream bool) *natsserver.Server {
	t.Helper()
	opts := &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, JetStream: jetstream, StoreDir: t.TempDir()}
	ns, err := natsserver.NewServer(opts)
	mustT(t, err)
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

func TestNATSDownCommitsSucceedAndTheTimerStillConverges(t *testing.T) {
	ext := startExternal(t, false)
	s, _, clock := openAuto(t, t.TempDir(), &hikoutei.NATSOptions{URL: ext.ClientURL()})
	idle(t, s, clock)
	commit(t, s, &Airport{ID: "1", Name: "before"})
	eventually(t, "woken dispatch", func() bool { return appliedCount(s) == 2 })
	ext.Shutdown() // NATS goes away mid-run
	for i := range 10 {
		commit(t, s, &Airport{ID: fmt.Sprintf("d%d", i), Name: "during the outage"})
	}
	// Only the timer fallback can move the dispatcher now: pump the clock.
	eventually(t, "timer-driven convergence", func() bool {
		clock.Advance(time.Hour)
		return appliedCount(s) == 22
	})
}

func TestNATSMirrorDeliversEachEventOnceAndRebuildsTheReadModel(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, func(o *hikoutei.Options) { o.NATS = &hikoutei.NATSOptions{Mirror: true, Listen: "127.0.0.1:0"} })
	defer s.Close()
	loadAirports(t, s, 40)
	e := engine.Of(s)
	head, _ := e.Log().Head()
	live, cp := digest(t, s.ReadModelPath()), e.Checkpoint()
	url, stream := e.Bus().ListenURL(), "HIKOUTEI_"+natsbus.SanitizeStore(filepath.Base(dir))
	var seqs []uint64
	eventually(t, "mirror caught up", func() bool {
		seqs = seqs[:0]
		err := natsbus.ReadMirror(ctx, url, stream, func(e events.Event) error { seqs = append(seqs, e.Seq); return nil })
		return err == nil && uint64(len(seqs)) >= head
	})
	for i, seq := range seqs {
		if seq != uint64(i+1) {
			t.Fatalf("mirror position %d holds seq %d: not exactly once in order", i, seq)
		}
	}
	target := filepath.Join(t.TempDir(), "from-mirror.sqlite")
	src := func(fn func(events.Event) error) error {
		return natsbus.ReadMirror(ctx, url, stream, func(e events.Event) error {
			if e.Seq > cp {
				return nil
			}
			return fn(e)
		})
	}
	got, err := hikoutei.ReplayEvents(target, e.Log().StoreID(), src, hikoutei.ReplayOptions{}, airports...)
	mustT(t, err)
	if got != cp || digest(t, target) != live {
		t.Fatalf("read model from the mirror (checkpoint %d) differs from the live one (%d)", got, cp)
	}
}

func TestNATSConflictNotificationsForAConflictDrivenThroughTheEmulator(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	got := make(chan natsbus.ConflictNotification, 4)
	stop, err := x.e.Bus().SubscribeConflicts(func(n natsbus.ConflictNotification) { got <- n })
	mustT(t, err)
	defer stop()
	c := bothChanged(t, x)
	opened := receive(t, got)
	if opened.Kind != natsbus.KindConflictOpened || opened.ConflictID != c.ID || opened.Field != "qty" || opened.CanonicalRevision != c.CanonicalRevision ||
		opened.CandidateValue != nil || opened.CanonicalValue != nil {
		t.Fatalf("opened notification %+v (values must be absent by default)", opened)
	}
	p := x.part("1")
	p.Qty = 6 // a later commit raising the field's revision: system wins (I12)
	commit(t, x.Store, p)
	resolved := receive(t, got)
	if resolved.Kind != natsbus.KindConflictResolved || resolved.ConflictID != c.ID || resolved.Resolution == "" {
		t.Fatalf("resolved notification %+v", resolved)
	}
}

func receive(t *testing.T, ch <-chan natsbus.ConflictNotification) natsbus.ConflictNotification {
	t.Helper()
	select {
	case n := <-ch:
		return n
	case <-time.After(20 * time.Second):
		t.Fatal("no conflict notification arrived")
	}
	return natsbus.ConflictNotification{}
}
