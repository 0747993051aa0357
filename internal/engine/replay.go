package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// catchUpBatch is how many events are read and applied at a time while
// catching up or rebuilding: one SQLite transaction of a catch-up; a
// rebuild's transaction spans several (projector/buildtx.go).
const catchUpBatch = 2048

// ReplayOptions configures Replay and RebuildReadModel.
type ReplayOptions struct {
	UpTo     uint64         // last sequence to apply (0 = the log head)
	Progress func(Progress) // called after each applied batch
	// Force lets Replay replace an existing target file. A target inside a
	// store directory is refused even then.
	Force bool
	// Context stops the replay between batches once it is done (nil:
	// never), with the context's error.
	Context context.Context
	// Segments is where the store's sealed segments live (nil: its
	// segments folder).
	Segments segstore.Store
	// Leftover is told of each temporary file of an interrupted replay
	// or rebuild found before this one builds (nil: nobody is told).
	Leftover func(ReplayLeftover)
}

// Replay builds a fresh read model at target from the log of the store in
// dir, without taking the writer lease (it holds log.db open read-only
// throughout, so no writer can open the store meanwhile). entities nil =
// the shapes the log declares. The read model is built in a temporary file
// beside target and renamed onto it when complete; target must not be
// inside a store directory, and must not exist unless opts.Force. It
// returns the checkpoint reached. Errors: ErrReplayTargetInStore,
// ErrReplayTarget (target exists), ErrNotAStore, events.ErrStoreLocked,
// ErrInvalidEntity, *events.CorruptRecordError, *events.PayloadError,
// projector errors.
func Replay(dir, target string, opts ReplayOptions, entities Entities) (uint64, error) {
	if err := checkTarget(target, opts.Force); err != nil {
		return 0, err
	}
	return withStoreLog(dir, opts.Segments, entities, func(l *events.Log, reg *Registry) (uint64, error) {
		sweepReplayTemps(target, opts.Leftover)
		return buildThenInstall(target, opts.Force, func(tmp string) (uint64, error) { return replayLog(l, reg, tmp, opts) })
	})
}

// RebuildReadModel replaces the read model of the store in dir with a
// rebuild from its log, holding log.db read-only throughout (the store
// must not be open). The previous read.sqlite is set aside under the
// returned name, never deleted: it may hold the only trace of data a
// damaged log lost. Errors as Replay.
func RebuildReadModel(dir string, opts ReplayOptions, entities Entities) (cp uint64, aside string, err error) {
	cp, err = withStoreLog(dir, opts.Segments, entities, func(l *events.Log, reg *Registry) (uint64, error) {
		path := filepath.Join(dir, projector.FileName)
		tmp := filepath.Join(dir, rebuildTemp)
		release, err := events.LockRebuild(dir) // the log's lock is shared: another rebuild may run
		if err != nil {
			return 0, err
		}
		defer release()
		if err := removeRebuildTemp(dir, opts.Leftover); err != nil { // an interrupted rebuild's: ours, under the rebuild lock
			return 0, err
		}
		cp, err := replayLog(l, reg, tmp, opts)
		failpoint.Inject(failpoint.ReplayBeforeInstall)
		if err == nil {
			carryRebuilt(path, tmp)
			aside, err = setAside(path, disk.KindBeforeRebuild)
		}
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			return 0, errors.Join(err, removeSQLite(tmp))
		}
		return cp, nil
	})
	return cp, aside, err
}

// withStoreLog opens dir's log read-only (a shared file lock: no writer
// can open the store until it returns), its sealed segments in segs
// (nil: its segments folder), resolves entities and runs fn.
func withStoreLog(dir string, segs segstore.Store, entities Entities, fn func(*events.Log, *Registry) (uint64, error)) (uint64, error) {
	if err := IsStore(dir); err != nil {
		return 0, err
	}
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, Segments: segs})
	if err != nil {
		return 0, events.DescribeLocked(dir, err)
	}
	defer l.Close()
	if entities == nil {
		entities = Declared
	}
	reg, err := entities(l)
	if err != nil {
		return 0, err
	}
	return fn(l, reg)
}

// replayLog builds a read model at target from l up to opts.UpTo.
func replayLog(l *events.Log, reg *Registry, target string, opts ReplayOptions) (uint64, error) {
	head, err := l.Head()
	if err != nil {
		return 0, err
	}
	upTo := opts.UpTo
	if upTo == 0 || upTo > head {
		upTo = head
	}
	hist, err := events.ReadShapeHistory(l)
	if err != nil {
		return 0, err
	}
	opt := projectorOptions(l.StoreID(), reg, hist)
	opt.Build = true // target is a file of its own, installed only once complete (see the callers)
	p, err := openTarget(target, opt)
	if err != nil {
		return 0, err
	}
	err = applyLog(cmpCtx(opts.Context), l, p, upTo, "rebuild", opts.Progress)
	cp := p.Checkpoint()
	if err != nil {
		return cp, errors.Join(err, p.Close())
	}
	return cp, p.CloseBuilt()
}

func openReplayTarget(target, storeID string, reg *Registry, hist events.ShapeHistory) (*projector.Projector, error) {
	return openTarget(target, projectorOptions(storeID, reg, hist))
}

// openTarget opens a new read model at target with opts.
func openTarget(target string, opts projector.Options) (*projector.Projector, error) {
	p, err := projector.Open(target, opts)
	if err != nil {
		return nil, err
	}
	if p.Checkpoint() != 0 {
		p.Close()
		return nil, fmt.Errorf("%w: %s", ErrReplayTarget, target)
	}
	return p, nil
}

// EventSource yields events in ascending seq order to fn (e.g. a reader of
// the JetStream mirror).
type EventSource func(fn func(events.Event) error) error

// ReplayEvents builds a fresh read model at target from events delivered
// by src, for auditors replaying a store from its NATS mirror. storeID is
// the log's store id. Events must be dense from 1; a gap fails with
// ErrReplayGap. src is read twice: first for the shape declarations
// (old events are read into the newest shapes), then to apply every
// event. It returns the checkpoint reached.
func ReplayEvents(target, storeID string, src EventSource, opts ReplayOptions, reg *Registry) (uint64, error) {
	hist, err := shapeHistoryOf(src)
	if err != nil {
		return 0, err
	}
	p, err := openReplayTarget(target, storeID, reg, hist)
	if err != nil {
		return 0, err
	}
	batch := make([]events.Event, 0, catchUpBatch)
	prog := Progress{Phase: "rebuild"}
	ctx := cmpCtx(opts.Context)
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.Apply(batch); err != nil {
			return err
		}
		prog.Done += uint64(len(batch))
		batch = batch[:0]
		if opts.Progress != nil {
			opts.Progress(prog)
		}
		return nil
	}
	err = src(func(e events.Event) error {
		if want := p.Checkpoint() + uint64(len(batch)) + 1; e.Seq != want {
			return fmt.Errorf("%w: got seq %d, want %d", ErrReplayGap, e.Seq, want)
		}
		batch = append(batch, e)
		if len(batch) == catchUpBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	cp := p.Checkpoint()
	return cp, errors.Join(err, p.Close())
}

// applyLog applies the log's events after p's checkpoint up to upTo, in
// batches of catchUpBatch, reporting progress after each batch. A second
// goroutine reads and decodes the next batches while one is applied.
func applyLog(ctx context.Context, l *events.Log, p *projector.Projector, upTo uint64, phase string, progress func(Progress)) error {
	from := p.Checkpoint()
	if from >= upTo {
		return nil
	}
	prog := Progress{Phase: phase, Total: upTo - from}
	r := readBatches(l, from+1, upTo)
	for batch := range r.batches {
		if err := ctx.Err(); err != nil {
			return errors.Join(err, r.cancel())
		}
		if err := p.Apply(batch); err != nil {
			return errors.Join(err, r.cancel())
		}
		prog.Done += uint64(len(batch))
		if progress != nil {
			progress(prog)
		}
	}
	return <-r.err
}

// batchReader delivers a log range in batches from its own goroutine.
type batchReader struct {
	batches chan []events.Event // closed after the last batch
	stop    chan struct{}       // closed by cancel
	err     chan error          // the read's outcome, once batches is closed
}

// readAhead is how many decoded batches may wait for the applier.
const readAhead = 2

// readBatches reads events from..upTo (inclusive) into batches of
// catchUpBatch on a new goroutine.
func readBatches(l *events.Log, from, upTo uint64) *batchReader {
	r := &batchReader{batches: make(chan []events.Event, readAhead), stop: make(chan struct{}), err: make(chan error, 1)}
	go func() {
		defer close(r.batches)
		r.err <- r.read(l, from, upTo)
	}()
	return r
}

func (r *batchReader) read(l *events.Log, from, upTo uint64) error {
	batch := make([]events.Event, 0, catchUpBatch)
	send := func() error {
		select {
		case r.batches <- batch:
			batch = make([]events.Event, 0, catchUpBatch)
			return nil
		case <-r.stop:
			return errStopReading
		}
	}
	err := l.ReadFrom(from, func(e events.Event) error {
		if e.Seq > upTo {
			return errStopReading
		}
		batch = append(batch, e)
		if len(batch) == catchUpBatch {
			return send()
		}
		return nil
	})
	if errors.Is(err, errStopReading) || beyond(err, upTo) {
		err = nil
	}
	if err == nil && len(batch) > 0 {
		err = send()
	}
	return err
}

// beyond reports whether err is a record's failure past upTo: the range
// read ended before it.
func beyond(err error, upTo uint64) bool {
	var pe *events.PayloadError
	var ce *events.CorruptRecordError
	return errors.As(err, &pe) && pe.Seq > upTo || errors.As(err, &ce) && ce.Seq > upTo
}

// cancel stops the reader and waits for its goroutine to end, so the log
// can be closed after it. It returns nil when the read itself was fine.
func (r *batchReader) cancel() error {
	close(r.stop)
	for range r.batches {
	}
	if err := <-r.err; !errors.Is(err, errStopReading) {
		return err
	}
	return nil
}

var errStopReading = errors.New("stop reading")

// cmpCtx is ctx, or a context that is never done when ctx is nil.
func cmpCtx(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// shapeHistoryOf reads the shape history from the schema stream's events
// src delivers.
func shapeHistoryOf(src EventSource) (events.ShapeHistory, error) {
	var h events.ShapeHistory
	var pending *events.SchemaChanged
	err := src(func(e events.Event) error {
		if e.Stream != events.SchemaStream {
			return nil
		}
		pl := e.Payload
		if r, ok := pl.(events.Recorded); ok {
			var err error
			if pl, err = events.DecodePayload(r.Type, r.Schema, r.Fields); err != nil {
				return err
			}
		}
		switch p := pl.(type) {
		case events.SchemaChanged:
			pending = &p
		case events.SchemaDeclared:
			h = append(h, events.ShapeEra{Seq: e.Seq, Declared: p, Changed: pending})
			pending = nil
		}
		return nil
	})
	return h, err
}

// removeRebuildTemp removes the temporary files of an interrupted
// rebuild of dir's read model, telling report (nil: nobody) of each.
func removeRebuildTemp(dir string, report func(ReplayLeftover)) error {
	for _, l := range Leftovers(dir) {
		if l.Code != ReasonRebuildInterrupted {
			continue
		}
		path := filepath.Join(dir, l.Name)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s, left by an interrupted rebuild: %w", l.Name, err)
		}
		if report != nil {
			report(ReplayLeftover{Path: path, Bytes: l.Bytes, Removed: true, Why: "an interrupted rebuild of the read model (a killed replay or restore) left it"})
		}
	}
	return nil
}
