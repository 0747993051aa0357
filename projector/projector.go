package projector

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
)

// FileName is the read model's file inside a store directory.
const FileName = "read.sqlite"

// Options configures Open.
type Options struct {
	StoreID  string // the log's store id; a read model of another store is invalid
	Entities []events.EntityShape
	// InputTabs are the tabs people edit: an effect applied on one of their
	// rows records what each written cell shows (the inbound baseline).
	InputTabs []string
	// History is the log's shape eras (events.ReadShapeHistory): events
	// recorded under an older declaration are read into Entities through
	// it (renamed fields under their new names, values converted to their
	// new kinds, dropped fields left out). Nil: every event is read as
	// recorded.
	History events.ShapeHistory
	// TabEntities names the entity each Input tab shows, for the events
	// that name a tab and a field but no entity (every entity History or
	// Entities declares).
	TabEntities map[string]string
	// Mask, when set, turns the fields of each entity.persisted event
	// (and the rows Remask rewrites) into what the read model stores: the
	// root package replaces an erased subject's personal values written in
	// clear with the marker. It must be a pure function of its arguments
	// and the store's key file (no clock): a rebuild stores what it
	// stored. It returns fields itself when nothing changes, a copy
	// otherwise.
	Mask MaskFunc
	// Build says path is a new file private to the caller, which installs
	// it only once it is complete (a rebuild or a replay) and discards it
	// after any failure: it is written without a journal and without
	// syncs, which would only protect a file that is thrown away, and
	// CloseBuilt turns it into a read model like any other (WAL) and
	// syncs it once. Its transactions cannot be rolled back, and one
	// stays open across batches (buildtx.go): until CloseBuilt, only
	// Apply writes to it. A file that already holds events is opened as
	// without Build.
	Build bool
}

// MaskFunc is Options.Mask.
type MaskFunc func(entity, id string, fields map[string]any) map[string]any

// Projector owns the read model's single writing connection. It is not safe
// for concurrent use: the store's writer goroutine drives it. Readers open
// their own connections (WAL lets them read while it writes).
type Projector struct {
	conn       *sqlite.Conn
	path       string
	tables     map[string]events.EntityShape
	order      []events.EntityShape // declaration order
	checkpoint uint64
	sqlCache   map[string]string          // row upsert statements by table and column set
	fullRows   map[string]fullRow         // full-row upserts by table (fullrow.go)
	digest     rowHasher                  // reused by writeFullRow
	jsonBuf    []byte                     // reused by putEntityState
	hashBuf    []byte                     // reused by mergeFieldState
	payloadBuf []byte                     // reused by effectQueued
	rowNames   []string                   // reused by writeRow
	entries    []fieldEntry               // reused by mergeFieldState
	userOwned  map[string]map[string]bool // entity → user-owned columns
	inputTabs  map[string]bool            // the Input tabs (whose applied writes record shown cells)
	known      KnownHashes                // hashes of the event being applied (ApplyKnown)
	applied    appliedRow                 // the outbox row the last effect.applied moved (outbox.go)
	moved      map[string]int64           // outbox rows moved into (+) and out of (−) each state, not yet counted (outbox_counts.go)
	itemWise   bool                       // tests: project batch settle events item by item only (outbox_batch.go)
	up         *upcaster                  // nil: every event is in the newest shapes
	bulk       *bulkLoad                  // a building read model's creates not yet written (bulk.go); nil: live
	wb         *writeBack                 // a building read model's background sync (writeback.go); nil: live
	wal        *walCheckpointer           // a live read model's background checkpoints (walcheckpoint.go)
	tx         buildTx                    // a building read model's open transaction (buildtx.go)
	mask       MaskFunc                   // Options.Mask (nil: none)
	notesOn    bool                       // inbound: collect ConflictNotes (inbound.go)
	notes      []ConflictNote             // inbound: conflicts opened/resolved since the last take
	written    writtenLog                 // the entity states written since open (unsynced.go)
	// sortedNames holds each entity's declared fields sorted by name, with
	// their owners (mergeFieldState walks them instead of sorting).
	sortedNames map[string][]declaredName
}

// Open opens or creates the read model at path (mode 0600, WAL), migrates
// the internal tables and creates the entity tables. Errors:
// ErrInvalidSchema; ErrReadModelInvalid when the file is corrupt (as
// SQLite reports it), belongs to another store, has a newer schema, or its
// entity tables differ from opts.Entities (the caller then rebuilds from
// the log).
func Open(path string, opts Options) (*Projector, error) {
	if err := ValidateShapes(opts.Entities); err != nil {
		return nil, err
	}
	if err := regularOrAbsent(path); err != nil {
		return nil, err
	}
	if err := precreate(path); err != nil {
		return nil, err
	}
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenWAL)
	if err != nil {
		return nil, fmt.Errorf("%w: open: %w", ErrReadModelInvalid, err)
	}
	if err := registerDigest(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: %w", ErrProjection, err)
	}
	p := newProjector(conn, path, opts)
	if err := p.init(opts); err != nil {
		conn.Close()
		return nil, openError(err)
	}
	p.written.from = p.checkpoint        // what was written before is not listed
	if opts.Build && p.checkpoint == 0 { // never a file that holds events
		if err := p.startBuild(); err != nil {
			conn.Close()
			return nil, err
		}
		return p, nil
	}
	if err := p.startWAL(); err != nil {
		conn.Close()
		return nil, err
	}
	return p, nil
}

// startWAL starts a live read model's background checkpoints and leaves
// the writer's automatic ones as the log's bound (walcheckpoint.go).
func (p *Projector) startWAL() error {
	w, err := startWALCheckpointer(p.path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrProjection, err)
	}
	if err := p.pragmas([]string{walBackstopPragma}); err != nil {
		return errors.Join(err, w.stop())
	}
	p.wal = w
	return nil
}

// startBuild sets a new read model up for building (Options.Build): no
// journal, no syncs, creates on the bulk path (bulk.go), the file synced
// in the background (writeback.go).
func (p *Projector) startBuild() (err error) {
	if err := p.pragmas(buildPragmas); err != nil {
		return err
	}
	p.bulk = newBulkLoad()
	p.wb, err = startWriteBack(p.path)
	return err
}

// writerCachePragma sizes the page cache of the projector's connection:
// 16 MiB (negative: KiB), allocated only as pages are read.
const writerCachePragma = "PRAGMA cache_size=-16384"

// buildPragmas are a building read model's (Options.Build): no journal,
// no syncs; builtPragmas restore what init sets.
var (
	buildPragmas = []string{"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF"}
	builtPragmas = []string{"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"}
)

func (p *Projector) pragmas(list []string) error {
	for _, pragma := range list {
		if err := sqlitex.ExecuteTransient(p.conn, pragma, nil); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrProjection, pragma, err)
		}
	}
	return nil
}

// CloseBuilt closes a read model opened with Options.Build once it is
// complete: back in WAL mode, closed, and synced to disk, so it can be
// renamed into place. Errors: ErrProjection, the sync's.
func (p *Projector) CloseBuilt() error {
	err := p.commitBuilding()
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrProjection, err)
	} else {
		err = p.pragmas(builtPragmas)
	}
	if cerr := p.conn.Close(); err == nil {
		err = cerr
	}
	if werr := p.wb.stop(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	return syncFile(p.path)
}

// syncFile flushes the file at path to disk.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sync %s: %w", FileName, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", FileName, err)
	}
	return nil
}

// openError makes a failure to open an existing read model
// ErrReadModelInvalid — SQLite's reports of damage (corrupt, not a
// database, read-only as a damaged header makes it, an SQL error as a
// damaged schema gives) and malformed metadata — so the store rebuilds it
// from the log. Failures of the environment (disk full, I/O, locks,
// memory) keep their own error: rebuilding would not help.
func openError(err error) error {
	if errors.Is(err, ErrReadModelInvalid) || errors.Is(err, ErrInvalidSchema) || !IsDamage(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrReadModelInvalid, err)
}

// IsDamage reports whether err, a failure to open or read an existing
// read model, says the file is damaged (as the store judges it when it
// opens: it then sets the file aside and rebuilds it from the log) rather
// than that the environment failed (disk full, I/O, locks, memory,
// permissions), which a rebuild would not help.
func IsDamage(err error) bool {
	if err == nil {
		return false
	}
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultFull, sqlite.ResultIOErr, sqlite.ResultBusy, sqlite.ResultLocked, sqlite.ResultNoMem,
		sqlite.ResultCantOpen, sqlite.ResultPerm, sqlite.ResultInterrupt:
		return false
	}
	return true
}

func newProjector(conn *sqlite.Conn, path string, opts Options) *Projector {
	p := &Projector{conn: conn, path: path, tables: map[string]events.EntityShape{}, userOwned: map[string]map[string]bool{},
		inputTabs: map[string]bool{}, sortedNames: map[string][]declaredName{}}
	for _, t := range opts.InputTabs {
		p.inputTabs[t] = true
	}
	p.order = opts.Entities
	p.mask = opts.Mask
	p.up = newUpcaster(opts.History, opts.Entities, opts.TabEntities)
	for _, t := range opts.Entities {
		p.tables[t.Name] = t
		p.userOwned[t.Name] = map[string]bool{}
		for _, c := range t.Fields {
			p.userOwned[t.Name][c.Name] = c.Owner == events.OwnerUser
		}
		p.sortedNames[t.Name] = sortedDeclared(t, p.owner)
	}
	return p
}

// precreate makes sure the file exists with mode 0600 before SQLite opens it
// (SQLite would create it 0644; its -wal and -shm files copy this mode).
func precreate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create read model: %w", err)
	}
	return f.Close()
}

func (p *Projector) init(opts Options) (err error) {
	// secure_delete: a rewritten value leaves no bytes in free space (Remask).
	// cache_size: the writer's page cache (SQLite's default is 2 MiB), so a
	// unit's or a settlement's transaction finds the outbox and entity pages
	// it revisits in memory instead of reading them again (pread) and
	// spilling dirty pages to the WAL before its commit (row 5c).
	for _, pragma := range []string{"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=5000",
		"PRAGMA secure_delete=ON", writerCachePragma} {
		if err := sqlitex.ExecuteTransient(p.conn, pragma, nil); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrReadModelInvalid, pragma, err)
		}
	}
	end, err := sqlitex.ImmediateTransaction(p.conn)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrReadModelInvalid, err)
	}
	defer end(&err)
	version, err := p.schemaVersion()
	if err != nil {
		return err
	}
	if err := p.migrate(version); err != nil {
		return err
	}
	if err := p.checkMeta(opts.StoreID, version == 0); err != nil {
		return err
	}
	if err := p.ensureTables(opts.Entities); err != nil {
		return err
	}
	return p.checkSchema(opts.Entities)
}

func (p *Projector) schemaVersion() (int, error) {
	var n int
	err := sqlitex.Execute(p.conn, "SELECT count(*) FROM sqlite_master WHERE name = 'hk_meta'", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { n = s.ColumnInt(0); return nil }})
	if err != nil || n == 0 {
		return 0, invalid(err)
	}
	v, err := p.meta("schema_version")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

func invalid(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrReadModelInvalid, err)
}

func (p *Projector) migrate(from int) error {
	if from > SchemaVersion {
		return fmt.Errorf("%w: schema version %d is newer than this build's %d", ErrReadModelInvalid, from, SchemaVersion)
	}
	for v := from; v < SchemaVersion; v++ {
		if err := sqlitex.ExecuteScript(p.conn, migrations[v], nil); err != nil {
			return fmt.Errorf("%w: migration %d: %w", ErrReadModelInvalid, v+1, err)
		}
	}
	return p.setMeta("schema_version", strconv.Itoa(SchemaVersion))
}

func (p *Projector) checkMeta(storeID string, fresh bool) error {
	if fresh {
		if err := p.setMeta("store_id", storeID); err != nil {
			return err
		}
		return p.setMeta("checkpoint", "0")
	}
	got, err := p.meta("store_id")
	if err != nil {
		return err
	}
	if got != storeID {
		return fmt.Errorf("%w: built for store %s, not %s", ErrReadModelInvalid, got, storeID)
	}
	cp, err := p.meta("checkpoint")
	if err != nil {
		return err
	}
	p.checkpoint, err = strconv.ParseUint(cp, 10, 64)
	return invalid(err)
}

// ensureTables creates missing entity tables on an empty read model and
// rejects one whose tables were built for other schemas, including a table
// of an entity no longer declared (I23: the live model must equal a rebuild).
func (p *Projector) ensureTables(shapes []events.EntityShape) error {
	if err := p.dropUndeclared(shapes); err != nil {
		return err
	}
	for _, t := range shapes {
		fp, err := p.meta("fingerprint:" + t.Name)
		if err != nil && !errors.Is(err, errNoMeta) {
			return err
		}
		if fp == Fingerprint(t) {
			continue
		}
		if fp != "" || p.checkpoint > 0 {
			return fmt.Errorf("%w: %w: entity %s changed shape since the read model was built", ErrReadModelInvalid, ErrReadModelShape, t.Name)
		}
		if err := sqlitex.ExecuteScript(p.conn, createSQL(t), nil); err != nil {
			return fmt.Errorf("%w: create %s: %w", ErrProjection, t.Name, err)
		}
		if err := p.setMeta("fingerprint:"+t.Name, Fingerprint(t)); err != nil {
			return err
		}
	}
	return nil
}

// dropUndeclared handles tables of entities the schema no longer declares:
// invalid once events were applied, dropped on an empty read model.
func (p *Projector) dropUndeclared(shapes []events.EntityShape) error {
	declared := map[string]bool{}
	for _, t := range shapes {
		declared[t.Name] = true
	}
	var stale []string
	err := p.query("SELECT substr(key, 13) FROM hk_meta WHERE key LIKE 'fingerprint:%'", func(st *sqlite.Stmt) error {
		if name := st.ColumnText(0); !declared[name] {
			stale = append(stale, name)
		}
		return nil
	})
	if err != nil || len(stale) == 0 {
		return invalid(err)
	}
	if p.checkpoint > 0 {
		return fmt.Errorf("%w: %w: entity %s is no longer declared", ErrReadModelInvalid, ErrReadModelShape, stale[0])
	}
	for _, name := range stale {
		if err := p.exec(fmt.Sprintf("DROP TABLE IF EXISTS %q", name)); err != nil {
			return err
		}
		if err := p.exec("DELETE FROM hk_meta WHERE key = ?", "fingerprint:"+name); err != nil {
			return err
		}
	}
	return nil
}

var errNoMeta = errors.New("no such meta key")

func (p *Projector) meta(key string) (string, error) {
	var v string
	found := false
	err := sqlitex.Execute(p.conn, "SELECT value FROM hk_meta WHERE key = ?", &sqlitex.ExecOptions{
		Args:       []any{key},
		ResultFunc: func(s *sqlite.Stmt) error { v, found = s.ColumnText(0), true; return nil }})
	if err != nil {
		return "", invalid(err)
	}
	if !found {
		return "", errNoMeta
	}
	return v, nil
}

func (p *Projector) setMeta(key, value string) error {
	return sqlitex.Execute(p.conn, "INSERT INTO hk_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
		&sqlitex.ExecOptions{Args: []any{key, value}})
}

// Checkpoint is the sequence of the last event applied (0 = none).
func (p *Projector) Checkpoint() uint64 { return p.checkpoint }

// Path is the read model's file path.
func (p *Projector) Path() string { return p.path }

// CheckpointNow copies the write-ahead log's committed frames into
// read.sqlite now instead of in the background (a store's Open ends so:
// the open's own commits are not copied by a checkpoint landing after
// Open returned, so read.sqlite is left alone until the next commit).
// Errors: the checkpoint's (a full disk, an I/O error; the frames stay in
// the log).
func (p *Projector) CheckpointNow() error { return p.wal.now() }

// Close closes the writing connection (checkpointing the WAL); a
// building read model's background sync, or a live one's background
// checkpoints, are stopped first.
func (p *Projector) Close() error { return errors.Join(p.wb.stop(), p.wal.stop(), p.conn.Close()) }

// Conn exposes the writing connection to packages that extend the read
// model in the same transaction discipline (snapshots). Do not write to it.
func (p *Projector) Conn() *sqlite.Conn { return p.conn }

// Apply applies evs (ascending seq) in ONE SQLite transaction and moves the
// checkpoint to the last one. Events at or below the checkpoint are skipped,
// so re-applying a batch after a crash is harmless. A building read model
// (Options.Build) commits every few batches instead (buildtx.go). Errors:
// ErrProjection (nothing of the batch applied, checkpoint unchanged; on a
// building read model, back at its last commit).
func (p *Projector) Apply(evs []events.Event) (err error) {
	return p.ApplyKnown(evs, nil)
}

// KnownHashes returns the canonical hash (events.Hash) of a field value of
// an event, when the caller already computed it; ok = false otherwise.
type KnownHashes func(field string) (hash string, ok bool)

// ApplyKnown is Apply for events whose field hashes the caller (the
// writer, which hashed every value to decide) already knows: known[i], when
// known is not nil and known[i] is not nil, answers for the fields of
// evs[i] instead of hashing them again. Errors as Apply.
func (p *Projector) ApplyKnown(evs []events.Event, known []KnownHashes) error {
	return p.ApplyKnownThen(evs, known, nil)
}

// ApplyKnownThen is ApplyKnown that, once evs are applied and just before
// the transaction commits, calls then (when not nil): the transaction
// commits only if then returns nil, so a writer can wait there for the
// log's fsync and the read model never gets ahead of the durable log.
// Errors: ErrProjection; then's error as it is, with nothing applied and
// the checkpoint unchanged.
func (p *Projector) ApplyKnownThen(evs []events.Event, known []KnownHashes, then func() error) (err error) {
	if p.bulk != nil && then == nil {
		return p.applyBuilding(evs, known)
	}
	if err := p.commitBuilding(); err != nil {
		return fmt.Errorf("%w: %w", ErrProjection, err)
	}
	end, err := sqlitex.ImmediateTransaction(p.conn)
	if err != nil {
		return fmt.Errorf("%w: begin: %w", ErrProjection, err)
	}
	cp := p.checkpoint
	var thenErr error
	defer func() {
		end(&err)
		if err != nil {
			p.checkpoint = cp
			p.bulk.drop() // what the failed batch left unwritten is not applied either
			clear(p.moved)
		} else {
			p.wb.nudge()  // a building read model: sync what the batch wrote meanwhile
			p.wal.nudge() // a live one: checkpoint it in the background
		}
		if err != nil && thenErr == nil {
			err = fmt.Errorf("%w: %w", ErrProjection, corruption(err))
		}
	}()
	if err := p.applyAll(evs, known); err != nil {
		return err
	}
	if err := p.setMeta("checkpoint", strconv.FormatUint(p.checkpoint, 10)); err != nil {
		return err
	}
	if then != nil {
		thenErr = then()
	}
	return thenErr
}

// applyAll applies the events past the checkpoint, moving it.
func (p *Projector) applyAll(evs []events.Event, known []KnownHashes) error {
	defer func() { p.known = nil }()
	for i := range evs {
		if evs[i].Seq <= p.checkpoint {
			continue
		}
		p.known = nil
		if known != nil {
			p.known = known[i]
		}
		if err := p.apply(&evs[i]); err != nil {
			return fmt.Errorf("seq %d %s: %w", evs[i].Seq, evs[i].Type(), err)
		}
		p.checkpoint = evs[i].Seq
	}
	if err := p.flushBulk(); err != nil {
		return err
	}
	return p.writeCounts()
}

// apply projects one event. Every catalogue type has its case (some
// project nothing); anything else is an error, never skipped.
func (p *Projector) apply(e *events.Event) error {
	pl, err := payloadOf(e)
	if err != nil {
		return err
	}
	if _, persisted := pl.(events.EntityPersisted); !persisted {
		if err := p.flushBulk(); err != nil { // what follows may read the rows
			return err
		}
	}
	if handled, err := p.applyEntity(e, pl); handled {
		return err
	}
	if b, ok := pl.(events.Batch); ok {
		return p.applyBatch(e, b)
	}
	if handled, err := p.applyEffect(e, pl); handled {
		if err == nil {
			err = p.afterEffect(e, pl) // inbound: shown cells, reconcile outcomes
		}
		return err
	}
	if handled, err := p.applyInbound(e, pl); handled {
		return err
	}
	if handled, err := p.applyConflict(e, pl); handled {
		return err
	}
	return fmt.Errorf("%w: %s has no projection", events.ErrUnknownEventType, e.Type())
}

// payloadOf is e's typed payload (a payload as recorded is decoded first).
func payloadOf(e *events.Event) (events.Payload, error) {
	if r, ok := e.Payload.(events.Recorded); ok {
		return events.DecodePayload(r.Type, r.Schema, r.Fields)
	}
	if e.Payload == nil {
		return nil, fmt.Errorf("%w: event without a payload", events.ErrMalformedPayload)
	}
	return e.Payload, nil
}

// applyEntity projects entity, schema, lease and sync events.
func (p *Projector) applyEntity(e *events.Event, pl events.Payload) (bool, error) {
	switch x := pl.(type) {
	case events.EntityPersisted:
		return true, p.applyPersisted(e, x)
	case events.EntityRemoved:
		return true, p.applyRemoved(e, x)
	case events.SchemaDeclared, events.SchemaChanged:
		return true, nil // the shapes live in the log; tables follow Options.Entities, old events are read through Options.History
	case events.LeaseAcquired:
		return true, p.applyLease(e, events.LeaseGrant(x))
	case events.LeaseTakenOver:
		return true, p.applyLease(e, events.LeaseGrant(x))
	case events.LeaseReleased:
		return true, p.applyLease(e, events.LeaseGrant{State: x.State, WriterID: x.WriterID, Epoch: x.Epoch})
	case events.LeaseReconciled:
		return true, p.leaseHistory(e, x.WriterID, x.State)
	case events.SyncDiverged:
		return true, p.setMeta("divergence:"+x.Target, x.Reason)
	case events.SyncTargetBound:
		return true, p.targetBound(e.Seq, x)
	case events.SyncTabRouted:
		return true, p.tabRouted(e.Seq, x)
	case events.SyncWriteMisdirected:
		return true, p.misdirected(e, x)
	case events.SheetLayoutMigrated:
		return true, p.layoutMigrated(e, x)
	case events.LogGapDetected:
		return true, p.setMeta(fmt.Sprintf("log_gap:%d", e.Seq), fmt.Sprintf("records %d-%d lost (read model kept as %s)", x.LogHead+1, x.ReadModelCheckpoint, x.SetAside))
	case events.SnapshotTaken:
		return true, nil // vouches for a snapshot file (snapshots, engine); no read-model data
	case events.HolesRecorded:
		return true, nil // where pins may vouch across the log's holes (verification); no read-model data
	case events.SegmentSealed:
		return true, nil // records moved into a sealed segment (the log's readers); no read-model data
	case events.SubjectErased:
		return true, nil // a destroyed subject key (the store's key file); the read model holds only sealed values
	}
	return false, nil
}

// MetaValue returns an hk_meta value ("" when absent), e.g.
// "divergence:<target>".
func (p *Projector) MetaValue(key string) (string, error) {
	v, err := p.meta(key)
	if errors.Is(err, errNoMeta) {
		return "", nil
	}
	return v, err
}

// shapes returns the declared entities in declaration order.
func (p *Projector) shapes() []events.EntityShape { return p.order }
