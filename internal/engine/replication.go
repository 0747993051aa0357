package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	"github.com/hikoutei/hikoutei-go/internal/replication"
)

// ReplicationConfig turns on replicated mode (docs/replication.md,
// I31): the log is replicated on a JetStream stream of a NATS cluster and
// the writer lease lives in a JetStream KV bucket.
type ReplicationConfig struct {
	// URL is the NATS cluster: comma-separated server URLs (required).
	URL string
	// CredsFile (JWT .creds), NkeyFile (nkey user seed) and the TLS files
	// authenticate to the cluster, as NATSConfig's do.
	CredsFile, NkeyFile                string
	TLSCAFile, TLSCertFile, TLSKeyFile string
	// Store is the replicated store's name, shared by the primary and its
	// standbys (default: the store directory's base name, sanitised).
	Store string
	// Replicas of the stream and the lease bucket (default 3).
	Replicas int
	// Standby opens the store as a warm standby (see openStandby).
	Standby bool
	// Holder names this process in the lease (default host:pid:random).
	Holder string
	// AppendTimeout bounds one replicated append, retries included, and
	// each write to the key stream with its opening (default 30 s).
	AppendTimeout time.Duration
	// WatchInterval is how often a standby reads the lease (default 1 s,
	// on the store clock).
	WatchInterval time.Duration
}

// Role is a replicated store's role.
type Role string

// Roles of a replicated store.
const (
	RolePrimary Role = "primary" // holds the lease across hosts and writes
	RoleStandby Role = "standby" // follows the stream, serves reads
	RoleFenced  Role = "fenced"  // was primary; another took over: it writes nothing
)

// DefaultWatchInterval is how often a standby reads the lease.
const DefaultWatchInterval = time.Second

// replicaOpTimeout bounds one lease operation (acquire, renew, release).
const replicaOpTimeout = 10 * time.Second

// ReplicationHealth is a replicated store's role in Health.
type ReplicationHealth struct {
	Role  Role
	Store string // the replicated store's name
	// Epoch is the lease epoch this process holds (primary, fenced) or
	// the newest it saw (standby).
	Epoch uint64
	// Head is the last stream commit this store holds.
	Head uint64
	// SealedThrough is the last record this host's segments hold (0:
	// none): every record up to it is in a segment or kept in log.db.
	// StreamFirst is the first commit the stream held when this process
	// last looked (after a purge on the primary, when a standby started
	// following; 0: not looked at); the commits before it were purged.
	SealedThrough, StreamFirst uint64
	// Purge is the last purge's failure (nil: none, or it succeeded); a
	// stream an earlier build created denies purges and keeps every
	// commit.
	Purge error
}

// replState is the replicated side of an engine.
type replState struct {
	cfg    ReplicationConfig
	store  string
	nc     *nats.Conn
	stream *replication.Log
	leases *replication.LeaseStore
	mine   atomic.Pointer[replication.LeaseRecord] // the lease held (nil: none)
	seen   atomic.Uint64                           // newest epoch a standby saw
	role   atomic.Pointer[Role]
	ctx    context.Context // canceled by close
	cancel context.CancelFunc
	ended  chan struct{} // closed once the store no longer serves its role (fenced, failed takeover)
	endErr atomic.Pointer[error]
	once   sync.Once
	fence  sync.Once
	wg     sync.WaitGroup // the renewal loop, the standby's goroutines
	stop   chan struct{}  // stops the renewal loop
	halt   sync.Once
	sb     *standbyState // nil unless opened as a standby
	// storeID is the store id the stream's logs have ("" until a primary
	// claimed the stream); touched only while opening or taking over.
	storeID string
	keysMu  sync.Mutex
	keys    *replication.KeyStream // opened by the first KeyStream
	sealing replSealState
}

// KeyStream returns the replicated store's key stream, opening (creating)
// it at the first call; nil when the store is not replicated. Errors
// wrap replication.ErrUnavailable, ErrRejected.
func (e *Engine) KeyStream(ctx context.Context) (*replication.KeyStream, error) {
	r := e.repl
	if r == nil {
		return nil, nil
	}
	r.keysMu.Lock()
	defer r.keysMu.Unlock()
	if r.keys != nil {
		return r.keys, nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.AppendTimeout)
	defer cancel()
	ks, err := replication.OpenKeyStream(ctx, r.nc, replication.Config{Store: r.store, Replicas: r.cfg.Replicas})
	if err != nil {
		return nil, fmt.Errorf("replication: %w", err)
	}
	r.keys = ks
	return ks, nil
}

// AppendTimeout bounds one replicated append, retries included, and each
// write to the key stream: ReplicationConfig.AppendTimeout, or
// replication.DefaultAppendTimeout when unset (or not replicated).
func (e *Engine) AppendTimeout() time.Duration {
	if e.repl == nil {
		return replication.DefaultAppendTimeout
	}
	return e.repl.cfg.AppendTimeout
}

// ReplicationContext is canceled when the replicated store closes
// (context.Background() when not replicated).
func (e *Engine) ReplicationContext() context.Context {
	if e.repl == nil {
		return context.Background()
	}
	return e.repl.ctx
}

func (r *replState) setRole(role Role) { r.role.Store(&role) }

// Role returns the store's role ("" when not replicated).
func (e *Engine) Role() Role {
	if e.repl == nil {
		return ""
	}
	return *e.repl.role.Load()
}

// Ended is closed when the store no longer serves its role: another
// primary displaced it (EndErr wraps events.ErrReplicaFenced) or a
// takeover failed (ErrTakeoverFailed). Nil when not replicated: serve
// exits on it.
func (e *Engine) Ended() <-chan struct{} {
	if e.repl == nil {
		return nil
	}
	return e.repl.ended
}

// EndErr is why Ended was closed (nil before).
func (e *Engine) EndErr() error {
	if e.repl == nil {
		return nil
	}
	if p := e.repl.endErr.Load(); p != nil {
		return *p
	}
	return nil
}

// end records why the store stopped serving its role and closes ended.
func (r *replState) end(err error) {
	r.once.Do(func() {
		r.endErr.Store(&err)
		close(r.ended)
	})
}

// connectReplication connects to the cluster and opens the stream and
// the lease bucket. Errors wrap replication.ErrUnavailable or
// ErrConfigInvalid.
func (e *Engine) connectReplication() error {
	c := *e.cfg.Replication
	if c.Store == "" {
		abs, _ := filepath.Abs(e.dir)
		c.Store = natsbus.SanitizeStore(filepath.Base(abs))
	}
	if c.AppendTimeout <= 0 {
		c.AppendTimeout = replication.DefaultAppendTimeout
	}
	if c.Holder == "" {
		host, _ := os.Hostname()
		c.Holder = host + ":" + strconv.Itoa(os.Getpid()) + ":" + events.NewWriterID()[:8]
	}
	nc, err := connectCluster(c)
	if err != nil {
		return err
	}
	r := &replState{cfg: c, store: c.Store, nc: nc, ended: make(chan struct{}), stop: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.setRole(RoleStandby)
	if err := r.open(e.cfg); err != nil {
		nc.Close()
		return err
	}
	e.repl = r
	return nil
}

func (r *replState) open(cfg Config) error {
	ctx, cancel := context.WithTimeout(r.ctx, replicaOpTimeout)
	defer cancel()
	var err error
	if r.stream, err = replication.Open(ctx, r.nc, replication.Config{Store: r.store, Replicas: r.cfg.Replicas, SettleWithin: r.cfg.AppendTimeout}); err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	r.leases, err = replication.OpenLeases(ctx, r.nc, replication.LeaseConfig{Replicas: r.cfg.Replicas, TTL: cfg.LeaseTTL, Clock: cfg.Clock})
	if err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	return r.loadStoreID()
}

// connectCluster connects to the cluster, reconnecting forever once
// connected. The URL is never logged with its credentials.
func connectCluster(c ReplicationConfig) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("hikoutei " + c.Store), nats.Timeout(2 * time.Second), nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond)}
	if c.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	}
	if c.NkeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(c.NkeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: nkey file %s: not a user nkey seed", replication.ErrConfigInvalid, c.NkeyFile)
		}
		opts = append(opts, o)
	}
	if c.TLSCAFile != "" {
		opts = append(opts, nats.RootCAs(c.TLSCAFile))
	}
	if c.TLSCertFile != "" {
		opts = append(opts, nats.ClientCert(c.TLSCertFile, c.TLSKeyFile))
	}
	nc, err := nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to the replication cluster: %v", replication.ErrUnavailable, err)
	}
	return nc, nil
}

// openReplicatedPrimary takes the lease across hosts, then opens the store
// for writing with every commit replicated (see replicatedWriter).
func (e *Engine) openReplicatedPrimary(entities Entities) error {
	if err := e.acquireReplicated(); err != nil {
		return err
	}
	if err := e.openPrimary(entities, e.replicatedWriter); err != nil {
		e.repl.releaseLease()
		return err
	}
	e.becamePrimary()
	return nil
}

// becamePrimary starts the lease renewal and says so, then redoes a
// purge of the stream a crash may have skipped (purgeSealed).
func (e *Engine) becamePrimary() {
	r := e.repl
	r.setRole(RolePrimary)
	r.wg.Add(1)
	go e.renewLoop()
	e.log.Info("replication: primary", "store", r.store, "epoch", r.mine.Load().Epoch, "holder", r.cfg.Holder)
	e.purgeSealed()
}

// acquireReplicated takes the lease across hosts, waiting (on the store
// clock, up to AcquireWait) for a dead holder's lease to become takeable.
// Errors: events.ErrLeaseHeld wrapping *replication.LeaseHeldError.
func (e *Engine) acquireReplicated() error {
	r := e.repl
	deadline := e.cfg.Clock.Now().Add(e.acquireWait())
	for {
		rec, err := r.acquire()
		if err == nil {
			r.mine.Store(&rec)
			return nil
		}
		var held *replication.LeaseHeldError
		if !errors.As(err, &held) {
			return fmt.Errorf("replication: %w", err)
		}
		at, perr := time.Parse(time.RFC3339Nano, held.TakeoverAt)
		if perr != nil || e.cfg.AcquireWait < 0 || at.After(deadline) {
			return fmt.Errorf("%w: %w", events.ErrLeaseHeld, err)
		}
		select {
		case <-e.cfg.Clock.After(at.Sub(e.cfg.Clock.Now())):
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

func (e *Engine) acquireWait() time.Duration {
	if e.cfg.AcquireWait == 0 {
		return events.DefaultAcquireWait
	}
	return e.cfg.AcquireWait
}

func (r *replState) acquire() (replication.LeaseRecord, error) {
	ctx, cancel := context.WithTimeout(r.ctx, replicaOpTimeout)
	defer cancel()
	return r.leases.Acquire(ctx, r.store, r.cfg.Holder)
}

// replicatedWriter completes the writer's options: commits go through the
// stream; before the local lease, log.db catches up with the stream (a
// commit whose local write failed after the stream stored it is applied
// here), then the log gap check; the local lease is taken as elected at
// the epoch of the lease across hosts. Its first lease event is appended
// after the stream's head, which fences any deposed writer at the server.
func (e *Engine) replicatedWriter(wo *events.WriterOptions) {
	r := e.repl
	wo.Log.Replicator = &replication.Replicator{Log: r.stream, Timeout: r.cfg.AppendTimeout}
	wo.Log.StoreID = r.storeID
	wo.ElectedEpoch = r.mine.Load().Epoch
	wo.BeforeLease = func(l *events.Log) error {
		if err := r.claimStoreID(l.StoreID()); err != nil {
			return err
		}
		if err := e.seedOrCatchUp(l); err != nil {
			return err
		}
		return e.findLogGap(l)
	}
}

// loadStoreID reads the store id the stream's logs have ("" when no
// primary claimed the stream yet): a new log on any host is created with
// it, so the spreadsheet authority, NATS subjects and mirror stay the
// store's across a takeover; an existing log of another id is refused
// (events.ErrStoreIDMismatch).
func (r *replState) loadStoreID() error {
	ctx, cancel := context.WithTimeout(r.ctx, replicaOpTimeout)
	defer cancel()
	var err error
	r.storeID, err = r.stream.StoreID(ctx)
	if err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	return nil
}

// claimStoreID records the primary's store id on the stream when it has
// none (the first primary of a store).
func (r *replState) claimStoreID(id string) error {
	ctx, cancel := context.WithTimeout(r.ctx, replicaOpTimeout)
	defer cancel()
	if err := r.stream.ClaimStoreID(ctx, id); err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	r.storeID = id
	return nil
}

// seedOrCatchUp brings l up to the stream. A store that never replicated
// but has history first stores that history in the stream (seedHistory).
func (e *Engine) seedOrCatchUp(l *events.Log) error {
	have, err := l.ReplicaHead()
	if err != nil {
		return err
	}
	head, err := l.Head()
	if err != nil {
		return err
	}
	if have == 0 && head > 0 {
		if err := e.seedHistory(l); err != nil {
			return err
		}
	}
	if err := replication.CatchUp(e.repl.ctx, e.repl.stream, l); err != nil {
		return fmt.Errorf("replication: catch up with the stream: %w", err)
	}
	return nil
}

// renewLoop renews the lease across hosts every HeartbeatInterval on the
// store clock (renew-only, I03) until the engine closes; a lost lease
// displaces this primary. A negative HeartbeatInterval disables it
// (tests: a primary that stopped heartbeating).
func (e *Engine) renewLoop() {
	r := e.repl
	defer r.wg.Done()
	every := e.cfg.HeartbeatInterval
	if every == 0 {
		every = events.HeartbeatInterval
	}
	if every < 0 {
		return
	}
	for {
		select {
		case <-r.stop:
			return
		case <-e.cfg.Clock.After(every):
		}
		err := r.renew()
		if errors.Is(err, replication.ErrLeaseLost) {
			e.displace(err)
			return
		}
		if err != nil {
			e.log.Warn("replication: lease renewal failed; retrying", "store", r.store, "err", err.Error())
		}
	}
}

func (r *replState) renew() error {
	ctx, cancel := context.WithTimeout(r.ctx, replicaOpTimeout)
	defer cancel()
	rec, err := r.leases.Renew(ctx, *r.mine.Load())
	if err == nil {
		r.mine.Store(&rec)
	}
	return err
}

// displace records that another primary took over: every commit is
// refused from now on (ErrReplicaFenced), the sync workers stop, health
// says replication_fenced and Fenced is closed. Logged once.
func (e *Engine) displace(cause error) error {
	r := e.repl
	err := fmt.Errorf("%w: another primary took over the replicated store %q; this process writes nothing more: %w",
		events.ErrReplicaFenced, r.store, cause)
	r.fence.Do(func() {
		e.setFault(err)
		r.setRole(RoleFenced)
		r.end(err)
		var epoch uint64
		if m := r.mine.Load(); m != nil {
			epoch = m.Epoch
		}
		e.log.Error("replication: fenced: another primary took over; stopped writing", "store", r.store, "epoch", epoch, "err", cause.Error())
		go e.haltSync(err)
	})
	return err
}

// replicaRefused classifies a commit the replicated log refused or left
// uncertain; ok is false for any other error.
func (e *Engine) replicaRefused(err error) (error, bool) {
	switch {
	case e.repl == nil:
		return nil, false
	case errors.Is(err, events.ErrReplicaFenced):
		return e.displace(err), true
	case errors.Is(err, events.ErrReplicaUncertain):
		return e.setFault(fmt.Errorf("%w: the replicated log did not answer whether it stored the commit; "+
			"close and reopen the store (it catches up from the stream first): %w", ErrLogCommitUncertain, err)), true
	}
	return nil, false
}

// replicationHealth is Health's replication part (nil when not
// replicated). It reads local state only.
func (e *Engine) replicationHealth() *ReplicationHealth {
	r := e.repl
	if r == nil {
		return nil
	}
	h := &ReplicationHealth{Role: *r.role.Load(), Store: r.store, Epoch: r.seen.Load()}
	if m := r.mine.Load(); m != nil {
		h.Epoch = m.Epoch
	}
	if l := e.Log(); l != nil {
		h.Head, _ = l.ReplicaHead()
	}
	e.sealHealth(h)
	return h
}

// replicationStale is a primary's health while its lease across hosts
// has not been renewed for longer than the takeover rule's stale
// heartbeat (I02): the cluster is unreachable, so commits cannot be
// stored and a standby may take the store over. nil otherwise.
func (e *Engine) replicationStale() error {
	r := e.repl
	if r == nil || *r.role.Load() != RolePrimary {
		return nil
	}
	m := r.mine.Load()
	if m == nil || m.HeartbeatAt.IsZero() {
		return nil
	}
	age := e.cfg.Clock.Now().Sub(m.HeartbeatAt)
	if age <= events.StaleHeartbeatAfter {
		return nil
	}
	return fmt.Errorf("%w: the writer lease across hosts was last renewed %s ago; commits cannot be stored and a standby may take over",
		replication.ErrUnavailable, age.Truncate(time.Second))
}

// writeGuard is asked right before each spreadsheet write (I05 with
// I31): a replicated primary writes only while its lease across hosts
// was renewed less than StaleHeartbeatAfter - HeartbeatInterval ago, so
// a primary paused past its lease (whose standby may have taken over)
// does not carry a write it prepared before the pause. Local time only.
func (e *Engine) writeGuard() error {
	r := e.repl
	if r == nil {
		return nil
	}
	if f := e.fault.Load(); f != nil {
		return *f
	}
	m := r.mine.Load()
	if *r.role.Load() != RolePrimary || m == nil {
		return fmt.Errorf("%w: store %q: this process is not its primary", events.ErrReplicaFenced, r.store)
	}
	if age := e.cfg.Clock.Now().Sub(m.HeartbeatAt); age > events.StaleHeartbeatAfter-events.HeartbeatInterval {
		return fmt.Errorf("%w: the writer lease across hosts was last renewed %s ago; no spreadsheet write until it is renewed",
			replication.ErrUnavailable, age.Truncate(time.Second))
	}
	return nil
}

// stopRenewal stops the renewal loop (Close).
func (r *replState) stopRenewal() {
	if r == nil {
		return
	}
	r.halt.Do(func() { close(r.stop) })
}

// releaseLease gives up the lease across hosts (a fenced primary's is no
// longer its own: nothing to release).
func (r *replState) releaseLease() error {
	m := r.mine.Load()
	if m == nil || *r.role.Load() == RoleFenced {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), replicaOpTimeout)
	defer cancel()
	err := r.leases.Release(ctx, *m)
	if errors.Is(err, replication.ErrLeaseLost) {
		return nil
	}
	return err
}

// close stops every replication goroutine and closes the connection.
func (r *replState) close() {
	if r == nil {
		return
	}
	r.stopRenewal()
	r.cancel()
	r.wg.Wait()
	r.nc.Close()
}
