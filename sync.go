package hikoutei

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// ErrSyncStartup is returned by Open when sync is configured but cannot
// start (no provider, invalid spreadsheet id); the stable code of seed 001.
var ErrSyncStartup = errors.New("sync_startup_failed")

// SyncOptions turns on materialisation into one Google spreadsheet. Commits
// then also queue effects in the same log transaction (the durable outbox);
// workers deliver them asynchronously. A commit never waits on, nor fails
// because of, the spreadsheet (I18).
type SyncOptions struct {
	// Name of the sync target in the outbox and status (default "sheets").
	Name string
	// SpreadsheetID is the Google spreadsheet id. Never logged.
	SpreadsheetID string
	// Provider talks to Sheets (sheetsio.New: Google credentials or an
	// emulator endpoint). Required.
	Provider *sheetsio.Provider
	// Dispatcher tuning; zero values take effects.Config defaults.
	MaxBatch          int
	Interval          time.Duration
	ProbeDelay        time.Duration
	MaxProbes         int64
	RetryBase         time.Duration
	RetryMax          time.Duration
	ReconcileInterval time.Duration
	// AuthorityTTL: another store may take the spreadsheet over once this
	// store's authority row went unrefreshed this long (default 2 min).
	AuthorityTTL time.Duration
	// Manual leaves the workers stopped: the caller drives them with
	// Store.Dispatcher() (tests, tools). Provisioning then happens on the
	// first call of Store.Provision.
	Manual bool
	// Wake delivers wake-up hints to the dispatcher (e.g. from NATS).
	Wake <-chan struct{}
	// Inbound (inbound.go): polling cadences (0 = env var, else 60 s; I20),
	// env lookup (nil = os.LookupEnv), poll wake-ups and conflict hook.
	PollingInterval, FullScanInterval time.Duration
	LookupEnv                         func(string) (string, bool)
	PollWake                          <-chan struct{}
	OnConflict                        func(ConflictEvent)
}

// syncState is the store's sync side, set at Open when Options.Sync is set.
type syncState struct {
	mu       sync.Mutex // guards workbook and disp (set once by Provision)
	opts     SyncOptions
	schema   *layout.Schema
	workbook *sheetsio.Workbook
	disp     *effects.Dispatcher
	cancel   context.CancelFunc
	done     chan error
	stopped  error // why the workers stopped (divergence, displaced); guarded by mu
	// inbound (inbound.go, conflicts.go)
	inboundMu sync.Mutex
	poller    *effects.Poller
	noteDone  chan struct{}
	noteSeq   uint64 // last conflict note delivered (no duplicates after a repaired projection)
}

func (s *Store) setupSync() error {
	o := s.opts.Sync
	if o == nil {
		return nil
	}
	if o.Provider == nil || o.SpreadsheetID == "" {
		return fmt.Errorf("%w: sync needs a provider and a spreadsheet id", ErrSyncStartup)
	}
	if o.Name == "" {
		o.Name = "sheets"
	}
	if err := resolveCadence(o); err != nil {
		return err
	}
	schema, err := s.sheetSchema()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSyncStartup, err)
	}
	s.sync = &syncState{opts: *o, schema: schema, done: make(chan error, 1)}
	return nil
}

// sheetSchema lays out every entity: key first, then fields in order;
// user-owned fields are the editable ones on the Input tab.
func (s *Store) sheetSchema() (*layout.Schema, error) {
	var ents []layout.Entity
	for _, d := range s.defsInOrder {
		e := layout.Entity{Name: d.name, Fields: []layout.Field{{Name: d.pk.name, Kind: cell.String, Key: true}}}
		for _, f := range d.fields {
			e.Fields = append(e.Fields, layout.Field{Name: f.name, Kind: cellKind(f.kind), Editable: f.owner == projector.OwnerUser})
		}
		ents = append(ents, e)
	}
	return layout.NewSchema(ents...)
}

func cellKind(k projector.Kind) cell.Kind {
	switch k {
	case projector.KindInt:
		return cell.Int
	case projector.KindFloat:
		return cell.Float
	case projector.KindBool:
		return cell.Bool
	case projector.KindTime:
		return cell.Time
	}
	return cell.String
}

// Provision creates the spreadsheet's tabs and headers (idempotent) and
// mirrors this writer's authority into it, then builds the dispatcher.
func (s *Store) Provision(ctx context.Context) (*effects.Dispatcher, error) {
	if s.sync == nil {
		return nil, fmt.Errorf("%w: sync is not configured", ErrSyncStartup)
	}
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	if s.sync.disp != nil {
		return s.sync.disp, nil
	}
	o := s.sync.opts
	wb, err := o.Provider.Provision(ctx, o.SpreadsheetID, s.sync.schema)
	if err != nil && wb == nil {
		return nil, err
	}
	s.sync.workbook = wb
	s.sync.disp, err = effects.NewDispatcher(effects.Config{Spreadsheet: o.Name, Provider: o.Provider, Workbook: wb, Outbox: s,
		Clock: s.opts.Clock, Logger: s.log, MaxBatch: o.MaxBatch, Interval: o.Interval, Wake: o.Wake, ProbeDelay: o.ProbeDelay,
		MaxProbes: o.MaxProbes, RetryBase: o.RetryBase, RetryMax: o.RetryMax, ReconcileInterval: o.ReconcileInterval,
		AuthorityTTL: o.AuthorityTTL})
	if err != nil {
		return nil, err
	}
	// Claim the authority before the first write of the run (seed 002);
	// while another store holds it, the dispatcher keeps refusing.
	if err := s.sync.disp.ClaimAuthority(ctx); err != nil && !errors.Is(err, effects.ErrAuthorityHeld) {
		s.sync.disp = nil
		return nil, err
	}
	return s.sync.disp, nil
}

// Dispatcher returns the sync dispatcher once provisioned (nil before).
func (s *Store) Dispatcher() *effects.Dispatcher {
	if s.sync == nil {
		return nil
	}
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	return s.sync.disp
}

// Workbook returns the provisioned spreadsheet binding (nil before).
func (s *Store) Workbook() *sheetsio.Workbook {
	if s.sync == nil {
		return nil
	}
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	return s.sync.workbook
}

// startSync runs provisioning (retried with backoff until it succeeds) and
// then the dispatcher, in the background, until Close.
func (s *Store) startSync() {
	s.enableInbound()
	if s.sync == nil || s.sync.opts.Manual {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.sync.cancel = cancel
	go func() { s.sync.done <- s.superviseSync(ctx) }()
}

func (s *Store) superviseSync(ctx context.Context) error {
	wait := time.Second
	for {
		disp, err := s.Provision(ctx)
		if err == nil {
			stopPoller := s.startPoller(ctx)
			err = disp.Run(ctx)
			stopPoller()
			if err != nil {
				s.log.Error("sync stopped", "err", err.Error())
				s.sync.mu.Lock()
				s.sync.stopped = err
				s.sync.mu.Unlock()
			}
			return err
		}
		s.log.Warn("sync provisioning failed; retrying", "err", err.Error(), "in", wait.String())
		select {
		case <-ctx.Done():
			return nil
		case <-s.opts.Clock.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

func (s *Store) stopSync() error {
	if s.sync == nil || s.sync.cancel == nil {
		return nil
	}
	s.sync.cancel()
	s.sync.cancel = nil
	err := <-s.sync.done
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Fence is the writer identity mirrored into the spreadsheet authority
// (I05): the store id, the lease epoch, and a digest of the fencing token
// (the token itself never leaves the store).
func (s *Store) Fence() sheetsio.Fence {
	l := s.w.Lease()
	sum := sha256.Sum256([]byte(l.Token))
	return sheetsio.Fence{StoreID: s.w.Log().StoreID(), Epoch: int64(l.Epoch), Token: hex.EncodeToString(sum[:12])}
}

// Health separates local health (the store can commit) from sync health
// (the spreadsheet is being materialised). A nil field is healthy.
type Health struct {
	Local error // the lease was lost or the store is closed
	Sync  error // sync stopped (divergence, displaced) or not provisioned yet
}

// Health reports the store's current health.
func (s *Store) Health() Health {
	var h Health
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	switch {
	case closed:
		h.Local = ErrStoreClosed
	case s.w.Lost():
		h.Local = fmt.Errorf("writer lease lost")
	}
	if s.sync == nil {
		return h
	}
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	switch {
	case s.sync.stopped != nil:
		h.Sync = s.sync.stopped
	case s.sync.disp == nil:
		h.Sync = fmt.Errorf("spreadsheet not provisioned yet")
	}
	return h
}
