package hikoutei

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// Options configures Open. The zero value is a local-only store on the wall
// clock: it never needs a spreadsheet, credentials or a network.
type Options struct {
	// Clock supplies `now` for every decision and the lease (default wall clock).
	Clock events.Clock
	// Operation is recorded in lease.toml and the lease events (default "embed").
	Operation string
	// OpenTimeout bounds the wait for another process's file lock
	// (default 1 s), after which Open fails with events.ErrStoreLocked.
	OpenTimeout time.Duration
	// AcquireWait bounds the wait for a dead writer's lease to become
	// takeable (default 20 s; negative = fail at once with events.ErrLeaseHeld).
	AcquireWait time.Duration
	// ReadConns is the size of the read connection pool (default 4).
	ReadConns int
	// Progress, if set, receives progress while the read model catches up
	// with or is rebuilt from the log at Open.
	Progress func(Progress)
	// Logger receives operational messages (default slog.Default()). It
	// never receives credentials, spreadsheet ids or field values.
	Logger *slog.Logger
	// NoSync skips fsync of log commits. Benchmarks only: a crash may lose
	// acknowledged commits.
	NoSync bool
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
	// Sync, when set, materialises the entities into a Google spreadsheet
	// (see SyncOptions). Nil: local-only, never touches the network.
	Sync *SyncOptions
	// NATS configures wake-ups, conflict notifications and the event
	// mirror. Nil with Sync set = an embedded server with no port; nil
	// without Sync = no NATS.
	NATS *NATSOptions
}

// Progress reports read-model catch-up or rebuild at Open.
type Progress struct {
	// Phase: "catch-up" (from the read model's checkpoint), "snapshot"
	// (from a restored snapshot) or "rebuild" (from zero).
	Phase string
	Done  uint64 // events applied so far
	Total uint64 // events to apply
}

// Store is an open store directory: the fenced log, the single writer and
// the SQLite read model. Safe for concurrent use.
type Store struct {
	dir   string
	opts  Options
	log   *slog.Logger
	w     *events.Writer
	proj  *projector.Projector
	pool  *sqlitex.Pool
	snaps *snapshots.Dir
	// lastSnap is the checkpoint of the newest snapshot (writer goroutine).
	lastSnap uint64
	byType   map[reflect.Type]*EntityDef
	byName   map[string]*EntityDef
	// defsInOrder is the declaration order (the tab layout follows it).
	defsInOrder []*EntityDef
	sync        *syncState
	nats        *natsState

	mu     sync.RWMutex // guards closed against in-flight Commit sends
	closed bool
	reqs   chan *commitReq
	stop   chan struct{}
	done   chan struct{}
	behind bool  // the read model missed a batch; owned by the writer goroutine
	stats  Stats // owned by the writer goroutine
	// failAfterAppend makes the next projection fail (tests: death between
	// the log commit and the projection).
	failAfterAppend bool
}

// ReadModelFile is the read model's file name inside a store directory.
const ReadModelFile = projector.FileName

// Open opens (creating if needed) the store directory dir for writing with
// the declared entities. It takes the writer lease (events.OpenWriter),
// brings read.sqlite up to the log head — rebuilding it from the log when it
// is missing, corrupt or built for other entity shapes — and starts the
// single writer. Errors: ErrInvalidEntity; events.ErrStoreLocked /
// events.ErrLeaseHeld when another writer has the store; I/O errors.
func Open(dir string, opts Options, entities ...EntityDef) (*Store, error) {
	return open(dir, opts, func(*events.Log) ([]EntityDef, error) { return entities, nil })
}

// OpenDeclared opens a store with the entity shapes recorded in its own log
// (the latest schema.declared event) instead of Go types: for tools (the
// CLI) that operate on any store. Typed reads and Persist need Open.
// Errors as Open; ErrInvalidEntity when the log declares no entities.
func OpenDeclared(dir string, opts Options) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, events.LogFileName)); err != nil {
		return nil, fmt.Errorf("%w: %s has no %s", ErrNotAStore, dir, events.LogFileName)
	}
	return open(dir, opts, DeclaredEntities)
}

// ErrNotAStore: a tool was pointed at a directory that holds no store; it
// creates nothing there.
var ErrNotAStore = errors.New("not_a_store")

func open(dir string, opts Options, entities func(*events.Log) ([]EntityDef, error)) (*Store, error) {
	s := newStore(dir, opts)
	var err error
	s.w, err = events.OpenWriter(dir, events.WriterOptions{
		Log:       events.Options{Clock: s.opts.Clock, OpenTimeout: opts.OpenTimeout, NoSync: opts.NoSync, Upcasters: aggregates.Upcasters()},
		Operation: s.opts.Operation, AcquireWait: opts.AcquireWait, HeartbeatInterval: opts.HeartbeatInterval, LeaseTTL: opts.LeaseTTL,
	})
	if err != nil {
		return nil, err
	}
	if err := s.start(entities); err != nil {
		s.w.Close()
		return nil, err
	}
	go s.run()
	if err := s.startNATS(); err != nil {
		s.Close()
		return nil, err
	}
	s.startSync()
	return s, nil
}

// start declares the entities, records their shapes in the log when they
// changed, and brings the read model up to the log head.
func (s *Store) start(entities func(*events.Log) ([]EntityDef, error)) error {
	defs, err := entities(s.w.Log())
	if err == nil {
		err = s.declare(defs)
	}
	if err == nil {
		err = s.recordSchema()
	}
	if err != nil {
		return err
	}
	return s.openReadModel()
}

func newStore(dir string, opts Options) *Store {
	if opts.Clock == nil {
		opts.Clock = events.SystemClock{}
	}
	if opts.Operation == "" {
		opts.Operation = "embed"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	return &Store{dir: dir, opts: opts, log: opts.Logger, byType: map[reflect.Type]*EntityDef{}, byName: map[string]*EntityDef{},
		reqs: make(chan *commitReq), stop: make(chan struct{}), done: make(chan struct{})}
}

// declare registers the entity definitions and sets up sync for them.
func (s *Store) declare(entities []EntityDef) error {
	for i := range entities {
		d := &entities[i]
		if d.err != nil {
			return d.err
		}
		if d.typ != nil && s.byType[d.typ] != nil || s.byName[d.name] != nil {
			return fmt.Errorf("%w: %s declared twice", ErrInvalidEntity, d.name)
		}
		if d.typ != nil {
			s.byType[d.typ] = d
		}
		s.byName[d.name] = d
		s.defsInOrder = append(s.defsInOrder, d)
	}
	return s.setupSync()
}

func (s *Store) schema() projector.Schema {
	var sc projector.Schema
	for _, d := range s.byName {
		sc.Tables = append(sc.Tables, d.table())
	}
	return sc
}

// openReadModel opens read.sqlite, rebuilding it when invalid, then catches
// up from its checkpoint to the log head and opens the read pool.
func (s *Store) openReadModel() error {
	head, err := s.w.Log().Head()
	if err != nil {
		return err
	}
	if s.snaps, err = snapshots.Open(s.dir, s.opts.SnapshotKeep, s.log); err != nil {
		return err
	}
	phase := "catch-up"
	s.proj, phase, err = s.openProjector(head)
	if err != nil {
		return err
	}
	s.lastSnap = s.proj.Checkpoint()
	if err := s.catchUp(head, phase); err != nil {
		return err
	}
	s.pool, err = sqlitex.NewPool(s.ReadModelPath(), sqlitex.PoolOptions{Flags: sqlite.OpenReadOnly, PoolSize: s.opts.ReadConns})
	return err
}

// openProjector opens read.sqlite; when it is unusable it restores the
// newest valid snapshot, or else starts from an empty read model. It returns
// the phase the catch-up will be in.
func (s *Store) openProjector(head uint64) (*projector.Projector, string, error) {
	opts := projector.Options{StoreID: s.w.Log().StoreID(), Schema: s.schema()}
	_, statErr := os.Stat(s.ReadModelPath())
	err := fmt.Errorf("%w: %s is missing", projector.ErrReadModelInvalid, ReadModelFile)
	if statErr == nil {
		var p *projector.Projector
		if p, err = openAtMost(s.ReadModelPath(), opts, head); !errors.Is(err, projector.ErrReadModelInvalid) {
			return p, "catch-up", err
		}
	}
	if statErr == nil {
		s.log.Warn("read model unusable; restoring from a snapshot or rebuilding from the log", "reason", err.Error())
	} else if head > 0 {
		s.log.Info("read model missing; restoring from a snapshot or rebuilding from the log")
	}
	if err := removeReadModel(s.ReadModelPath()); err != nil {
		return nil, "", err
	}
	if p, err := s.restoreSnapshot(opts, head); err == nil {
		return p, "snapshot", nil
	}
	p, err := projector.Open(s.ReadModelPath(), opts)
	return p, "rebuild", err
}

// openAtMost opens a read model and rejects one ahead of the log head.
func openAtMost(path string, opts projector.Options, head uint64) (*projector.Projector, error) {
	p, err := projector.Open(path, opts)
	if err != nil || p.Checkpoint() <= head {
		return p, err
	}
	p.Close()
	return nil, fmt.Errorf("%w: checkpoint %d is past the log head %d", projector.ErrReadModelInvalid, p.Checkpoint(), head)
}

func (s *Store) restoreSnapshot(opts projector.Options, head uint64) (*projector.Projector, error) {
	m, err := s.snaps.Newest(opts.StoreID, head)
	if err == nil {
		err = s.snaps.Restore(m, s.ReadModelPath())
	}
	if err != nil {
		return nil, err
	}
	p, err := openAtMost(s.ReadModelPath(), opts, head)
	if err != nil {
		s.log.Warn("restored snapshot unusable; rebuilding from zero", "seq", m.Seq, "reason", err.Error())
		return nil, errors.Join(err, removeReadModel(s.ReadModelPath()))
	}
	return p, nil
}

// removeReadModel deletes read.sqlite and its WAL files (a projection: the
// log holds everything in it).
func removeReadModel(path string) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove read model: %w", err)
		}
	}
	return nil
}

// catchUpBatch is how many events one SQLite transaction applies while
// catching up or rebuilding.
const catchUpBatch = 2048

func (s *Store) catchUp(head uint64, phase string) error {
	return applyLog(s.w.Log(), s.proj, head, phase, s.opts.Progress)
}

// Dir is the store directory.
func (s *Store) Dir() string { return s.dir }

// ReadModelPath is the path of read.sqlite, which any SQLite tool can open
// read-only while the store runs.
func (s *Store) ReadModelPath() string { return filepath.Join(s.dir, ReadModelFile) }

// Log is the store's event log, for audits and replays (reads only).
func (s *Store) Log() *events.Log { return s.w.Log() }

// Lease is the writer lease this store holds.
func (s *Store) Lease() events.Lease { return s.w.Lease() }

// Checkpoint is the last log sequence applied to the read model.
func (s *Store) Checkpoint() uint64 {
	r := make(chan uint64, 1)
	if err := s.send(&commitReq{query: func() { r <- s.proj.Checkpoint() }}); err != nil {
		return 0
	}
	return <-r
}

// Close stops the writer (pending commits finish first), closes the read
// model and releases the writer lease, removing lease.toml so another
// process can open the store at once. Errors: the first failure;
// ErrStoreClosed on a second call.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrStoreClosed
	}
	s.mu.Unlock()
	syncErr := s.stopSync() // workers settle what they hold while the writer still runs
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	natsErr := s.stopNATS()
	relErr := s.releaseAndProject()
	return errors.Join(syncErr, natsErr, relErr, s.pool.Close(), s.proj.Close(), s.w.Close())
}

// releaseAndProject releases the lease while the read model is still open
// and applies the lease.released event to it, so the read model of a closed
// store equals its log.
func (s *Store) releaseAndProject() error {
	if err := s.w.Release(); err != nil {
		return err
	}
	head, err := s.w.Log().Head()
	if err != nil {
		return err
	}
	return applyLog(s.w.Log(), s.proj, head, "catch-up", nil)
}
