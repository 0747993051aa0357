package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
)

// Files of a store directory that hold NATS keys (mode 0600, created on
// first use, never logged).
const (
	// ClientSeedFile is the generated nkey seed clients of the embedded
	// server's listener authenticate with (NATSConfig.Listen without
	// ListenNkeys or ListenNoAuth).
	ClientSeedFile = "nats-client.nk"
	// MirrorKeyFile is the key the event mirror's records are signed with.
	MirrorKeyFile = "nats-mirror.nk"
)

// natsState is the running NATS side of a store.
type natsState struct {
	bus      *natsbus.Bus
	dispatch *natsbus.WakeSubscription
	poll     *natsbus.WakeSubscription
	mirror   chan struct{} // hint: new events to mirror
	done     chan struct{}
	mirrorOn bool          // the event mirror is enabled
	lagBound time.Duration // NATSConfig.MirrorLagBound
	wait     mirrorWait    // since when the oldest record not mirrored waits
}

// check refuses a listener without authentication on a non-loopback
// address (and a malformed one) before the lease is taken.
func (c *NATSConfig) check() error {
	if c == nil || c.Disabled || c.Listen == "" {
		return nil
	}
	auth := natsbus.ListenAuth{Nkeys: c.ListenNkeys, None: c.ListenNoAuth}
	if !auth.None && len(auth.Nkeys) == 0 {
		auth.SeedFile = ClientSeedFile // generated in the store directory at start
	}
	if err := natsbus.CheckListen(c.Listen, auth); err != nil {
		return fmt.Errorf("%w: nats: %w", ErrSyncStartup, err)
	}
	return nil
}

func (e *Engine) natsConfig() (*natsbus.Config, bool) {
	o := e.cfg.NATS
	if o == nil && e.cfg.Sync == nil || o != nil && o.Disabled || e.inProcessWake() {
		return nil, false
	}
	if o == nil {
		o = &NATSConfig{}
	}
	c := &natsbus.Config{Store: o.Store, URL: o.URL, CredsFile: o.CredsFile, NkeyFile: o.NkeyFile, TLSCAFile: o.TLSCAFile, TLSCertFile: o.TLSCertFile,
		TLSKeyFile: o.TLSKeyFile, Listen: o.Listen, IncludeValues: o.IncludeValues, RetryOnFailedConnect: true, Logger: e.log,
		ListenAuth: natsbus.ListenAuth{Nkeys: o.ListenNkeys, None: o.ListenNoAuth}, Server: e.cfg.NATSServer}
	if c.Store == "" {
		abs, _ := filepath.Abs(e.dir)
		c.Store = natsbus.SanitizeStore(filepath.Base(abs))
	}
	if c.URL == "" {
		c.URL = config.NATSURL(nil)
	}
	if c.Listen != "" && !o.ListenNoAuth && len(o.ListenNkeys) == 0 {
		c.ListenAuth.SeedFile = filepath.Join(e.dir, ClientSeedFile)
	}
	if o.Mirror {
		c.Mirror = natsbus.MirrorConfig{Enabled: true, Stream: o.MirrorStream, Subject: o.MirrorSubject,
			SigningKeyFile: filepath.Join(e.dir, MirrorKeyFile)}
		c.StoreDir = filepath.Join(e.dir, "nats")
	}
	return c, true
}

// inProcessWake reports whether the dispatcher's wake-ups stay in
// process: sync on without NATS options, no HIKOUTEI_NATS_URL and no
// embedded server linked. The embedded server of that case listens on no
// port, so nothing outside the process could use it: a channel does the
// same without linking nats-server.
func (e *Engine) inProcessWake() bool {
	return e.cfg.Sync != nil && e.cfg.NATS == nil && e.cfg.NATSServer == nil && config.NATSURL(nil) == ""
}

// startInProcessWake gives the dispatcher its in-process wake-up channel
// (afterCommit fills it, coalesced to one pending hint).
func (e *Engine) startInProcessWake() {
	e.wake = make(chan struct{}, 1)
	if s := e.sync; s != nil && s.cfg.Wake == nil {
		s.cfg.Wake = e.wake
	}
	if s := e.sync; s != nil && s.cfg.PollWake == nil {
		s.pollHint = make(chan struct{}, 1)
		s.cfg.PollWake = s.pollHint
	}
}

// startNATS starts the bus and subscribes the workers' wake-ups (or the
// in-process wake-ups, see inProcessWake). A configuration error fails
// Open; an unreachable URL does not (the bus keeps reconnecting and the
// timers carry the workers meanwhile).
func (e *Engine) startNATS() error {
	if e.inProcessWake() {
		e.startInProcessWake()
		return nil
	}
	cfg, on := e.natsConfig()
	if !on {
		return nil
	}
	bus, err := natsbus.Start(context.Background(), *cfg)
	if err != nil {
		return fmt.Errorf("%w: nats: %w", ErrSyncStartup, err)
	}
	n := &natsState{bus: bus, mirror: make(chan struct{}, 1), done: make(chan struct{}), mirrorOn: cfg.Mirror.Enabled}
	if e.cfg.NATS != nil {
		n.lagBound = e.cfg.NATS.MirrorLagBound
	}
	n.wait.started = e.cfg.Clock.Now()
	n.wait.since = n.wait.started // the backlog, if any, waits from now: noteMirrored settles it
	if n.dispatch, err = bus.SubscribeWake(natsbus.WakeKindDispatch); err != nil {
		bus.Close()
		return fmt.Errorf("%w: nats: %w", ErrSyncStartup, err)
	}
	if n.poll, err = bus.SubscribeWake(natsbus.WakeKindPoll); err != nil {
		n.dispatch.Stop()
		bus.Close()
		return fmt.Errorf("%w: nats: %w", ErrSyncStartup, err)
	}
	if s := e.sync; s != nil {
		if s.cfg.Wake == nil {
			s.cfg.Wake = n.dispatch.C
		}
		if s.cfg.PollWake == nil {
			s.cfg.PollWake = n.poll.C
		}
		s.cfg.OnConflict = e.publishConflicts(bus, s.cfg.OnConflict)
	}
	e.nats = n
	bus.SetLogHoles(e.holes) // the mirror steps over what the log lost
	if cfg.Mirror.Enabled {
		e.log.Info("nats mirror", "stream", bus.MirrorStream(), "key", bus.MirrorKey())
	}
	go e.mirrorLoop(cfg.Mirror.Enabled)
	n.mirror <- struct{}{} // mirror the backlog without waiting for a commit
	e.publishChainHead()   // what the opening appended (lease, gap, holes) is a head too
	return nil
}

// mirrorHealth is the event mirror's last failure (nil when it is off or
// its last attempt succeeded). Commits never depend on it.
func (e *Engine) mirrorHealth() error {
	if e.nats == nil {
		return nil
	}
	return e.nats.bus.MirrorHealth()
}

// Bus returns the store's NATS bus, or nil when NATS is off.
func (e *Engine) Bus() *natsbus.Bus {
	if e.nats == nil {
		return nil
	}
	return e.nats.bus
}

// afterCommit publishes the wake-up hints of a committed batch (coalesced
// by the bus) and the chain head, and nudges the mirror; it never blocks.
// Every commit path calls it, whoever committed (the application's group
// commits, and every worker's decision through commitWorker: the poller's
// accepted edits and conflicts, the dispatcher's settlements,
// reconciliation, resolutions): the mirror carries every committed record
// in order and chain.head follows the log (I36).
func (e *Engine) afterCommit(queuedEffects bool) {
	if e.nats == nil {
		if e.wake != nil && queuedEffects {
			select {
			case e.wake <- struct{}{}:
			default: // a hint is already pending
			}
		}
		return
	}
	if queuedEffects {
		e.nats.bus.WakeDispatch()
	}
	e.publishChainHead()
	if e.nats.mirrorOn {
		e.nats.wait.committed(e.cfg.Clock.Now())
	}
	select {
	case e.nats.mirror <- struct{}{}:
	default:
	}
}

// publishChainHead publishes the log's hash chain head after a commit
// batch on hikoutei.<store>.chain.head (never blocking; a head that cannot
// be read is left out: the next batch publishes a newer one).
func (e *Engine) publishChainHead() {
	if head, err := e.ChainHead(); err == nil {
		e.nats.bus.PublishChainHead(head)
	}
}

// mirrorLoop tails the log into JetStream, in seq order, off the commit
// path. It starts at the stream's last record (which the bus checks is
// this log's), and after any failure asks the stream again, so a stream
// an operator replaced is filled from seq 1. A failed attempt is retried
// on the next commit or after a backoff (1 s doubling to 30 s), whichever
// comes first: a mirror never stays behind for want of a new commit.
func (e *Engine) mirrorLoop(enabled bool) {
	defer close(e.nats.done)
	var next uint64
	retry := newMirrorRetry()
	for {
		select {
		case _, ok := <-e.nats.mirror:
			if !ok {
				retry.stop()
				return
			}
		case <-retry.c():
		}
		if !enabled {
			continue
		}
		next = e.mirrorOnce(next)
		e.noteMirrored()
		retry.after(next == 0)
	}
}

// mirrorOnce resumes the mirror at next (0 = ask the stream where); it
// returns where to resume, 0 after a failure.
func (e *Engine) mirrorOnce(next uint64) uint64 {
	if next == 0 {
		head, err := e.nats.bus.MirrorHead()
		if err != nil {
			e.log.Warn("event mirror behind; will retry", "err", err.Error())
			return 0
		}
		next = max(head, 1)
	}
	return e.mirrorFrom(next)
}

// mirrorRetry is the mirror loop's backoff timer after a failed attempt.
type mirrorRetry struct {
	t    *time.Timer
	wait time.Duration
}

func newMirrorRetry() *mirrorRetry {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &mirrorRetry{t: t}
}

func (r *mirrorRetry) c() <-chan time.Time { return r.t.C }

// after arms the timer after a failed attempt (doubling the wait) and
// disarms it after a successful one.
func (r *mirrorRetry) after(failed bool) {
	if !failed {
		r.t.Stop()
		r.wait = 0
		return
	}
	r.wait = min(max(2*r.wait, time.Second), 30*time.Second)
	r.t.Reset(r.wait)
}

func (r *mirrorRetry) stop() { r.t.Stop() }

func (e *Engine) mirrorFrom(next uint64) uint64 {
	var batch []events.Event
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := e.nats.bus.Mirror(batch); err != nil {
			return err
		}
		next = batch[len(batch)-1].Seq + 1
		batch = batch[:0]
		return nil
	}
	err := e.writer().Log().ReadFrom(next, func(ev events.Event) error {
		batch = append(batch, ev)
		if len(batch) == 256 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		e.log.Warn("event mirror behind; will retry", "err", err.Error())
		return 0 // ask the stream where to resume: it may have been replaced
	}
	return next
}

func (e *Engine) stopNATS() error {
	if e.nats == nil {
		return nil
	}
	close(e.nats.mirror)
	<-e.nats.done
	e.nats.dispatch.Stop()
	e.nats.poll.Stop()
	return e.nats.bus.Close()
}

// publishConflicts wraps the conflict hook: every opened or resolved
// conflict is also published on hikoutei.<store>.conflict.opened /
// .resolved (natsbus.ConflictSchemaVersion; values only with
// IncludeValues), a resolution with how and by whom.
func (e *Engine) publishConflicts(bus *natsbus.Bus, next func(ConflictNotice)) func(ConflictNotice) {
	return func(c ConflictNotice) {
		n := natsbus.ConflictNotification{ConflictID: c.ConflictID, Entity: c.Entity, ID: c.ID, Field: c.Field,
			CanonicalRevision: c.CanonicalRevision, CandidateEpoch: uint64(max(c.CandidateEpoch, 0)), Resolution: NotifiedResolution(c.Resolution),
			Actor: string(c.Actor), At: e.cfg.Clock.Now(), CandidateValue: c.SheetValue, CanonicalValue: c.SystemValue}
		var err error
		if c.Type == events.TypeConflictResolved {
			err = bus.PublishConflictResolved(n)
		} else {
			err = bus.PublishConflictOpened(n)
		}
		if err != nil {
			e.log.Warn("conflict notification not published", "err", err.Error())
		}
		if next != nil {
			next(c)
		}
	}
}

// NotifiedResolution is how a resolution is named in notifications:
// system_wins, keep_system (acknowledge_system, recorded as
// system_acknowledged) or use_sheet ("" for none).
func NotifiedResolution(r events.Resolution) string {
	if r == events.ResolutionAcknowledged {
		return natsbus.ResolutionKeepSystem
	}
	return string(r)
}
