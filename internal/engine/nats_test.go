package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	hnats "github.com/hikoutei/hikoutei-go/natsserver"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// withEmbeddedNATS links the embedded server: with sync and no NATS
// options, the store runs it without a port (not in-process wake-ups).
func withEmbeddedNATS(o *hikoutei.Options) { o.NATSServer = hnats.Embedded() }

// openAuto opens a store whose sync workers run by themselves, on a manual
// clock whose timers never fire unless the test advances it.
func openAuto(t *testing.T, dir string, nats *hikoutei.NATSOptions) (*hikoutei.Store, *emulator.Emulator, *events.ManualClock) {
	t.Helper()
	return openAutoWith(t, dir, nats, hnats.Embedded())
}

// openAutoWith is openAuto with server as Options.NATSServer (nil: none
// linked).
func openAutoWith(t *testing.T, dir string, nats *hikoutei.NATSOptions, server hikoutei.EmbeddedNATS) (*hikoutei.Store, *emulator.Emulator, *events.ManualClock) {
	t.Helper()
	sheet := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil, plainProvider)
	clock := events.NewManualClock(t0)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, LeaseTTL: testLeaseTTL, NATS: nats,
		Logger: quiet, NATSServer: server,
		Sync: &hikoutei.SyncOptions{SpreadsheetID: sheetID, Provider: sheet.Provider, Interval: time.Hour, ReconcileInterval: time.Hour}},
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

func TestInProcessWakeWithoutNATSOrALinkedServerWakesTheDispatcherBeforeItsTimer(t *testing.T) {
	t.Setenv(hikoutei.EnvNATSURL, "")
	s, _, clock := openAutoWith(t, t.TempDir(), nil, nil)
	if engine.Of(s).Bus() != nil {
		t.Fatal("a NATS bus runs although no server is linked and no URL is set")
	}
	idle(t, s, clock)
	commit(t, s, &Airport{ID: "1", Name: "woken"})
	eventually(t, "the commit's effects applied without the clock moving", func() bool { return appliedCount(s) == 2 })
}

func TestNATSOptionsWithoutURLOrLinkedServerFailOpenServerNotLinked(t *testing.T) {
	t.Setenv(hikoutei.EnvNATSURL, "")
	_, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{AcquireWait: -1, Logger: quiet,
		NATS: &hikoutei.NATSOptions{Listen: "127.0.0.1:0"}}, airports...)
	if !errors.Is(err, natsbus.ErrServerNotLinked) || !errors.Is(err, hikoutei.ErrSyncStartup) {
		t.Fatalf("Open: %v, want sync_startup_failed wrapping nats_server_not_linked", err)
	}
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
	reader, stream := mirrorReader(dir, e), "HIKOUTEI_"+natsbus.SanitizeStore(filepath.Base(dir))
	var seqs []uint64
	eventually(t, "mirror caught up", func() bool {
		seqs = seqs[:0]
		err := natsbus.ReadMirrorWith(ctx, reader, stream, func(e events.Event) error { seqs = append(seqs, e.Seq); return nil })
		return err == nil && uint64(len(seqs)) >= head
	})
	for i, seq := range seqs {
		if seq != uint64(i+1) {
			t.Fatalf("mirror position %d holds seq %d: not exactly once in order", i, seq)
		}
	}
	target := filepath.Join(t.TempDir(), "from-mirror.sqlite")
	src := func(fn func(events.Event) error) error {
		return natsbus.ReadMirrorWith(ctx, reader, stream, func(e events.Event) error {
			if e.Seq > cp {
				return nil
			}
			return fn(e)
		})
	}
	got, err := hikoutei.ReplayEvents(t.Context(), target, e.Log().StoreID(), src, hikoutei.ReplayOptions{}, airports...)
	mustT(t, err)
	if got != cp || digest(t, target) != live {
		t.Fatalf("read model from the mirror (checkpoint %d) differs from the live one (%d)", got, cp)
	}
}

// mirrorReader reaches the store's listener with its generated client
// credentials and pins its mirror key.
func mirrorReader(dir string, e *engine.Engine) natsbus.Config {
	return natsbus.Config{URL: e.Bus().ListenURL(), NkeyFile: filepath.Join(dir, engine.ClientSeedFile),
		Mirror: natsbus.MirrorConfig{VerifyKey: e.Bus().MirrorKey()}}
}

// mirrorHolds waits until the store's mirror stream holds head messages
// and returns them, read with the generated client credentials.
func mirrorHolds(t *testing.T, dir string, e *engine.Engine, head uint64) []*jetstream.RawStreamMsg {
	t.Helper()
	nc, err := nats.Connect(e.Bus().ListenURL(), nkeyOpt(t, filepath.Join(dir, engine.ClientSeedFile)))
	mustT(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	mustT(t, err)
	var st jetstream.Stream
	eventually(t, "mirror caught up", func() bool {
		st, err = js.Stream(ctx, "HIKOUTEI_"+natsbus.SanitizeStore(filepath.Base(dir)))
		return err == nil && st.CachedInfo().State.Msgs >= head
	})
	var out []*jetstream.RawStreamMsg
	for seq := uint64(1); seq <= head; seq++ {
		m, err := st.GetMsg(ctx, seq)
		mustT(t, err)
		out = append(out, m)
	}
	return out
}

func nkeyOpt(t *testing.T, seed string) nats.Option {
	t.Helper()
	o, err := nats.NkeyOptionFromSeed(seed)
	mustT(t, err)
	return o
}

// Repro 10: the mirror carried the live fencing token and anyone could
// connect to the listener.
func TestRepro10_StoreMirrorCarriesNoTokenAndItsListenerNeedsCredentials(t *testing.T) {
	dir := t.TempDir()
	nopts := func(o *hikoutei.Options) { o.NATS = &hikoutei.NATSOptions{Mirror: true, Listen: "127.0.0.1:0"} }
	s := openStore(t, dir, nopts)
	loadAirports(t, s, 10)
	e := engine.Of(s)
	token := e.Lease().Token
	if len(token) < 16 {
		t.Fatalf("lease token %q", token)
	}
	if nc, err := nats.Connect(e.Bus().ListenURL(), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("a client without credentials connected to the store's listener")
	}
	for _, f := range []string{engine.ClientSeedFile, engine.MirrorKeyFile} {
		st, err := os.Lstat(filepath.Join(dir, f))
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, st, err)
		}
	}
	head, _ := e.Log().Head()
	for i, m := range mirrorHolds(t, dir, e, head) {
		ev, err := events.DecodeRecord(uint64(i+1), m.Data)
		if bytes.Contains(m.Data, []byte(token)) || err != nil || ev.Token != "" {
			t.Fatalf("mirrored seq %d: token present or record invalid (%v)", i+1, err)
		}
	}
	if h := s.Health(); h.Mirror != nil {
		t.Fatalf("mirror health: %v", h.Mirror)
	}
	mustT(t, s.Close())

	// Reopened, the store resumes after the stream's tail: each seq once.
	s = openStore(t, dir, nopts)
	defer s.Close()
	loadAirports(t, s, 20)
	e = engine.Of(s)
	head, _ = e.Log().Head()
	mirrorHolds(t, dir, e, head)
	n := 0
	mustT(t, natsbus.ReadMirrorWith(ctx, mirrorReader(dir, e), "HIKOUTEI_"+natsbus.SanitizeStore(filepath.Base(dir)), func(ev events.Event) error {
		if n++; ev.Seq != uint64(n) {
			return fmt.Errorf("position %d holds seq %d", n, ev.Seq)
		}
		return nil
	}))
	if uint64(n) < head {
		t.Fatalf("mirror holds %d records, log head %d", n, head)
	}
}

// On an external server where someone else can write to the store's
// stream, a forged record for the next seq stops the mirror (health says
// why) instead of replacing the commit; once the operator deletes the
// stream, the store fills a new one from seq 1.
func TestRepro10_AForeignRecordStopsTheMirrorUntilTheStreamIsReplaced(t *testing.T) {
	ext := startExternal(t, true)
	dir := t.TempDir()
	s := openStore(t, dir, func(o *hikoutei.Options) { o.NATS = &hikoutei.NATSOptions{Mirror: true, URL: ext.ClientURL()} })
	defer s.Close()
	e := engine.Of(s)
	stream := e.Bus().MirrorStream()
	commit(t, s, &Airport{ID: "AAA", Name: "first"})
	nc, err := nats.Connect(ext.ClientURL())
	mustT(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	mustT(t, err)
	mirrored := func() uint64 {
		st, err := js.Stream(ctx, stream)
		if err != nil {
			return 0
		}
		return st.CachedInfo().State.Msgs
	}
	head, _ := e.Log().Head()
	eventually(t, "mirror caught up", func() bool { return mirrored() == head })

	forged := events.Event{Seq: head + 1, Stream: events.EntityStream("Airport", "AAA"), Version: 9, At: t0, Epoch: 1,
		Payload: events.EntityRemoved{Entity: "Airport", ID: "AAA"}}
	rec, err := natsbus.MirrorRecord(forged)
	mustT(t, err)
	m := nats.NewMsg("hikoutei." + natsbus.SanitizeStore(filepath.Base(dir)) + ".events")
	m.Header.Set(jetstream.MsgIDHeader, fmt.Sprint(head+1))
	m.Data = rec
	_, err = js.PublishMsg(ctx, m)
	mustT(t, err)

	commit(t, s, &Airport{ID: "BBB", Name: "second"}) // its seq is the forged one
	eventually(t, "mirror health reports the foreign record", func() bool {
		return errors.Is(s.Health().Mirror, natsbus.ErrMirrorForeignRecord)
	})
	if h := s.Health(); h.Local != nil {
		t.Fatalf("commits must not depend on the mirror: %v", h.Local)
	}
	if err := natsbus.ReadMirror(ctx, ext.ClientURL(), stream, func(events.Event) error { return nil }); !errors.Is(err, natsbus.ErrMirrorForged) {
		t.Fatalf("reader over the forged stream: %v", err)
	}

	mustT(t, js.DeleteStream(ctx, stream)) // the operator replaces the stream
	commit(t, s, &Airport{ID: "CCC", Name: "third"})
	head, _ = e.Log().Head()
	// The mirror clears its health once it has published the new stream's
	// records (after the stream shows them), so wait on both.
	eventually(t, "a new stream filled from seq 1 and the mirror healthy", func() bool {
		return mirrored() == head && s.Health().Mirror == nil
	})
	n := 0
	mustT(t, natsbus.ReadMirrorWith(ctx, natsbus.Config{URL: ext.ClientURL(), Mirror: natsbus.MirrorConfig{VerifyKey: e.Bus().MirrorKey()}}, stream,
		func(ev events.Event) error {
			if n++; ev.Seq != uint64(n) {
				return fmt.Errorf("position %d holds seq %d", n, ev.Seq)
			}
			return nil
		}))
	if uint64(n) != head {
		t.Fatalf("new stream holds %d of %d records", n, head)
	}
}

func TestRepro10_OpenRefusesANonLoopbackListenerWithoutAuthBeforeTheLease(t *testing.T) {
	dir := t.TempDir()
	_, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{AcquireWait: -1, Logger: quiet,
		NATS: &hikoutei.NATSOptions{Listen: "0.0.0.0:0", ListenNoAuth: true}}, airports...)
	if !errors.Is(err, natsbus.ErrListenUnauthenticated) || !errors.Is(err, hikoutei.ErrSyncStartup) {
		t.Fatalf("Open: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused open left %v behind", entries)
	}
}

func TestNATSConflictNotificationsForAConflictDrivenThroughTheEmulator(t *testing.T) {
	x := openSyncedWith(t, t.TempDir(), hikouteitest.NewSheet(t), nil, parts, withEmbeddedNATS)
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
	if resolved.Kind != natsbus.KindConflictResolved || resolved.ConflictID != c.ID || resolved.Resolution != natsbus.ResolutionSystemWins ||
		resolved.Actor != natsbus.ActorApplication {
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

func TestI30_ConflictResolvedNotificationSaysHowAndByWhom(t *testing.T) {
	x := openSyncedWith(t, t.TempDir(), hikouteitest.NewSheet(t), nil, parts, withEmbeddedNATS)
	got := make(chan natsbus.ConflictNotification, 4)
	stop, err := x.e.Bus().SubscribeConflicts(func(n natsbus.ConflictNotification) { got <- n })
	mustT(t, err)
	defer stop()
	c := bothChanged(t, x)
	receive(t, got) // opened
	if _, err := x.ResolveConflict(ctx, c.ID, hikoutei.UseSheet, hikoutei.WithActor(hikoutei.ActorSheet)); err != nil {
		t.Fatal(err)
	}
	n := receive(t, got)
	if n.Kind != natsbus.KindConflictResolved || n.ConflictID != c.ID || n.Schema != natsbus.ConflictSchemaVersion ||
		n.Resolution != natsbus.ResolutionUseSheet || n.Actor != natsbus.ActorSheet {
		t.Fatalf("resolved notification %+v", n)
	}
	// keep system is named keep_system on the wire (recorded as system_acknowledged).
	p := x.part("2")
	p.Qty = 50
	commit(t, x.Store, p)
	x.typeIn("2", "qty", "70")
	x.drain()
	x.poll()
	opened := receive(t, got)
	if _, err := x.ResolveConflict(ctx, opened.ConflictID, hikoutei.KeepSystem, hikoutei.WithActor(hikoutei.ActorCLI)); err != nil {
		t.Fatal(err)
	}
	if n := receive(t, got); n.Resolution != natsbus.ResolutionKeepSystem || n.Actor != natsbus.ActorCLI {
		t.Fatalf("keep system notification %+v", n)
	}
}
