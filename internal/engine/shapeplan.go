package engine

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// PlanShapeChange says what opening the store in dir with entities (and
// cfg.Migrations) would change, without writing anything in dir: it
// holds log.db read-only (the store must not be open elsewhere), builds
// the read model in the last recorded shapes and, unless the change is
// refused, in the declared ones in a private temporary directory, and
// runs the migrations there. A refused change is in the plan (Refused),
// not an error. Errors: ErrNotAStore, events.ErrStoreLocked,
// ErrInvalidEntity, ErrMigrationInvalid, *MigrationError, the log's and
// the context's.
func PlanShapeChange(ctx context.Context, dir string, cfg Config, entities Entities) (*ShapePlan, error) {
	var plan *ShapePlan
	_, err := withStoreLog(dir, cfg.Segments, entities, func(l *events.Log, reg *Registry) (uint64, error) {
		tmp, err := os.MkdirTemp("", "hikoutei-plan-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(tmp)
		plan, err = planIn(ctx, dir, tmp, l, reg, cfg.withDefaults())
		return 0, err
	})
	return plan, err
}

// planIn plans the change with an engine that has the log but no writer.
func planIn(ctx context.Context, dir, tmp string, l *events.Log, reg *Registry, cfg Config) (*ShapePlan, error) {
	hist, err := events.ReadShapeHistory(l)
	if err != nil {
		return nil, err
	}
	last, ok := hist.Latest()
	if !ok {
		d := aggregates.ClassifyShapes(events.SchemaDeclared{}, reg.Shapes(), nil, nil, nil)
		return &ShapePlan{Changes: d.Changed.Changes}, nil
	}
	if d, err := aggregates.DecideSchema(&last, 0, reg.Shapes(), cfg.Clock.Now()); err != nil || len(d.Events) == 0 {
		return &ShapePlan{}, err
	}
	e := &Engine{dir: dir, cfg: cfg, log: cfg.Logger, reg: reg, roLog: l}
	if e.sheet, err = newSheet("", reg); err != nil {
		return nil, err
	}
	head, err := l.Head()
	if err != nil {
		return nil, err
	}
	old, err := oldShapesIn(ctx, dir, tmp, l, hist, last, head)
	if err != nil {
		return nil, err
	}
	c, err := e.planShapes(ctx, old, hist, last, head, filepath.Join(tmp, "new.sqlite"))
	err = errors.Join(err, old.Close(), c.discard())
	if err != nil {
		return nil, err
	}
	return &c.plan, nil
}

// oldShapesIn builds a read model of l in the last recorded shapes in
// tmp, from the newest snapshot of them in dir when there is one.
func oldShapesIn(ctx context.Context, dir, tmp string, l *events.Log, hist events.ShapeHistory, last events.SchemaDeclared, head uint64) (*projector.Projector, error) {
	reg, err := NewRegistry(last.Entities...)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(tmp, "old.sqlite")
	opts := projectorOptions(l.StoreID(), reg, hist)
	p, _ := restoreNearest(l, snapshots.Existing(dir, slog.New(slog.DiscardHandler)), opts, shapesSince(hist), head, path)
	if p == nil {
		if p, err = projector.Open(path, opts); err != nil {
			return nil, err
		}
	}
	if err := applyLog(ctx, l, p, head, "rebuild", nil); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}
