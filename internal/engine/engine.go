// Package engine is the store's engine: the fenced log's single writer and
// its group commit, the read-decide-append paths of commits, the outbox,
// inbound observations and conflicts, backfill and divergence, the read
// model's upkeep, the sheet layout derivation, and the sync workers' life
// cycle. It implements the effects.Outbox and effects.Inbound contracts.
// Decisions are aggregates'; the engine reads the state they need, calls
// them and appends what they return.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// Engine is an open store directory: the fenced log, the single writer,
// the SQLite read model and, with sync on, the workers. Safe for
// concurrent use.
type Engine struct {
	dir  string
	cfg  Config
	log  *slog.Logger
	w    atomic.Pointer[events.Writer] // nil while a standby
	reg  *Registry
	hist events.ShapeHistory // the log's shape eras, read at Open (after a shape change is recorded)
	// changingShapes is set while the unit recording a change of shapes
	// is decided: every effect pending then was queued under the older
	// declaration (see queuedUnderOlderShapes).
	changingShapes bool
	roLog          *events.Log  // the log of an engine without a writer that plans a shape change (PlanShapeChange)
	sheet          *sheet       // the spreadsheet layout of the registry
	lay            *layoutState // the layouts of every declaration, the tabs to migrate (nil without sync)
	proj           *projector.Projector
	pool           *sqlitex.Pool
	snaps          *snapshots.Dir
	sync           *syncState                          // nil without sync (the default spreadsheet's)
	routes         []*syncState                        // the routed spreadsheets' (SyncConfig.Routes)
	wakes          []wakeFan                           // with routes: the wake-ups every target shares (shareWakes)
	notes          syncNotes                           // what the sync workers tell health (in memory)
	nats           *natsState                          // nil without NATS
	wake           chan struct{}                       // in-process dispatcher wake-ups (sync without NATS or a server; nil otherwise)
	repl           *replState                          // nil unless replicated (Config.Replication)
	subs           subscriptions                       // the running subscriptions and their commit bell
	act            *activity                           // INFO lines of what the sync workers do, rate-limited
	adoptGuard     func(context.Context, string) error // asked before every adoption (SetAdoptGuard)
	adoptMu        sync.Mutex
	adoptRuns      map[string]int // the adoptions running in this store, by tab

	// newLog: log.db did not exist when Open began (a brand-new store,
	// whose read model is created, not missing).
	newLog bool

	mu     sync.RWMutex // guards closed against in-flight sends
	closed bool
	reqs   chan *request
	stop   chan struct{}
	done   chan struct{}

	running atomic.Bool  // the writer goroutine was started (see startWriter)
	chains  *chainChecks // the checks of the chain beside the writer (set by startWriter)
	retain  *retainer    // the background sealing (set by startWriter when a retention policy is on)

	gap   *events.LogGapDetected // found at open; read-only once Open returns
	holes events.SeqRanges       // the log's holes (lost sequences), read at open; read-only once Open returns
	fault atomic.Pointer[error]  // why commits fail now (nil: they don't); see setFault

	// Owned by the writer goroutine:
	lastSnap  uint64 // checkpoint of the newest snapshot
	behind    bool   // the read model missed a batch
	stats     Stats
	unchanged unchangedReads // the last read of each pass that changed nothing (unchanged.go)
	// cursors are where anti-entropy's canonical window of each tab
	// stands; canonicalRows its size (0: the default) (canonicalwindow.go).
	cursors       map[passKey]*canonicalCursor
	canonicalRows int
	told          map[string]toldMark // where each spreadsheet was last told of every entity (unsynced.go)
	// observeSize is how many rows a turn of an observation decides (0:
	// observeWindow), betweenWindows what runs between two of its turns
	// (nil: nothing); both set by tests (inboundturns.go).
	observeSize    int
	betweenWindows func()
}

// Entities supplies the entity shapes at Open: declared by the caller, or
// read from the log (Declared).
type Entities func(*events.Log) (*Registry, error)

// Shapes is an Entities returning a registry built from fixed shapes.
func Shapes(shapes ...events.EntityShape) Entities {
	return func(*events.Log) (*Registry, error) { return NewRegistry(shapes...) }
}

// Declare is Shapes with the earlier names the declaration gives its
// fields (the tag's was=), which a shape change at Open follows.
func Declare(renames aggregates.Renames, shapes ...events.EntityShape) Entities {
	return func(*events.Log) (*Registry, error) {
		r, err := NewRegistry(shapes...)
		if err != nil {
			return nil, err
		}
		return r.WithRenames(renames), nil
	}
}

// Open opens (creating if needed) the store directory dir for writing. It
// takes the writer lease, records the entity shapes when they changed,
// brings read.sqlite up to the log head (rebuilding it when missing,
// corrupt or built for other shapes) and starts the single writer, then
// NATS and the sync workers. Errors: ErrInvalidEntity, ErrSyncStartup;
// events.ErrStoreLocked / events.ErrLeaseHeld when another writer has the
// store; I/O errors.
func Open(dir string, cfg Config, entities Entities) (*Engine, error) {
	if err := cfg.check(); err != nil {
		return nil, err // before the lease: a misconfigured open leaves nothing behind
	}
	e := newEngine(dir, cfg.withDefaults())
	if e.cfg.Replication == nil {
		return e, e.openPrimary(entities)
	}
	if err := e.connectReplication(); err != nil {
		return nil, err
	}
	open := e.openReplicatedPrimary
	if e.cfg.Replication.Standby {
		open = e.openStandby
	}
	if err := open(entities); err != nil {
		e.repl.close()
		return nil, err
	}
	return e, nil
}

// openPrimary opens the store for writing and starts the single writer,
// NATS and the sync workers. opts completes the writer's options
// (replicated mode: the Replicator, the catch-up, the elected epoch).
func (e *Engine) openPrimary(entities Entities, opts ...func(*events.WriterOptions)) error {
	wo := events.WriterOptions{
		Log:       events.Options{Clock: e.cfg.Clock, OpenTimeout: e.cfg.OpenTimeout, NoSync: e.cfg.NoSync, Segments: e.cfg.Segments},
		Operation: e.cfg.Operation, AcquireWait: e.cfg.AcquireWait, HeartbeatInterval: e.cfg.HeartbeatInterval, LeaseTTL: e.cfg.LeaseTTL,
		BeforeLease: e.findLogGap, OnLogFileReplaced: func(err error) { e.logFileReplaced(err) },
	}
	for _, o := range opts {
		o(&wo)
	}
	w, err := events.OpenWriter(e.dir, wo)
	if err != nil {
		return err
	}
	e.w.Store(w)
	e.removeLeftovers()
	if err := e.start(entities); err != nil {
		w.Close()
		return err
	}
	e.startWriter()
	if err := e.startNATS(); err != nil {
		e.Close()
		return err
	}
	e.startSync()
	e.retentionReady()
	return nil
}

// OpenDeclared opens a store with the entity shapes recorded in its own log
// (for tools that operate on any store). Errors as Open; ErrNotAStore when
// dir holds no log.
func OpenDeclared(dir string, cfg Config) (*Engine, error) {
	if err := IsStore(dir); err != nil {
		return nil, err
	}
	return Open(dir, cfg, Declared)
}

// IsStore checks that dir holds a store log: ErrNotAStore when dir is
// missing, is not a directory, holds nothing, or holds files of which
// none is a store's (it never was a store); *events.StoreLogMissingError
// when it holds store files but no usable log.
func IsStore(dir string) error {
	if fi, err := os.Stat(dir); (err == nil && !fi.IsDir()) || errors.Is(err, syscall.ENOTDIR) {
		return NotADirectory(dir)
	}
	err := events.RequireLog(dir)
	var missing *events.StoreLogMissingError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s has no %s%s", ErrNotAStore, dir, events.LogFileName, storesInside(dir))
	case errors.As(err, &missing) && !missing.StoreFiles:
		return fmt.Errorf("%w: %s holds %s but none of a store's files (%s, %s, %s): it is not a store directory%s",
			ErrNotAStore, dir, strings.Join(missing.Found, ", "), events.LogFileName, events.LeaseFileName, projector.FileName,
			storesInside(dir))
	}
	return err
}

// NotADirectory is the not_a_store error of a store directory given as
// a path that is not a directory. When it names one of a store's own
// files (log.db, lease.toml, read.sqlite), as when a user passes the
// log instead of its folder, the message says to pass the folder that
// holds it and names that folder.
func NotADirectory(dir string) error {
	switch base := filepath.Base(dir); base {
	case events.LogFileName, events.LeaseFileName, projector.FileName:
		return fmt.Errorf("%w: %s is a store's %s, not its directory: pass the folder that holds %s: --dir %s",
			ErrNotAStore, dir, base, base, filepath.Dir(dir))
	}
	return fmt.Errorf("%w: %s is not a directory", ErrNotAStore, dir)
}

// storesInside names the stores dir holds one level down ("" when none):
// the hint for a tool pointed at the folder beside the store it meant.
func storesInside(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var inside []string
	for _, e := range entries {
		if sub := filepath.Join(dir, e.Name()); e.IsDir() && events.RequireLog(sub) == nil {
			inside = append(inside, sub)
		}
	}
	if len(inside) == 0 {
		return ""
	}
	return "; it holds a store one level down: " + strings.Join(inside, ", ")
}

func newEngine(dir string, cfg Config) *Engine {
	_, err := os.Stat(filepath.Join(dir, events.LogFileName))
	return &Engine{dir: dir, cfg: cfg, log: cfg.Logger, act: newActivity(cfg.Logger, cfg.Clock.Now), reqs: make(chan *request), stop: make(chan struct{}), done: make(chan struct{}),
		newLog: errors.Is(err, fs.ErrNotExist)}
}

// start declares the entities, records their shapes in the log when they
// changed (a change classified, refused or migrated: see evolve), sets up
// sync and brings the read model up to the log head.
func (e *Engine) start(entities Entities) error {
	if err := e.declare(entities); err != nil {
		return err
	}
	if err := e.recordLogGap(); err != nil {
		return err
	}
	e.checkLogIntegrity()
	if err := e.refusing(); err != nil {
		return e.openReadModel()
	}
	if err := e.evolve(); err != nil {
		return err
	}
	if err := e.recordHoles(); err != nil {
		return err
	}
	holes, err := e.Log().Holes()
	if err != nil {
		return err
	}
	e.holes = holes
	if err := e.openReadModel(); err != nil {
		return err
	}
	return e.loadLayouts()
}

// declare builds the registry from entities over the store's log and
// sets up the spreadsheet layout and sync.
func (e *Engine) declare(entities Entities) error {
	reg, err := entities(e.Log())
	if err != nil {
		return err
	}
	e.reg = reg
	if e.sheet, err = newSheet(syncName(e.cfg.Sync), reg); err != nil {
		return fmt.Errorf("%w: %w", ErrSyncStartup, err)
	}
	e.setupSync()
	return e.setupRoutes(reg)
}

// startWriter starts the single writer goroutine.
func (e *Engine) startWriter() {
	e.running.Store(true)
	e.startChainChecks()
	e.startRetention()
	go e.run()
}

// Dir is the store directory.
func (e *Engine) Dir() string { return e.dir }

// ReadModelPath is the path of read.sqlite.
func (e *Engine) ReadModelPath() string { return filepath.Join(e.dir, projector.FileName) }

// Registry is the store's entity registry.
func (e *Engine) Registry() *Registry { return e.reg }

// ShapeHistory is the store's shape eras as Open left them (after any
// shape change it recorded): every declaration of the entity shapes, with
// the classified change that led to it (nil for the first one and for
// those recorded before changes were classified). Readers of old events
// map them into the newest shapes through it (FieldName, Shape,
// events.ConvertValue); the sheet layout of each era is LayoutOf of its
// declaration. Read-only; it does not change while the store is open.
func (e *Engine) ShapeHistory() events.ShapeHistory { return e.hist }

// Log is the store's event log (reads; appends are the writer's).
func (e *Engine) Log() *events.Log {
	if w := e.w.Load(); w != nil {
		return w.Log()
	}
	if e.roLog != nil {
		return e.roLog
	}
	return e.repl.sb.log // a standby
}

// writer is the store's writer (nil while a standby).
func (e *Engine) writer() *events.Writer { return e.w.Load() }

// Lease is the writer lease this store holds.
func (e *Engine) Lease() events.Lease {
	if w := e.w.Load(); w != nil {
		return w.Lease()
	}
	return events.Lease{} // a standby holds none
}

// Clock is the store clock.
func (e *Engine) Clock() events.Clock { return e.cfg.Clock }

// ReadConn takes a read-only connection to the read model; put it back
// with PutConn. Errors: ErrStoreClosed, the context's.
func (e *Engine) ReadConn(ctx context.Context) (*sqlite.Conn, error) {
	if e.isClosed() {
		return nil, ErrStoreClosed
	}
	return e.pool.Take(ctx)
}

// PutConn returns a connection taken with ReadConn.
func (e *Engine) PutConn(c *sqlite.Conn) { e.pool.Put(c) }

func (e *Engine) isClosed() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.closed
}

// CheckpointReadModel copies the read model's write-ahead log into
// read.sqlite now (Projector.CheckpointNow). A failure leaves the frames
// in the log, where readers read them, and is tried again after the next
// commit.
func (e *Engine) CheckpointReadModel() error { return e.proj.CheckpointNow() }

// Close stops the workers (they settle what they hold while the writer
// still runs), then the writer (pending commits finish first), closes the
// read model and releases the writer lease, removing lease.toml so another
// process can open the store at once. Errors: the first failure;
// ErrStoreClosed on a second call.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrStoreClosed
	}
	e.mu.Unlock()
	e.subs.stop()   // running subscriptions end first: they read the log
	e.stopStandby() // a takeover under way ends first: the store is then primary or standby
	if e.writer() == nil {
		return e.closeStandby()
	}
	e.repl.stopRenewal()
	syncErr := e.stopSync()
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	if e.running.Load() {
		close(e.stop)
		<-e.done
		e.stopChainChecks()
		e.stopRetention()
	}
	natsErr := e.stopNATS()
	relErr := e.releaseAndProject()
	err := errors.Join(syncErr, natsErr, relErr, e.pool.Close(), e.proj.Close(), e.writer().Close())
	return errors.Join(err, e.closeReplication())
}

// closeReplication gives up the lease across hosts (after the local
// lease's release went through the stream) and disconnects.
func (e *Engine) closeReplication() error {
	if e.repl == nil {
		return nil
	}
	err := e.repl.releaseLease()
	e.repl.close()
	return err
}

// releaseAndProject releases the lease while the read model is still open
// and applies the lease.released event to it, so the read model of a
// closed store equals its log.
func (e *Engine) releaseAndProject() error {
	if err := e.writer().Release(); err != nil {
		return err
	}
	return e.catchUp(context.Background(), "catch-up", nil)
}

// storeEngine reaches the engine of a store opened by the root package
// (registered by it; see Of).
var storeEngine func(any) *Engine

// RegisterStore lets the root package tell Of how to reach a Store's
// engine. Called once, from the root package's init.
func RegisterStore(f func(any) *Engine) { storeEngine = f }

// Of returns the engine of s, a *hikoutei.Store, for the module's own
// tools and test harness (nil for anything else). Applications cannot
// import this package.
func Of(s any) *Engine {
	if storeEngine == nil {
		return nil
	}
	return storeEngine(s)
}
