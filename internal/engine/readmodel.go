package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// projectorOptions are the read model's options for the registry and the
// log's shape history: the same for the live model, a rebuild and a
// replay (I23).
func projectorOptions(storeID string, reg *Registry, hist events.ShapeHistory) projector.Options {
	return projector.Options{StoreID: storeID, Entities: reg.Shapes(), InputTabs: inputTabs(reg), History: hist,
		TabEntities: tabEntities(reg, hist), Mask: reg.mask}
}

// tabEntities names the entity of every Input tab the registry or the
// history declares.
func tabEntities(reg *Registry, hist events.ShapeHistory) map[string]string {
	out := map[string]string{}
	for _, s := range reg.Shapes() {
		out[layout.InputTabName(s.Name)] = s.Name
	}
	for _, era := range hist {
		for _, s := range era.Declared.Entities {
			out[layout.InputTabName(s.Name)] = s.Name
		}
	}
	return out
}

// shapesSince is the sequence of the newest declaration in hist (0:
// none): snapshots taken before it are of other shapes.
func shapesSince(hist events.ShapeHistory) uint64 {
	if len(hist) == 0 {
		return 0
	}
	return hist[len(hist)-1].Seq
}

// recordSchema appends schema.declared when the shapes changed.
func (e *Engine) recordSchema() error {
	last, version, err := lastSchema(e.writer().Log())
	if err != nil {
		return err
	}
	d, err := aggregates.DecideSchema(last, version, e.reg.Shapes(), e.cfg.Clock.Now())
	if err != nil || len(d.Events) == 0 {
		return err
	}
	res, err := e.writer().Append(events.Unit{Streams: []events.StreamAppend{{Stream: d.Stream, ExpectedVersion: d.ExpectedVersion, Events: d.Events}}})
	if err == nil {
		err = res[0].Err
	}
	return err
}

// openReadModel opens read.sqlite, rebuilding it when invalid, then catches
// up from its checkpoint to the log head and opens the read pool.
func (e *Engine) openReadModel() error {
	var err error
	if e.hist == nil {
		if e.hist, err = events.ReadShapeHistory(e.Log()); err != nil {
			return err
		}
	}
	if e.snaps == nil {
		if e.snaps, err = snapshots.Open(e.dir, e.cfg.SnapshotKeep, e.log); err != nil {
			return err
		}
	}
	if err := e.openProjection(); err != nil {
		return err
	}
	e.pool, err = sqlitex.NewPool(e.ReadModelPath(), sqlitex.PoolOptions{Flags: sqlite.OpenReadOnly, PoolSize: e.cfg.ReadConns})
	return err
}

// openProjection opens the projector (see openProjector) and catches it
// up with the log head.
func (e *Engine) openProjection() error {
	head, err := e.Log().Head()
	if err != nil {
		return err
	}
	phase := "catch-up"
	if e.proj, phase, err = e.openProjector(head, e.reg, e.hist); err != nil {
		return err
	}
	e.lastSnap = e.proj.Checkpoint()
	return e.catchUp(cmpCtx(e.cfg.Context), phase, e.cfg.Progress)
}

// openProjector opens read.sqlite for reg; when it is unusable it sets it
// aside (renamed, never deleted) and restores the newest valid snapshot
// of these shapes, or else starts from an empty read model. A read model
// built before the shapes last changed (hist) is expected to be in other
// shapes: it is rebuilt without a warning and not kept. It returns the
// phase the catch-up will be in.
func (e *Engine) openProjector(head uint64, reg *Registry, hist events.ShapeHistory) (*projector.Projector, string, error) {
	opts := projectorOptions(e.Log().StoreID(), reg, hist)
	_, statErr := os.Stat(e.ReadModelPath())
	expected := false
	if statErr == nil {
		p, err := openAtMost(e.ReadModelPath(), opts, head)
		if !errors.Is(err, projector.ErrReadModelInvalid) {
			return p, "catch-up", err
		}
		if expected = e.shapesChangedSince(err, hist); expected {
			e.log.Info("the read model was built for earlier entity shapes; rebuilding it in the declared ones")
		} else {
			e.log.Warn("read model unusable; restoring from a snapshot or rebuilding from the log", "reason", err.Error())
		}
	} else if head > 0 && !e.newLog {
		e.log.Info("read model missing; restoring from a snapshot or rebuilding from the log")
	}
	return e.replaceProjector(opts, head, shapesSince(hist), expected)
}

// shapesChangedSince reports whether err (opening read.sqlite) is its
// being built for other shapes, before the newest declaration of hist.
func (e *Engine) shapesChangedSince(err error, hist events.ShapeHistory) bool {
	if !errors.Is(err, projector.ErrReadModelShape) {
		return false
	}
	cp, storeID, rerr := projector.ReadCheckpoint(e.ReadModelPath())
	return rerr == nil && storeID == e.Log().StoreID() && cp < shapesSince(hist)
}

// replaceProjector sets read.sqlite aside and restores a snapshot taken
// at or after since, or starts an empty read model; an expected
// replacement (a shape change) carries the subscriptions over and does
// not keep the old file.
func (e *Engine) replaceProjector(opts projector.Options, head, since uint64, expected bool) (*projector.Projector, string, error) {
	aside, err := setAside(e.ReadModelPath(), disk.KindUnusable)
	if err != nil {
		return nil, "", err
	}
	if aside != "" && !expected {
		e.log.Warn("the unusable read model was kept", "as", filepath.Base(aside))
	}
	if aside == "" && e.gap != nil && e.gap.SetAside != "" {
		// An accepted log gap set the read model aside: its subscriptions'
		// checkpoints stay meaningful, since the lost sequences are never
		// reused.
		aside = filepath.Join(e.dir, e.gap.SetAside)
	}
	done := func() {
		e.carrySubscriptions(aside)
		if expected {
			removeSQLite(aside)
		}
	}
	if p, err := e.restoreSnapshot(opts, head, since); err == nil {
		done()
		return p, "snapshot", nil
	}
	p, err := projector.Open(e.ReadModelPath(), opts)
	if err == nil {
		done()
	}
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

// restoreSnapshot restores the newest snapshot taken at or after since
// (the shapes' declaration) that matches its manifest and that a
// snapshot.taken event of the log (at or below head) vouches for; the
// others are refused with a warning (snapshots.NewestIn).
func (e *Engine) restoreSnapshot(opts projector.Options, head, since uint64) (*projector.Projector, error) {
	v, err := snapshots.ReadVouchers(e.Log(), head)
	if err != nil {
		return nil, err
	}
	m, err := e.snaps.NewestIn(opts.StoreID, since, head, v)
	if err == nil {
		err = e.snaps.Restore(m, e.ReadModelPath())
	}
	if err != nil {
		return nil, err
	}
	p, err := openAtMost(e.ReadModelPath(), opts, head)
	if err != nil {
		e.log.Warn("restored snapshot unusable; rebuilding from zero", "seq", m.Seq, "reason", err.Error())
		return nil, errors.Join(err, removeReadModel(e.ReadModelPath()))
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

// catchUp applies the log from the read model's checkpoint to the head.
func (e *Engine) catchUp(ctx context.Context, phase string, progress func(Progress)) error {
	head, err := e.Log().Head()
	if err != nil {
		return err
	}
	return applyLog(ctx, e.Log(), e.proj, head, phase, progress)
}

// repairReadModel catches the read model up after a failed projection,
// before anything new is decided against it (writer goroutine).
func (e *Engine) repairReadModel() error {
	if !e.behind {
		return nil
	}
	if err := e.catchUp(context.Background(), "catch-up", nil); err != nil {
		return e.setFault(fmt.Errorf("%w: nothing was committed: the read model could not catch up with the log: %w", ErrReadModelUnavailable, err))
	}
	e.behind = false
	e.clearFault(ErrReadModelUnavailable)
	return nil
}

// projected handles the outcome of projecting appended events: a failure
// leaves the read model behind the log (repaired before the next batch).
func (e *Engine) projected(err error) error {
	e.subs.committed() // the log committed the batch, whatever the read model did
	if f := e.cfg.Fault; f != nil && f.FailNextProjection {
		f.FailNextProjection, err = false, errors.New("injected failure after the log commit")
	}
	if err != nil {
		e.behind = true
		e.log.Error("read model behind the log", "err", err.Error())
		return fmt.Errorf("%w: %w", ErrReadModelBehind, err)
	}
	e.notifyConflicts()
	return nil
}

// Snapshot takes a snapshot of the read model now (between group
// commits) and returns its manifest.
func (e *Engine) Snapshot() (snapshots.Manifest, error) {
	var m snapshots.Manifest
	err := e.onWriter(func() (err error) { m, err = e.takeSnapshot(); return err })
	return m, err
}

// takeSnapshot snapshots the read model at the log head and has the log
// vouch for it: a snapshot.taken event with the file's digest, appended
// through this writer before the snapshot is sealed (writer goroutine).
func (e *Engine) takeSnapshot() (snapshots.Manifest, error) {
	if err := e.repairReadModel(); err != nil {
		return snapshots.Manifest{}, err
	}
	var projErr error
	m, err := e.snaps.Take(e.proj.Conn(), e.proj.Checkpoint(), e.writer().Log().StoreID(), func(m snapshots.Manifest) error {
		err := e.vouchSnapshot(m)
		if errors.Is(err, ErrReadModelBehind) { // the event is in the log: seal the snapshot
			projErr, err = err, nil
		}
		return err
	})
	if err == nil {
		e.lastSnap = e.proj.Checkpoint()
		err = projErr
	}
	return m, err
}

// vouchSnapshot appends snapshot.taken for m (writer goroutine).
func (e *Engine) vouchSnapshot(m snapshots.Manifest) error {
	version, err := e.writer().Log().StreamVersion(events.SnapshotStream)
	if err != nil {
		return err
	}
	now := e.cfg.Clock.Now()
	var ch aggregates.Changes
	ch.Add(events.SnapshotStream, version, events.New(events.SnapshotStream,
		events.SnapshotTaken{Seq: m.Seq, Digest: m.Hash, Size: m.Size, StoreID: m.StoreID}, now))
	return e.commitWorker(ch, now)
}

// autoSnapshot takes a snapshot when SnapshotEvery events were applied
// since the last one. A failure is logged, never fails a commit.
func (e *Engine) autoSnapshot() {
	every := e.cfg.SnapshotEvery
	if every == 0 || e.behind || e.proj.Checkpoint()-e.lastSnap < every {
		return
	}
	if _, err := e.takeSnapshot(); err != nil {
		e.log.Error("automatic snapshot failed", "err", err.Error())
	}
}

// Checkpoint is the last log sequence applied to the read model.
func (e *Engine) Checkpoint() uint64 {
	if e.writer() == nil && e.repl != nil {
		return e.repl.sb.checkpoint.Load() // a standby
	}
	var cp uint64
	if err := e.onWriter(func() error { cp = e.proj.Checkpoint(); return nil }); err != nil {
		return 0
	}
	return cp
}

// ReplayLog builds a fresh read model at target from the open log l, up to
// upTo, with the entity shapes the log declares (none when it declares
// none): what the live read model at checkpoint upTo must equal (I23).
// doctor compares the two. It returns the checkpoint reached.
func ReplayLog(l *events.Log, target string, upTo uint64) (uint64, error) {
	reg, err := declaredOrNone(l)
	if err != nil {
		return 0, err
	}
	hist, err := events.ReadShapeHistory(l)
	if err != nil {
		return 0, err
	}
	p, err := openReplayTarget(target, l.StoreID(), reg, hist)
	if err != nil {
		return 0, err
	}
	err = applyLog(context.Background(), l, p, upTo, "rebuild", nil)
	cp := p.Checkpoint()
	return cp, errors.Join(err, p.Close())
}

// DeclaredShapes returns the entity shapes last recorded in l (none when
// it records none). Errors: the log's read errors, ErrInvalidEntity.
func DeclaredShapes(l *events.Log) ([]events.EntityShape, error) {
	reg, err := declaredOrNone(l)
	if err != nil {
		return nil, err
	}
	return reg.Shapes(), nil
}

func declaredOrNone(l *events.Log) (*Registry, error) {
	last, _, err := lastSchema(l)
	if err != nil || last == nil {
		return &Registry{byName: map[string]int{}}, err
	}
	return NewRegistry(last.Entities...)
}
