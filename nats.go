package hikoutei

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
)

// EnvNATSURL names an existing NATS server or cluster to use instead of the
// embedded one.
const EnvNATSURL = "HIKOUTEI_NATS_URL"

// NATSOptions configures the store's NATS layer: wake-ups for the sync
// workers (subjects hikoutei.<store>.wake.dispatch / wake.poll), conflict
// notifications (conflict.opened / conflict.resolved, JSON schema 1) and the
// optional JetStream mirror of committed events. By default, when sync is
// on, an embedded nats-server runs in-process with no listening port.
// Wake-ups are hints: NATS being down never blocks a commit and the workers'
// timers still converge.
type NATSOptions struct {
	// Disabled turns NATS off (timers only).
	Disabled bool
	// Store is the subject token (default: the store directory's base
	// name, sanitised to [A-Za-z0-9_-]).
	Store string
	// URL of an existing server or cluster (default env HIKOUTEI_NATS_URL;
	// empty = embedded server). CredsFile and the TLS files apply to it.
	URL                                string
	CredsFile                          string
	TLSCAFile, TLSCertFile, TLSKeyFile string
	// Listen makes the embedded server accept clients on "host:port" so
	// external tools can subscribe (e.g. "127.0.0.1:4222").
	Listen string
	// IncludeValues puts cell values into conflict notifications (off: they
	// may be personal data).
	IncludeValues bool
	// Mirror publishes every committed event to a JetStream stream (record
	// bytes, Nats-Msg-Id = global seq) for remote auditors.
	Mirror bool
	// MirrorStream and MirrorSubject override the stream name
	// ("HIKOUTEI_<STORE>") and subject ("hikoutei.<store>.events").
	MirrorStream, MirrorSubject string
}

// natsState is the running NATS side of a store.
type natsState struct {
	bus      *natsbus.Bus
	dispatch *natsbus.WakeSubscription
	poll     *natsbus.WakeSubscription
	mirror   chan struct{} // hint: new events to mirror
	done     chan struct{}
}

func (s *Store) natsConfig() (*natsbus.Config, bool) {
	o := s.opts.NATS
	if o == nil && s.opts.Sync == nil || o != nil && o.Disabled {
		return nil, false
	}
	if o == nil {
		o = &NATSOptions{}
	}
	c := &natsbus.Config{Store: o.Store, URL: o.URL, CredsFile: o.CredsFile, TLSCAFile: o.TLSCAFile, TLSCertFile: o.TLSCertFile,
		TLSKeyFile: o.TLSKeyFile, Listen: o.Listen, IncludeValues: o.IncludeValues, RetryOnFailedConnect: true, Logger: s.log}
	if c.Store == "" {
		abs, _ := filepath.Abs(s.dir)
		c.Store = natsbus.SanitizeStore(filepath.Base(abs))
	}
	if c.URL == "" {
		c.URL = os.Getenv(EnvNATSURL)
	}
	if o.Mirror {
		c.Mirror = natsbus.MirrorConfig{Enabled: true, Stream: o.MirrorStream, Subject: o.MirrorSubject}
		c.StoreDir = filepath.Join(s.dir, "nats")
	}
	return c, true
}

// startNATS starts the bus and subscribes the dispatcher's wake-ups. A
// configuration error fails Open; an unreachable URL does not (the bus keeps
// reconnecting and the timers carry the workers meanwhile).
func (s *Store) startNATS() error {
	cfg, on := s.natsConfig()
	if !on {
		return nil
	}
	bus, err := natsbus.Start(context.Background(), *cfg)
	if err != nil {
		return fmt.Errorf("%w: nats: %w", ErrSyncStartup, err)
	}
	n := &natsState{bus: bus, mirror: make(chan struct{}, 1), done: make(chan struct{})}
	if n.dispatch, err = bus.SubscribeWake(natsbus.WakeKindDispatch); err != nil {
		bus.Close()
		return fmt.Errorf("%w: nats: %w", ErrSyncStartup, err)
	}
	if n.poll, err = bus.SubscribeWake(natsbus.WakeKindPoll); err != nil {
		n.dispatch.Stop()
		bus.Close()
		return fmt.Errorf("%w: nats: %w", ErrSyncStartup, err)
	}
	if s.sync != nil && s.sync.opts.Wake == nil {
		s.sync.opts.Wake = n.dispatch.C
	}
	if s.sync != nil && s.sync.opts.PollWake == nil {
		s.sync.opts.PollWake = n.poll.C
	}
	if s.sync != nil {
		s.sync.opts.OnConflict = s.publishConflicts(bus, s.sync.opts.OnConflict)
	}
	s.nats = n
	go s.mirrorLoop(cfg.Mirror.Enabled)
	return nil
}

// NATS returns the store's bus, or nil when NATS is off.
func (s *Store) NATS() *natsbus.Bus {
	if s.nats == nil {
		return nil
	}
	return s.nats.bus
}

// afterCommit publishes the wake-up hints of a committed batch (coalesced
// by the bus) and nudges the mirror; it never blocks.
func (s *Store) afterCommit(queuedEffects bool) {
	if s.nats == nil {
		return
	}
	if queuedEffects {
		s.nats.bus.WakeDispatch()
	}
	select {
	case s.nats.mirror <- struct{}{}:
	default:
	}
}

// mirrorLoop tails the log into JetStream, in seq order, off the commit
// path; after an outage it resumes from the last mirrored sequence.
func (s *Store) mirrorLoop(enabled bool) {
	defer close(s.nats.done)
	var next uint64 = 1
	for range s.nats.mirror {
		if !enabled {
			continue
		}
		next = s.mirrorFrom(next)
	}
}

func (s *Store) mirrorFrom(next uint64) uint64 {
	var batch []events.Event
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := s.nats.bus.Mirror(batch); err != nil {
			return err
		}
		next = batch[len(batch)-1].Seq + 1
		batch = batch[:0]
		return nil
	}
	err := s.w.Log().ReadFrom(next, func(e events.Event) error {
		batch = append(batch, e)
		if len(batch) == 256 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		s.log.Warn("event mirror behind; will retry", "err", err.Error())
	}
	return next
}

func (s *Store) stopNATS() error {
	if s.nats == nil {
		return nil
	}
	close(s.nats.mirror)
	<-s.nats.done
	s.nats.dispatch.Stop()
	s.nats.poll.Stop()
	return s.nats.bus.Close()
}

// publishConflicts wraps the conflict hook: every opened or resolved
// conflict is also published on hikoutei.<store>.conflict.opened /
// .resolved (schema 1; values only with NATSOptions.IncludeValues).
func (s *Store) publishConflicts(bus *natsbus.Bus, next func(ConflictEvent)) func(ConflictEvent) {
	return func(ev ConflictEvent) {
		n := natsbus.ConflictNotification{ConflictID: ev.ConflictID, Entity: ev.Entity, ID: ev.ID, Field: ev.Field,
			CanonicalRevision: ev.CanonicalRevision, CandidateEpoch: uint64(max(ev.CandidateEpoch, 0)), Resolution: ev.Resolution,
			At: s.opts.Clock.Now(), CandidateValue: ev.SheetValue, CanonicalValue: ev.SystemValue}
		var err error
		if ev.Type == "resolved" {
			err = bus.PublishConflictResolved(n)
		} else {
			err = bus.PublishConflictOpened(n)
		}
		if err != nil {
			s.log.Warn("conflict notification not published", "err", err.Error())
		}
		if next != nil {
			next(ev)
		}
	}
}
