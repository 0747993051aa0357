package hikoutei

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Options configures Open. The zero value is a local-only store on the wall
// clock: it never needs a spreadsheet, credentials or a network.
type Options struct {
	// Clock supplies `now` for every decision and the lease (default wall clock).
	Clock events.Clock
	// Operation is recorded in lease.toml and the lease events (default "embed").
	Operation string
	// OpenTimeout bounds the wait for another process's file lock
	// (default 1 s), after which Open fails with ErrStoreLocked.
	OpenTimeout time.Duration
	// AcquireWait bounds the wait for a dead writer's lease to become
	// takeable (default 20 s; negative = fail at once with ErrLeaseHeld).
	AcquireWait time.Duration
	// ReadConns is the size of the read connection pool (default 4).
	ReadConns int
	// Progress, if set, receives progress while the read model catches up
	// with or is rebuilt from the log at Open (also when it migrates to
	// changed entity shapes).
	Progress func(Progress)
	// Migrations map the records of entities whose shape changed in a way
	// some current values cannot take (Migrate). Each runs once, at the
	// Open that records the change; one the store already ran is skipped,
	// so they may stay in the options.
	Migrations []Migration
	// Logger receives operational messages (default slog.Default()). It
	// never receives credentials, spreadsheet ids or field values.
	Logger *slog.Logger
	// HeartbeatInterval overrides the lease heartbeat cadence (default 5 s;
	// negative disables it — tests only).
	HeartbeatInterval time.Duration
	// LeaseTTL is how far each renewal pushes the writer lease (default 30 s).
	LeaseTTL time.Duration
	// SnapshotEvery takes a snapshot of the read model each time this many
	// events were applied since the last one (0 = only on demand).
	SnapshotEvery uint64
	// SnapshotKeep is how many snapshots are retained (default 3).
	SnapshotKeep int
	// Retention seals the log's older records in the background (see
	// Retention; the zero value never seals).
	Retention Retention
	// AcceptLogGap: when the read model has applied records the log no
	// longer holds (the log lost acknowledged commits: a damaged page, an
	// older log.db restored), Open refuses with ErrLogBehindReadModel and
	// changes nothing, so the lost records can still be salvaged from the
	// file (`hikoutei salvage --head`). With AcceptLogGap set it accepts
	// the loss instead: the read model is set aside (kept), rebuilt from
	// the log, the gap recorded in the log, and Health().Integrity
	// reports it.
	AcceptLogGap bool
	// Sync, when set, materialises the entities into a Google spreadsheet
	// (see SyncOptions). Nil: local-only, never touches the network.
	Sync *SyncOptions
	// NoAdmin: do not serve the administrative channel (the Unix socket
	// DIR/admin.sock through which `hikoutei conflicts ack` and `ping`
	// reach the running store; docs/cli.md "Administrative channel").
	NoAdmin bool
	// Segments is where the store's sealed segments live (Seal,
	// docs/operations.md "Where segments live"), as a URL: "" (the
	// default) is the folder DIR/segments; file:///absolute/folder another
	// folder; any other scheme an object store opened through
	// gocloud.dev/blob, which the program links by importing package
	// github.com/hikoutei/hikoutei-go/segstore/blobstore (mem://, an
	// in-memory bucket, for tests) and the driver of the scheme (e.g.
	// gocloud.dev/blob/s3blob for s3://, gcsblob for gs://, azureblob for
	// azblob://). The URL's credentials and query are never logged nor
	// shown: status and errors show its scheme, bucket and path only.
	// Open fails with ErrSegmentStoreUnavailable when the URL does not
	// parse or names a scheme no linked driver opens.
	Segments string
	// SegmentStore, when set, is used instead of Segments: any
	// segstore.Store (the caller closes it after the store).
	SegmentStore segstore.Store
	// DiskProbe tells the free space of the filesystem holding the store
	// (Store.Disk, Health().Disk); nil asks the kernel (statfs).
	DiskProbe DiskProbe
	// NATS configures wake-ups, conflict notifications and the event
	// mirror. Nil with Sync set = an embedded server with no port when
	// NATSServer is set, else in-process wake-ups (nothing outside the
	// process could reach a server without a port); nil without Sync = no
	// NATS.
	NATS *NATSOptions
	// NATSServer links the embedded NATS server: natsserver.Embedded()
	// (package github.com/hikoutei/hikoutei-go/natsserver). It is needed
	// only when NATS names no server URL (Listen, Mirror on the embedded
	// JetStream); without it such an Open fails with
	// nats_server_not_linked. A program that leaves it nil does not link
	// nats-server (docs/operations.md "Binary size").
	NATSServer EmbeddedNATS
	// Replication, when set, replicates the log on a NATS JetStream
	// cluster (docs/replication.md): as the primary, or as a warm
	// standby (Standby) that follows it and takes over when its lease
	// lapses. Nil: one host, no network, exactly as without it.
	Replication *ReplicationOptions
	// Observer hears of commits (and, when it implements
	// sheetsio.Observer, of every Sheets request): package observe's
	// Metrics. Nil: nothing is measured.
	Observer Observer
	// TracerProvider traces commits, dispatches and polls (span names
	// SpanCommit, SpanDispatch, SpanPoll). Nil: the global provider
	// (otel.GetTracerProvider), a no-op until the application installs
	// one.
	TracerProvider trace.TracerProvider
}

// ReplicationOptions configures replicated mode (docs/replication.md). Each
// commit is stored in the store's R3 JetStream stream
// before it is acknowledged; the writer lease lives in a JetStream KV
// bucket; a deposed primary's appends are refused by the server.
type ReplicationOptions struct {
	// URL is the NATS cluster: comma-separated server URLs (required;
	// ReplicationFromEnv takes HIKOUTEI_NATS_URL). CredsFile, NkeyFile
	// and the TLS files authenticate to it.
	URL                                string
	CredsFile, NkeyFile                string
	TLSCAFile, TLSCertFile, TLSKeyFile string
	// Store names the replicated store, shared by the primary and its
	// standbys (default: the store directory's base name, sanitised to
	// [A-Za-z0-9_-]).
	Store string
	// Replicas of the stream and the lease bucket: 3 (default) or 5;
	// the servers must run JetStream with sync_interval: always.
	Replicas int
	// Standby opens the store as a warm standby: it follows the stream
	// into its own log.db and read model, serves reads (commits fail
	// with ErrStandby) and becomes the primary, starting the sync
	// workers, once the primary's lease may be taken over (I02).
	Standby bool
	// WatchInterval is how often a standby reads the lease (default 1 s).
	WatchInterval time.Duration
	// AppendTimeout bounds one commit's append to the stream, retries
	// included (default 30 s: a try without an answer, as while a stream
	// leader is elected, is retried with the same position and records,
	// which is idempotent). Without an answer in time the commit is uncertain: it fails
	// with ErrLogCommitUncertain and the store refuses commits until it
	// is reopened (it then catches up from the stream first). It bounds
	// as well each write to the key stream of personal fields (a new
	// subject's key, stored before the commit sealed with it; an
	// erasure), the key stream's opening included.
	AppendTimeout time.Duration
}

// Progress reports read-model catch-up or rebuild (Open, Replay).
type Progress struct {
	// Phase: "catch-up" (from the read model's checkpoint), "snapshot"
	// (from a restored snapshot) or "rebuild" (from zero).
	Phase string
	Done  uint64 // events applied so far
	Total uint64 // events to apply
}

// progress adapts a Progress callback to the engine's.
func progress(fn func(Progress)) func(engine.Progress) {
	if fn == nil {
		return nil
	}
	return func(p engine.Progress) { fn(Progress(p)) }
}

// SyncOptions turns on materialisation into one Google spreadsheet. Commits
// then also queue effects in the same log transaction (the durable outbox);
// workers deliver them asynchronously. A commit never waits on, nor fails
// because of, the spreadsheet.
type SyncOptions struct {
	// Name overrides the sync target's name in the outbox and status.
	// Leave it empty: the target is then a digest of SpreadsheetID, so
	// the outbox and all sync state are keyed by spreadsheet and pointing
	// the store at another spreadsheet backfills it completely (the old
	// spreadsheet's unsent effects are superseded).
	Name string
	// SpreadsheetID is the Google spreadsheet id. Never logged.
	SpreadsheetID string
	// Provider talks to Sheets: gsheets.New builds one from Google
	// credentials or an emulator endpoint (package sheetsio/gsheets, or
	// gsync.SyncFromEnv from the environment). Required.
	Provider sheetsio.Client
	// Dispatcher tuning; zero values take the defaults (batch 10,000, pass
	// every 1 s, first probe after 2 s, 10 probes, retries backing off
	// from 1 s to 1 min). ReconcileInterval is the cadence of the
	// reconciliation and anti-entropy pass: 0 takes
	// HIKOUTEI_SYNC_RECONCILE_INTERVAL_MS, else 30 s.
	MaxBatch          int
	Interval          time.Duration
	ProbeDelay        time.Duration
	MaxProbes         int64
	RetryBase         time.Duration
	RetryMax          time.Duration
	ReconcileInterval time.Duration
	// Workers bounds how many batches a dispatcher pass sends in
	// parallel, each carrying whole tabs, all planned on the pass's one
	// preflight read (0: 4; 1: one batch a pass).
	// The provider's quota budget bounds it further: a pass fans out
	// only as far as the budget lets requests start now.
	Workers int
	// LaneLoad is the least work (effects and cell notes) each of those
	// parallel batches carries (0: 500; 1: any): a pass of less than
	// twice that goes out as one batchUpdate, which costs one write of
	// the quota instead of one a tab.
	LaneLoad int
	// DivergedBound is how long a tab may stay diverged (rows differing
	// from canonical state, as the reconciliation found) before
	// SyncHealth.Failing and /healthz fail: 0 takes
	// HIKOUTEI_SYNC_DIVERGED_BOUND_SECONDS (a plain positive integer of
	// seconds; anything else fails Open with ErrSyncStartup), else twice
	// ReconcileInterval.
	DivergedBound time.Duration
	// AuthorityTTL: another store may take the spreadsheet over once this
	// store's authority row went unrefreshed this long (default 2 min).
	AuthorityTTL time.Duration
	// Manual leaves the workers stopped: tests and tools drive them (see
	// package hikouteitest).
	Manual bool
	// PollingInterval and FullScanInterval are the Input poller's cadences:
	// 0 takes HIKOUTEI_SYNC_POLLING_INTERVAL_MS /
	// HIKOUTEI_SYNC_FULL_SCAN_INTERVAL_MS (plain positive integers of
	// milliseconds; anything else fails Open with ErrSyncStartup), else 60 s.
	PollingInterval, FullScanInterval time.Duration
	// LookupEnv reads those variables (nil: the process environment).
	LookupEnv func(string) (string, bool)
	// OnConflict hears of every conflict opened or resolved, in log order,
	// on its own goroutine (never the writer's).
	OnConflict func(ConflictEvent)
	// Routes send the tabs of some entities to other spreadsheets (past
	// the 10,000,000 cells one spreadsheet holds): each routed
	// spreadsheet is a sync target of its own (a digest of its id), with
	// its own authority tab, dispatcher, poller and health, sharing
	// Provider and its quota. The entities of no route stay in
	// SpreadsheetID's, which also lists every conflict (Sync_Conflicts).
	// An invalid route fails Open with ErrSyncStartup and one of
	// ErrSyncRouteEmpty, ErrSyncRouteSpreadsheetTwice,
	// ErrSyncRouteEntityTwice, ErrSyncRouteEntityUnknown. See docs/sync.md
	// "More than one spreadsheet".
	Routes []SyncRoute
}

// SyncRoute sends the tabs of Entities (declared entity names) to the
// spreadsheet SpreadsheetID (never logged).
type SyncRoute struct {
	SpreadsheetID string
	Entities      []string
}

// EmbeddedNATS starts a store's embedded NATS server. Package natsserver
// provides the one implementation (natsserver.Embedded()); keeping it out of
// this package keeps nats-server out of programs that do not use it.
type EmbeddedNATS interface {
	natsbus.ServerStarter
}

// NATSOptions configures the store's NATS layer: wake-ups for the sync
// workers (subjects hikoutei.<store>.wake.dispatch / wake.poll), conflict
// notifications (conflict.opened / conflict.resolved, JSON schema 1) and the
// optional JetStream mirror of committed events. By default, when sync is
// on, an embedded nats-server runs in-process with no listening port (with
// Options.NATSServer; without it the wake-ups stay in process). Without a
// URL the options need Options.NATSServer.
// Wake-ups are hints: NATS being down never blocks a commit and the workers'
// timers still converge. docs/nats.md "NATS trust model" says who may read and
// publish what.
type NATSOptions struct {
	// Disabled turns NATS off (timers only).
	Disabled bool
	// Store is the subject token (default: the store directory's base
	// name, sanitised to [A-Za-z0-9_-]).
	Store string
	// URL of an existing server or cluster (default env HIKOUTEI_NATS_URL;
	// empty = embedded server, which needs Options.NATSServer). CredsFile (JWT .creds), NkeyFile (nkey
	// user seed) and the TLS files apply to it.
	URL                                string
	CredsFile, NkeyFile                string
	TLSCAFile, TLSCertFile, TLSKeyFile string
	// Listen makes the embedded server accept clients on "host:port" so
	// external tools can subscribe (e.g. "127.0.0.1:4222"). Clients must
	// authenticate with an nkey: by default the seed generated in
	// <dir>/nats-client.nk (mode 0600; delete it and reopen to rotate),
	// or, when ListenNkeys is set, one of those public user keys ("U…")
	// instead. Clients may subscribe, publish wake-ups and read the
	// mirror; only the store publishes events and conflict notifications.
	Listen      string
	ListenNkeys []string
	// ListenNoAuth accepts clients without authentication: allowed only
	// on a loopback address; any other fails Open with
	// nats_listen_unauthenticated.
	ListenNoAuth bool
	// IncludeValues puts cell values into conflict notifications (off: they
	// may be personal data).
	IncludeValues bool
	// Mirror publishes every committed event to a JetStream stream for
	// remote auditors: the record without its fencing token, signed with
	// the key in <dir>/nats-mirror.nk (created 0600 on first use), with
	// Nats-Msg-Id = global seq. Readers verify checksum, signature and
	// sequence; a record in the stream this store did not write stops the
	// mirror and shows in Health.Mirror.
	Mirror bool
	// MirrorStream and MirrorSubject override the stream name
	// ("HIKOUTEI_<STORE>") and subject ("hikoutei.<store>.events").
	MirrorStream, MirrorSubject string
	// MirrorLagBound is how long the oldest committed record may wait
	// for the mirror before Health.Mirror is not ok (nats_mirror_behind;
	// default DefaultMirrorLagBound). Every commit, whoever made it
	// (the application, the poller, the dispatcher, a resolution),
	// nudges the mirror (I36).
	MirrorLagBound time.Duration
}

// DefaultMirrorLagBound is the default NATSOptions.MirrorLagBound: twice
// the mirror's longest wait between two attempts after a failure (30 s),
// so one failed attempt and its retry fit in it.
const DefaultMirrorLagBound = 60 * time.Second

// Store is an open store directory: the fenced log, the single writer and
// the SQLite read model. Safe for concurrent use.
type Store struct {
	e        *engine.Engine
	byType   map[reflect.Type]*EntityDef // the declared Go types
	adm      *admin.Server               // the administrative channel (nil with NoAdmin)
	observer Observer                    // nil: no metrics
	tracer   trace.Tracer
	disk     *disk.Monitor // the store's disk and its size samples
	keys     *keys         // the key file of personal values (docs/erasure.md)
	shownBy  *sheetKeys    // lends keys to the engine: the sheet shows opened values
	krep     *keyReplica   // a replicated store's key stream (nil: not replicated)
	// segs is where the sealed segments live; ownSegs is true when Open
	// opened it from Options.Segments (Close closes it).
	segs    segstore.Store
	ownSegs bool
	segp    segPresence // the last comparison of the manifest with the segment store's list
}

// ReadModelFile is the read model's file name inside a store directory.
const ReadModelFile = "read.sqlite"

// Open opens (creating if needed) the store directory dir for writing with
// the declared entities. It takes the writer lease, brings read.sqlite up
// to the log head — rebuilding it from the log when it is missing, corrupt
// or built for other entity shapes — and starts the single writer (and,
// with Sync, the workers).
//
// When the declared shapes differ from those the store last recorded,
// Open classifies the change (docs/evolving.md): an added field or
// entity, a dropped or renamed (was=) field, a field people may now edit,
// a reorder, or a retype every current value converts to losslessly is
// recorded and the read model migrated to the new shapes; a change some
// current values cannot take (a retype, a new primary key, a removed
// entity with records) is refused with *ShapeChangeError
// (ErrShapeIncompatible) and nothing is written, unless Options.Migrations
// maps it (Migrate). PlanShapeChange says what would happen without
// writing.
//
// Errors: ErrInvalidEntity; ErrShapeIncompatible; ErrMigrationInvalid,
// ErrMigrationFailed; ErrSyncStartup; ErrStoreLocked / ErrLeaseHeld when
// another writer has the store; I/O errors; the context's.
//
// ctx bounds Open only, not the store's life: its deadline shortens the
// waits for another process's file lock (OpenTimeout) and for a dead
// writer's lease (AcquireWait), and a catch-up or rebuild of the read
// model stops between batches once ctx is done.
func Open(ctx context.Context, dir string, opts Options, entities ...EntityDef) (*Store, error) {
	byType, shapes, err := declare(entities)
	if err == nil {
		err = declaredMigrations(opts.Migrations, shapes)
	}
	if err != nil {
		return nil, err
	}
	return open(ctx, dir, opts, byType, engine.Declare(renamesOf(entities), shapes...))
}

// renamesOf collects the was= names of the declarations.
func renamesOf(entities []EntityDef) aggregates.Renames {
	out := aggregates.Renames{}
	for _, d := range entities {
		if r := d.renames(); len(r) > 0 {
			out[d.name] = r
		}
	}
	return out
}

// OpenDeclared opens a store with the entity shapes recorded in its own log
// instead of Go types: for tools that operate on any store. Typed reads and
// Persist need Open. Errors and ctx as Open; ErrNotAStore when dir holds
// no store.
func OpenDeclared(ctx context.Context, dir string, opts Options) (*Store, error) {
	if r := opts.Replication; r == nil || !r.Standby {
		if err := engine.IsStore(dir); err != nil {
			return nil, err
		}
	}
	return open(ctx, dir, opts, nil, engine.Declared)
}

func open(ctx context.Context, dir string, opts Options, byType map[reflect.Type]*EntityDef, entities engine.Entities) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg, err := engineConfig(boundWaits(ctx, opts))
	if err != nil {
		return nil, err
	}
	cfg.Context = ctx
	segs, own, err := openSegments(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	cfg.Segments = segs
	sk := &sheetKeys{}
	cfg.Shown = sk.shown
	kr := newKeyReplica(opts, &cfg)
	lendHooks(opts)
	boot, err := replayKeys(dir, byType) // masks what Open projects before the key file opens
	if err != nil {
		return nil, errors.Join(err, closeSegments(segs, own))
	}
	e, err := engine.Open(dir, cfg, masking(entities, sk.orBoot(boot)))
	sk.boot.Store(nil)
	if cerr := boot.close(); err == nil && cerr != nil {
		err = errors.Join(cerr, e.Close())
	}
	if err != nil {
		return nil, errors.Join(err, closeSegments(segs, own))
	}
	s := &Store{e: e, byType: byType, observer: opts.Observer, tracer: tracer(opts.TracerProvider),
		disk: disk.NewMonitor(e.Dir(), diskProbe(opts.DiskProbe)), segs: segs, ownSegs: own, shownBy: sk, krep: kr}
	if err := s.start(ctx, opts); err != nil {
		return nil, errors.Join(err, s.closeOpened())
	}
	s.openCheck() // upload litter removed, a first comparison reported by Health
	// The open's own commits are copied into read.sqlite before Open
	// returns, not by a background checkpoint landing later: read.sqlite
	// is left alone until the next commit (a failure is retried after the
	// next commit, see CheckpointReadModel).
	_ = s.e.CheckpointReadModel()
	return s, nil
}

// start opens the key file of personal values and the administrative
// channel of a store whose engine is open.
func (s *Store) start(ctx context.Context, opts Options) error {
	k, err := openKeys(s.e.Dir(), s.byType)
	if err != nil {
		return err
	}
	s.keys = k
	s.recordPersonal()
	s.e.SetAdoptGuard(s.adoptPersonal)
	s.shownBy.k.Store(k)
	if err := s.startKeyReplica(ctx); err != nil {
		return err
	}
	if err := s.startKeys(ctx); err != nil {
		return err
	}
	if opts.NoAdmin {
		return nil
	}
	return s.startAdmin()
}

// closeOpened closes what open opened before a later step failed.
func (s *Store) closeOpened() error {
	err := s.e.Close()
	s.krep.stopFollowing()
	return errors.Join(err, s.keys.close(), closeSegments(s.segs, s.ownSegs))
}

// boundWaits shortens Open's waits (OpenTimeout, AcquireWait) to what
// is left before ctx's deadline.
func boundWaits(ctx context.Context, o Options) Options {
	dl, ok := ctx.Deadline()
	if !ok {
		return o
	}
	left := max(time.Until(dl), time.Millisecond)
	if o.OpenTimeout == 0 || o.OpenTimeout > left {
		o.OpenTimeout = left
	}
	if o.AcquireWait >= 0 && (o.AcquireWait == 0 || o.AcquireWait > left) {
		o.AcquireWait = left
	}
	return o
}

// lendHooks lends the sync provider the store's logger (when it was
// built without one, as gsync.SyncFromEnv builds it) and the observer, so its
// retries, waits and failures are logged and measured.
func lendHooks(o Options) {
	if o.Sync == nil || o.Sync.Provider == nil {
		return
	}
	h := sheetsio.Hooks{Logger: cmp.Or(o.Logger, slog.Default())}
	if so, ok := o.Observer.(sheetsio.Observer); ok {
		h.Observer = so
	}
	o.Sync.Provider.Adopt(h)
}

// declare checks the entity definitions and returns them by Go type, with
// their shapes (what the engine's registry is built from).
func declare(entities []EntityDef) (map[reflect.Type]*EntityDef, []events.EntityShape, error) {
	byType, names := map[reflect.Type]*EntityDef{}, map[string]bool{}
	shapes := make([]events.EntityShape, 0, len(entities))
	for i := range entities {
		d := &entities[i]
		if d.err != nil {
			return nil, nil, d.err
		}
		if byType[d.typ] != nil || names[d.name] {
			return nil, nil, fmt.Errorf("%w: %s declared twice", ErrInvalidEntity, d.name)
		}
		byType[d.typ], names[d.name] = d, true
		shapes = append(shapes, d.shape())
	}
	return byType, shapes, nil
}

// engineConfig maps the options onto the engine's configuration,
// resolving the poller cadences from the environment.
func engineConfig(o Options) (engine.Config, error) {
	c := engine.Config{Clock: o.Clock, Operation: o.Operation, OpenTimeout: o.OpenTimeout, AcquireWait: o.AcquireWait,
		HeartbeatInterval: o.HeartbeatInterval, LeaseTTL: o.LeaseTTL, ReadConns: o.ReadConns, Progress: progress(o.Progress), Logger: o.Logger,
		SnapshotEvery: o.SnapshotEvery, SnapshotKeep: o.SnapshotKeep, AcceptLogGap: o.AcceptLogGap,
		Retention: o.Retention.policy()}
	var err error
	if c.Migrations, err = engineMigrations(o.Migrations); err != nil {
		return c, err
	}
	if n := o.NATS; n != nil {
		c.NATS = &engine.NATSConfig{Disabled: n.Disabled, Store: n.Store, URL: n.URL, CredsFile: n.CredsFile, NkeyFile: n.NkeyFile,
			TLSCAFile: n.TLSCAFile, TLSCertFile: n.TLSCertFile, TLSKeyFile: n.TLSKeyFile, Listen: n.Listen, ListenNkeys: n.ListenNkeys,
			ListenNoAuth: n.ListenNoAuth, IncludeValues: n.IncludeValues, Mirror: n.Mirror, MirrorStream: n.MirrorStream, MirrorSubject: n.MirrorSubject,
			MirrorLagBound: n.MirrorLagBound}
	}
	c.NATSServer = o.NATSServer
	if r := o.Replication; r != nil {
		c.Replication = &engine.ReplicationConfig{URL: r.URL, CredsFile: r.CredsFile, NkeyFile: r.NkeyFile, TLSCAFile: r.TLSCAFile,
			TLSCertFile: r.TLSCertFile, TLSKeyFile: r.TLSKeyFile, Store: r.Store, Replicas: r.Replicas, Standby: r.Standby,
			WatchInterval: r.WatchInterval, AppendTimeout: r.AppendTimeout}
	}
	if o.Sync == nil {
		return c, nil
	}
	sc, err := syncConfig(*o.Sync)
	sc.Tracer = tracer(o.TracerProvider)
	c.Sync = &sc
	return c, err
}

func syncConfig(o SyncOptions) (engine.SyncConfig, error) {
	c := engine.SyncConfig{Name: o.Name, SpreadsheetID: o.SpreadsheetID, Provider: o.Provider, MaxBatch: o.MaxBatch,
		Interval: o.Interval, ProbeDelay: o.ProbeDelay, MaxProbes: o.MaxProbes, RetryBase: o.RetryBase, RetryMax: o.RetryMax,
		ReconcileInterval: o.ReconcileInterval, AuthorityTTL: o.AuthorityTTL, Manual: o.Manual, DivergedBound: o.DivergedBound,
		PollingInterval: o.PollingInterval, FullScanInterval: o.FullScanInterval, Workers: o.Workers, LaneLoad: o.LaneLoad}
	for _, r := range o.Routes {
		c.Routes = append(c.Routes, engine.RouteConfig{SpreadsheetID: r.SpreadsheetID, Entities: slices.Clone(r.Entities)})
	}
	if hook := o.OnConflict; hook != nil {
		c.OnConflict = func(n engine.ConflictNotice) { hook(conflictEvent(n)) }
	}
	cad := config.Cadences{Polling: o.PollingInterval, FullScan: o.FullScanInterval, Reconcile: o.ReconcileInterval,
		DivergedBound: o.DivergedBound}
	if err := cad.Resolve(o.LookupEnv); err != nil {
		return c, fmt.Errorf("%w: %w", ErrSyncStartup, err)
	}
	c.PollingInterval, c.FullScanInterval, c.ReconcileInterval, c.DivergedBound = cad.Polling, cad.FullScan, cad.Reconcile, cad.DivergedBound
	return c, nil
}

// Dir is the store directory.
func (s *Store) Dir() string { return s.e.Dir() }

// ReadModelPath is the path of read.sqlite, which any SQLite tool can open
// read-only while the store runs.
func (s *Store) ReadModelPath() string { return s.e.ReadModelPath() }

// Close stops the workers (they settle what they hold first) and the
// writer (pending commits finish first), closes the read model and
// releases the writer lease, removing lease.toml so another process can
// open the store at once. The administrative channel closes first: the
// requests it is running finish, later ones answer store_closing, and
// admin.sock is removed. Errors: the first failure; ErrStoreClosed on a
// second call. Close takes no context, so that it is an io.Closer and
// `defer store.Close()` works: what it waits for is work already in
// flight, each piece bounded by its own timeout (a Sheets request's).
func (s *Store) Close() error {
	aerr := s.closeAdmin()
	err := s.e.Close()
	s.krep.stopFollowing()
	serr := closeSegments(s.segs, s.ownSegs)
	s.ownSegs = false
	kerr := s.keys.close()
	if err != nil {
		return err
	}
	return errors.Join(aerr, serr, kerr)
}
