package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// Point is a point in a log's history: a sequence, or (ByTime) the last
// sequence whose recorded time is at or before Time.
type Point struct {
	Seq    uint64
	Time   time.Time
	ByTime bool
}

// viewConns is the size of a view's read connection pool.
const viewConns = 2

// View is a read-only read model of a log at one sequence, in a private
// temporary directory removed by Close.
type View struct {
	tmp       string
	proj      *projector.Projector // holds the file's WAL open for the pool
	pool      *sqlitex.Pool
	reg       *Registry
	hist      events.ShapeHistory // every declaration: events are read into reg's (the newest) shapes
	seq, snap uint64
	at        time.Time
	mu        sync.RWMutex
	closed    bool
}

// AsOf builds a view of the store's log at p from the newest valid
// snapshot at or before it plus a replay of the records after it.
// Errors: ErrStoreClosed, ErrAsOfOutOfRange, the log's read errors,
// projector errors, the context's.
func (e *Engine) AsOf(ctx context.Context, p Point) (*View, error) {
	if e.isClosed() {
		return nil, ErrStoreClosed
	}
	return buildView(ctx, e.Log(), e.reg, e.hist, e.snaps, p)
}

// AsOfDir builds a view of the log of the store in dir at p, holding
// log.db read-only while it builds (as Replay). It never writes in dir.
// entities nil = the shapes the log declares. Errors as AsOf, and
// ErrNotAStore, events.ErrStoreLocked, ErrInvalidEntity.
func AsOfDir(ctx context.Context, dir string, p Point, entities Entities) (*View, error) {
	var v *View
	_, err := withStoreLog(dir, nil, entities, func(l *events.Log, reg *Registry) (uint64, error) {
		var err error
		hist, err := events.ReadShapeHistory(l)
		if err != nil {
			return 0, err
		}
		v, err = buildView(ctx, l, reg, hist, snapshots.Existing(dir, slog.New(slog.DiscardHandler)), p)
		return 0, err
	})
	return v, err
}

// buildView resolves p and builds the view's read model.
func buildView(ctx context.Context, l *events.Log, reg *Registry, hist events.ShapeHistory, snaps *snapshots.Dir, p Point) (*View, error) {
	seq, at, err := resolvePoint(ctx, l, p)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "hikoutei-asof-")
	if err != nil {
		return nil, fmt.Errorf("as of: %w", err)
	}
	v := &View{tmp: tmp, reg: reg, hist: hist, seq: seq, at: at}
	if err := v.build(ctx, l, snaps); err != nil {
		return nil, errors.Join(err, v.Close())
	}
	return v, nil
}

// build restores the nearest snapshot, replays the log up to v.seq and
// opens the read pool.
func (v *View) build(ctx context.Context, l *events.Log, snaps *snapshots.Dir) error {
	path := v.Path()
	opts := projectorOptions(l.StoreID(), v.reg, v.hist)
	p, snap := restoreNearest(l, snaps, opts, shapesSince(v.hist), v.seq, path)
	if p == nil {
		var err error
		if p, err = projector.Open(path, opts); err != nil {
			return err
		}
	}
	v.proj, v.snap = p, snap
	if err := applyLog(ctx, l, p, v.seq, "as-of", nil); err != nil {
		return err
	}
	var err error
	v.pool, err = sqlitex.NewPool(path, sqlitex.PoolOptions{Flags: sqlite.OpenReadOnly, PoolSize: viewConns})
	return err
}

// restoreNearest restores into path the newest snapshot at or before seq,
// taken at or after since (in the view's shapes), that the log vouches for and opens it; nil (and path left empty) when
// there is none or it is unusable: the view is then replayed from zero.
func restoreNearest(l *events.Log, snaps *snapshots.Dir, opts projector.Options, since, seq uint64, path string) (*projector.Projector, uint64) {
	if snaps == nil {
		return nil, 0
	}
	head, err := l.Head()
	if err != nil {
		return nil, 0
	}
	vouchers, err := snapshots.ReadVouchers(l, head)
	if err != nil {
		return nil, 0
	}
	m, err := snaps.NewestIn(opts.StoreID, since, seq, vouchers)
	if err == nil {
		err = snaps.Restore(m, path)
	}
	if err != nil {
		return nil, 0
	}
	p, err := projector.Open(path, opts)
	if err == nil && p.Checkpoint() == m.Seq {
		return p, m.Seq
	}
	if p != nil {
		p.Close()
	}
	removeReadModel(path)
	return nil, 0
}

// resolvePoint returns the sequence p names in l and its recorded time.
// A time resolves to the last sequence recorded at or before it.
func resolvePoint(ctx context.Context, l *events.Log, p Point) (uint64, time.Time, error) {
	head, err := l.Head()
	if err != nil {
		return 0, time.Time{}, err
	}
	if !p.ByTime && (p.Seq == 0 || p.Seq > head) {
		return 0, time.Time{}, fmt.Errorf("%w: sequence %d is outside the log's 1..%d", ErrAsOfOutOfRange, p.Seq, head)
	}
	from := p.Seq
	if p.ByTime {
		from = 1
	}
	var seq uint64
	var at time.Time
	err = scanLog(ctx, l, from, head, func(e events.Event) bool {
		switch {
		case !p.ByTime && e.Seq == p.Seq: // a salvaged log may lack it
			at = e.At
		case p.ByTime && !e.At.After(p.Time):
			seq, at = e.Seq, e.At
		}
		return p.ByTime
	})
	if !p.ByTime {
		seq = p.Seq
	}
	if err == nil && seq == 0 {
		err = fmt.Errorf("%w: %s is before the log's first record", ErrAsOfOutOfRange, p.Time.UTC().Format(time.RFC3339Nano))
	}
	return seq, at, err
}

// scanLog calls fn with the records from..head in order until it returns
// false, checking ctx every catchUpBatch records.
func scanLog(ctx context.Context, l *events.Log, from, head uint64, fn func(events.Event) bool) error {
	err := l.ReadFrom(from, func(e events.Event) error {
		if e.Seq%catchUpBatch == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if e.Seq > head || !fn(e) {
			return errStopReading
		}
		return nil
	})
	if errors.Is(err, errStopReading) || beyond(err, head) {
		return nil
	}
	return err
}

// Path is the view's read-model file (private to the view; Close
// removes it).
func (v *View) Path() string { return filepath.Join(v.tmp, projector.FileName) }

// Seq is the sequence the view stands at.
func (v *View) Seq() uint64 { return v.seq }

// At is the recorded time of the record at Seq (zero when the log lacks
// that record: a salvaged log's lost sequence).
func (v *View) At() time.Time { return v.at }

// SnapshotSeq is the sequence of the snapshot the view started from (0:
// it was replayed from the first record).
func (v *View) SnapshotSeq() uint64 { return v.snap }

// Shape returns the shape of entity name.
func (v *View) Shape(name string) (events.EntityShape, bool) { return v.reg.Shape(name) }

// ReadConn takes a read-only connection to the view; put it back with
// PutConn. Errors: ErrStoreClosed (the view was closed), the context's.
func (v *View) ReadConn(ctx context.Context) (*sqlite.Conn, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.closed {
		return nil, ErrStoreClosed
	}
	return v.pool.Take(ctx)
}

// PutConn returns a connection taken with ReadConn.
func (v *View) PutConn(c *sqlite.Conn) { v.pool.Put(c) }

// Close waits for the connections taken to come back, closes the view
// and removes its files. Errors: ErrStoreClosed on a second call.
func (v *View) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrStoreClosed
	}
	v.closed = true
	var errs []error
	if v.pool != nil {
		errs = append(errs, v.pool.Close())
	}
	if v.proj != nil {
		errs = append(errs, v.proj.Close())
	}
	if err := os.RemoveAll(v.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
