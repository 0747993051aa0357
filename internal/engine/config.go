package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	"github.com/hikoutei/hikoutei-go/internal/retention"
	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Config configures Open; the root package's Options map onto it.
type Config struct {
	Clock             events.Clock // `now` for every decision and the lease (default wall clock)
	Operation         string       // recorded in lease.toml and the lease events (default "embed")
	OpenTimeout       time.Duration
	AcquireWait       time.Duration
	HeartbeatInterval time.Duration
	LeaseTTL          time.Duration
	ReadConns         int // read pool size (default 4)
	Progress          func(Progress)
	// Context bounds Open's own work: the read model's catch-up or
	// rebuild stops between batches once it is done (nil: never).
	Context context.Context
	Logger  *slog.Logger
	NoSync  bool // benchmarks only: no fsync of log commits
	// Segments is where the log's sealed segments live (nil: the store
	// directory's segments folder). The engine does not close it.
	Segments segstore.Store
	// AcceptLogGap lets Open go on when the read model is ahead of the log
	// (see findLogGap); without it Open refuses with *LogGapError.
	AcceptLogGap  bool
	SnapshotEvery uint64
	SnapshotKeep  int
	// Retention seals the log's older records in the background when a
	// batch is due (retention.Policy; the zero policy never seals).
	Retention retention.Policy
	// ChainCheckEvery is how many records the store appends between two
	// checks of the records appended since the chain checkpoint, which
	// then moves to the head (default DefaultChainCheckEvery).
	ChainCheckEvery uint64
	// Migrations map the records of entities whose shape changed in a way
	// some current values cannot take (see Migration); each runs once.
	Migrations []Migration
	Sync       *SyncConfig // nil: local only
	NATS       *NATSConfig // nil: none without sync, embedded (or in process, see NATSServer) with sync
	// NATSServer starts the embedded NATS server (package natsserver);
	// nil: none is linked. Then NATS without a URL fails Open with
	// nats_server_not_linked, and sync without NATS options wakes its
	// dispatcher in process instead of through a server without a port.
	NATSServer natsbus.ServerStarter
	// Replication, when set, replicates the log on a JetStream stream
	// (primary) or follows it (Standby). Nil: one host, as always.
	Replication *ReplicationConfig
	// Fault, when set, makes the next projection after a log commit fail
	// (tests: death between the log commit and the projection).
	Fault *Fault
	// Shown turns a record's values into what its rows show in the sheet
	// (nil: as they are): sealed personal values opened (docs/erasure.md).
	Shown ShownFunc
	// Keys carries a replicated store's personal data keys (nil: none;
	// docs/replication.md, "Personal data keys").
	Keys *KeyHooks
}

// KeyHooks let the owner of the key file follow a replicated store's
// roles. Each may be nil.
type KeyHooks struct {
	// Followed is called on a standby after each followed commit is
	// projected (the log's new subject.erased events are applied to the
	// key file).
	Followed func()
	// Takeover is called at a takeover once the writer is open, before the
	// store commits or syncs anything: the key file catches up with the
	// key stream. An error fails the takeover.
	Takeover func() error
}

// Fault injects failures at durability boundaries (tests).
type Fault struct {
	FailNextProjection bool
}

// Progress reports read-model catch-up or rebuild.
type Progress struct {
	// Phase: "catch-up" (from the read model's checkpoint), "snapshot"
	// (from a restored snapshot) or "rebuild" (from zero).
	Phase string
	Done  uint64 // events applied so far
	Total uint64 // events to apply
}

// SyncConfig turns on materialisation into one spreadsheet.
type SyncConfig struct {
	Name          string // the sync target's name in the outbox (default: TargetKey(SpreadsheetID))
	SpreadsheetID string
	Provider      sheetsio.Client
	// Dispatcher tuning; zero values take effects.Config defaults.
	MaxBatch          int
	Workers           int
	LaneLoad          int
	Interval          time.Duration
	ProbeDelay        time.Duration
	MaxProbes         int64
	RetryBase         time.Duration
	RetryMax          time.Duration
	ReconcileInterval time.Duration
	AuthorityTTL      time.Duration
	// DivergedBound is how long a tab may stay diverged before sync
	// health fails (0: twice the reconciliation interval).
	DivergedBound time.Duration
	// Manual leaves the workers stopped: tests and tools drive them.
	Manual bool
	// Wake and PollWake deliver wake-up hints (NATS fills them when nil).
	Wake, PollWake <-chan struct{}
	// PollingInterval and FullScanInterval are the poller's cadences
	// (resolved by the caller: options, then the environment, then 60 s).
	PollingInterval, FullScanInterval time.Duration
	// OnConflict hears of conflicts opened and resolved, in log order, on
	// its own goroutine.
	OnConflict func(ConflictNotice)
	// Tracer traces the workers' dispatches and polls (nil: no tracing).
	Tracer trace.Tracer
	// Routes send the tabs of some entities to other spreadsheets, each
	// its own sync target (TargetKey of its id) with its own authority,
	// dispatcher and poller; the entities of no route stay in
	// SpreadsheetID's.
	Routes []RouteConfig
}

// RouteConfig sends the tabs of Entities to the spreadsheet SpreadsheetID.
type RouteConfig struct {
	SpreadsheetID string
	Entities      []string
}

// NATSConfig configures the store's NATS layer (see the root NATSOptions).
type NATSConfig struct {
	Disabled                           bool
	Store                              string
	URL                                string
	CredsFile, NkeyFile                string
	TLSCAFile, TLSCertFile, TLSKeyFile string
	Listen                             string
	ListenNkeys                        []string
	ListenNoAuth                       bool
	IncludeValues                      bool
	Mirror                             bool
	MirrorStream, MirrorSubject        string
	MirrorLagBound                     time.Duration // 0: DefaultMirrorLagBound
}

// ConflictNotice tells OnConflict of a conflict opened or resolved.
type ConflictNotice struct {
	Type        events.Type // conflict.opened or conflict.resolved
	ConflictID  string
	Entity, ID  string
	Field       string
	SystemValue string
	SheetValue  string
	Resolution  events.Resolution
	Actor       events.Actor // who resolved it ("" before actors were recorded)
	Seq         uint64       // log sequence of the event
	// CanonicalRevision and CandidateEpoch are the conflict's fence at
	// detection (what acknowledge_system needs).
	CanonicalRevision uint64
	CandidateEpoch    int64
}

// check rejects a configuration that cannot start. Errors: ErrSyncStartup.
func (c Config) check() error {
	if s := c.Sync; s != nil && (s.Provider == nil || s.SpreadsheetID == "") {
		return fmt.Errorf("%w: sync needs a provider and a spreadsheet id", ErrSyncStartup)
	}
	// The variables the engine reads from the process itself, parsed
	// strictly whether or not this store uses them.
	if err := failpoint.CheckEnv(nil); err != nil {
		return err
	}
	if _, err := config.LoadNATSURL(nil); err != nil {
		return err
	}
	return c.NATS.check()
}

func (c Config) withDefaults() Config {
	if c.Clock == nil {
		c.Clock = events.SystemClock{}
	}
	if c.Operation == "" {
		c.Operation = "embed"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ReadConns <= 0 {
		c.ReadConns = 4
	}
	if c.ChainCheckEvery == 0 {
		c.ChainCheckEvery = DefaultChainCheckEvery
	}
	return c
}
