package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// A shape change at Open (I35): the declared shapes are compared with the
// last schema.declared. The read model is caught up in the OLD shapes,
// the census of what would not convert is read from it, and the change
// is classified (aggregates.ClassifyShapes). Refused: Open fails with
// *ShapeChangeError and nothing is written. Otherwise the read model is
// rebuilt in the new shapes (beside the old one), the migrations run
// against it, and ONE unit is appended: schema.changed, schema.declared,
// the resolutions of conflicts on retired fields and the migrations'
// entity events; the rebuilt read model, caught up with that unit,
// replaces the old one (no .unusable file: the change was expected).

// ShapePlan is what a shape change does (at Open) or would do
// (PlanShapeChange): every change, classified; the incompatible ones and
// those refused; the migrations with what they rewrite; the conflicts
// it ends. Keys are record ids, never field values.
type ShapePlan struct {
	// Changes lists every change in the order schema.changed records it.
	Changes []events.ShapeChange
	// Incompatible lists the incompatible changes, mapped by a migration
	// or not; Refused those no migration maps (Open refuses them).
	Incompatible, Refused []aggregates.ShapeIncompatibility
	// Migrations lists the migrations that run (none when refused).
	Migrations []MigrationPlan
	// ConflictsEnded is how many open conflicts on fields the change
	// drops, or takes out of people's hands, it ends.
	ConflictsEnded int
}

// MigrationPlan is what one migration rewrites.
type MigrationPlan struct {
	Name      string   // "<entity>/<version>"
	Records   int64    // records it rewrites (persisted)
	FirstKeys []string // the first of them (new keys)
	Moved     int64    // records it moves to another key (old key removed)
	FirstOld  []string // the first old keys it moves away from
}

// shapeChange is a planned change: the plan, the unit to append and the
// read model rebuilt in the new shapes up to the head it was planned at.
type shapeChange struct {
	plan   ShapePlan
	unit   events.Unit
	proj   *projector.Projector // nil when refused
	target string
}

func (c *shapeChange) discard() error {
	if c == nil || c.proj == nil {
		return nil
	}
	return errors.Join(c.proj.Close(), removeSQLite(c.target))
}

// migratePath is where the read model is rebuilt in the new shapes.
func (e *Engine) migratePath() string {
	return filepath.Join(e.dir, "."+projector.FileName+".migrate")
}

// evolve records the declared shapes when they differ from the last
// recorded ones (writer lease held, before the read model opens): the
// first declaration as it is, a change classified and, unless refused,
// with its migrations, and the read model migrated. Errors:
// *ShapeChangeError, ErrMigrationInvalid, *MigrationError; nothing is
// written then.
func (e *Engine) evolve() error {
	if err := removeSQLite(e.migratePath()); err != nil { // a change interrupted before its unit
		return err
	}
	hist, err := events.ReadShapeHistory(e.Log())
	if err != nil {
		return err
	}
	last, ok := hist.Latest()
	if !ok || len(e.reg.Shapes()) == 0 {
		if err := e.recordSchema(); err != nil {
			return err
		}
		e.hist, err = events.ReadShapeHistory(e.Log())
		return err
	}
	d, err := aggregates.DecideSchema(&last, 0, e.reg.Shapes(), e.cfg.Clock.Now())
	if err != nil || len(d.Events) == 0 {
		e.hist = hist
		return err
	}
	return e.changeShapes(hist, last)
}

// changeShapes plans the change against the store's read model, then
// appends its unit and installs the migrated read model.
func (e *Engine) changeShapes(hist events.ShapeHistory, last events.SchemaDeclared) error {
	head, err := e.Log().Head()
	if err != nil {
		return err
	}
	old, err := e.openOldShapes(hist, last, head)
	if err != nil {
		return err
	}
	c, err := e.planShapes(cmpCtx(e.cfg.Context), old, hist, last, head, e.migratePath())
	if err == nil && len(c.plan.Refused) > 0 {
		err = &ShapeChangeError{Refused: c.plan.Refused}
	}
	if err == nil {
		err = e.appendChange(c)
	}
	if err != nil {
		return errors.Join(err, c.discard(), old.Close())
	}
	e.log.Info("entity shapes changed; the change is recorded and the read model migrated to the declared shapes",
		"changes", changesText(c.plan), "events", eventCount(c.unit))
	if err := e.installShapes(old, c, head); err != nil {
		return err
	}
	e.hist, err = events.ReadShapeHistory(e.Log())
	return err
}

// openOldShapes opens read.sqlite in the last recorded shapes and catches
// it up with the head (a read model built before them is rebuilt).
func (e *Engine) openOldShapes(hist events.ShapeHistory, last events.SchemaDeclared, head uint64) (*projector.Projector, error) {
	reg, err := NewRegistry(last.Entities...)
	if err != nil {
		return nil, err
	}
	if e.snaps == nil {
		if e.snaps, err = snapshots.Open(e.dir, e.cfg.SnapshotKeep, e.log); err != nil {
			return nil, err
		}
	}
	p, phase, err := e.openProjector(head, reg, hist)
	if err != nil {
		return nil, err
	}
	if err := applyLog(cmpCtx(e.cfg.Context), e.Log(), p, head, phase, e.cfg.Progress); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

// planShapes classifies the change against old (the read model in the
// last recorded shapes, at head) and, unless refused, rebuilds the read
// model in the new shapes at target and decides the change's unit.
func (e *Engine) planShapes(ctx context.Context, old *projector.Projector, hist events.ShapeHistory, last events.SchemaDeclared, head uint64, target string) (*shapeChange, error) {
	d, pending, err := e.classify(old, hist, last)
	if err != nil {
		return nil, err
	}
	c := &shapeChange{plan: ShapePlan{Changes: d.Changed.Changes, Incompatible: d.Incompatible, Refused: d.Refused}, target: target}
	if len(d.Refused) > 0 {
		return c, nil
	}
	if c.proj, err = e.buildShapes(ctx, hist, d, head, target); err != nil {
		return nil, err
	}
	if err := e.decideChange(c, old, last, d, pending); err != nil {
		return nil, errors.Join(err, c.discard())
	}
	return c, nil
}

// classify counts the census in old and classifies the change, with the
// migrations that wait to run (by entity).
func (e *Engine) classify(old *projector.Projector, hist events.ShapeHistory, last events.SchemaDeclared) (aggregates.ShapeDecision, map[string]Migration, error) {
	shapes, renames := e.reg.Shapes(), e.reg.Renames()
	census, err := countCensus(old, last, aggregates.CensusNeeds(last, shapes, renames))
	if err != nil {
		return aggregates.ShapeDecision{}, nil, err
	}
	d := aggregates.ClassifyShapes(last, shapes, renames, census, nil)
	changed := map[string]bool{}
	for _, ch := range d.Changed.Changes {
		changed[ch.Entity] = true
	}
	pending, err := e.pendingMigrations(hist, last, changed)
	if err != nil {
		return d, nil, err
	}
	names := map[string]string{}
	for entity, m := range pending {
		names[entity] = m.Name()
	}
	return aggregates.ClassifyShapes(last, shapes, renames, census, names), pending, nil
}

// countCensus counts, in the read model in the last recorded shapes, the
// current records the classification asks about (in key order).
func countCensus(old *projector.Projector, last events.SchemaDeclared, needs []aggregates.CensusNeed) (aggregates.Census, error) {
	c := aggregates.NewCensusCounter(needs)
	for _, entity := range c.Entities() {
		i := slices.IndexFunc(last.Entities, func(s events.EntityShape) bool { return s.Name == entity })
		shape := last.Entities[i]
		q := projector.Query{Order: []projector.Order{{Field: shape.PK}}}
		err := projector.Select(old.Conn(), shape, q, func(vals []any) error {
			values := make(map[string]any, len(shape.Fields))
			for i, f := range shape.Fields {
				values[f.Name] = vals[i+1]
			}
			c.Add(entity, vals[0].(string), values)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("shape change: count %s: %w", entity, err)
		}
	}
	return c.Census(), nil
}

// buildShapes rebuilds the read model at target in the declared shapes,
// up to head, reading the log through the history the change will
// record: its schema.changed and schema.declared take the next two
// sequences.
func (e *Engine) buildShapes(ctx context.Context, hist events.ShapeHistory, d aggregates.ShapeDecision, head uint64, target string) (*projector.Projector, error) {
	next := append(slices.Clone(hist), events.ShapeEra{Seq: head + 2, Declared: events.SchemaDeclared{Entities: e.reg.Shapes()}, Changed: &d.Changed})
	if err := removeSQLite(target); err != nil {
		return nil, err
	}
	p, err := projector.Open(target, projectorOptions(e.Log().StoreID(), e.reg, next))
	if err != nil {
		return nil, err
	}
	if err := applyLog(ctx, e.Log(), p, head, "rebuild", e.cfg.Progress); err != nil {
		return nil, errors.Join(err, p.Close(), removeSQLite(target))
	}
	return p, nil
}

// decideChange decides the change's unit: schema.changed (with the
// migrations run) and schema.declared first, then the ends of conflicts
// on retired fields (against the old shapes), then each migration's
// output (against the new shapes).
func (e *Engine) decideChange(c *shapeChange, old *projector.Projector, last events.SchemaDeclared, d aggregates.ShapeDecision, pending map[string]Migration) error {
	e.changingShapes = true
	defer func() { e.proj, e.changingShapes = nil, false }()
	now, b := e.cfg.Clock.Now(), newBatchState(nil)
	e.proj = old
	ended, n, err := e.retiredConflicts(last, d, b, now)
	if err != nil {
		return err
	}
	c.plan.ConflictsEnded = n
	e.proj = c.proj
	migrated, outputs, err := e.migrate(old, last, pending, b, now)
	if err != nil {
		return err
	}
	changed := d.Changed
	for _, o := range outputs {
		changed.Migrations = append(changed.Migrations, o.run)
		c.plan.Migrations = append(c.plan.Migrations, MigrationPlan{Name: o.run.Name(), Records: o.run.Records, FirstKeys: o.keys,
			Moved: o.nMoved, FirstOld: o.moved})
	}
	version, err := e.Log().StreamVersion(events.SchemaStream)
	if err != nil {
		return err
	}
	schema := events.StreamAppend{Stream: events.SchemaStream, ExpectedVersion: version, Events: []events.Event{
		events.New(events.SchemaStream, changed, now), events.New(events.SchemaStream, events.SchemaDeclared{Entities: e.reg.Shapes()}, now)}}
	c.unit.Streams = append(append([]events.StreamAppend{schema}, ended...), migrated...)
	return nil
}

// retiredConflicts ends the open conflicts on fields people can no longer
// edit (decided against the old shapes' read model, e.proj).
func (e *Engine) retiredConflicts(last events.SchemaDeclared, d aggregates.ShapeDecision, b *batchState, now time.Time) ([]events.StreamAppend, int, error) {
	retired := aggregates.RetiredFields(last, d)
	if len(retired) == 0 {
		return nil, 0, nil
	}
	open, err := e.proj.ConflictsIn(aggregates.ConflictOpen)
	if err != nil {
		return nil, 0, err
	}
	var states []aggregates.ConflictState
	for _, cf := range open {
		if !retired[cf.Entity][cf.Field] {
			continue
		}
		cs, err := e.conflictState(cf, b)
		if err != nil {
			return nil, 0, err
		}
		states = append(states, cs)
	}
	ch := aggregates.DecideRetiredConflicts(states, retired, e.sheet, now)
	if e.sync == nil {
		ch.Queue = nil // no spreadsheet: no audit row to update
	}
	appends, err := e.stage(ch, b, now)
	return appends, len(states), err
}

// migrate runs the pending migrations in declaration order and decides
// their output against the new shapes (e.proj).
func (e *Engine) migrate(old *projector.Projector, last events.SchemaDeclared, pending map[string]Migration, b *batchState, now time.Time) ([]events.StreamAppend, []*migrationOutput, error) {
	var appends []events.StreamAppend
	var outputs []*migrationOutput
	for _, s := range e.reg.Shapes() {
		m, ok := pending[s.Name]
		if !ok {
			continue
		}
		i := slices.IndexFunc(last.Entities, func(o events.EntityShape) bool { return o.Name == s.Name })
		out, err := runMigration(old, last.Entities[i], m)
		if err == nil {
			err = checkMovedConflicts(old, m.Name(), out)
		}
		if err != nil {
			return nil, nil, err
		}
		a, err := e.decideMigration(out, b, now)
		if err != nil {
			return nil, nil, err
		}
		appends, outputs = append(appends, a...), append(outputs, out)
	}
	return appends, outputs, nil
}

// appendChange appends the change's unit (the lease was checked at Open).
func (e *Engine) appendChange(c *shapeChange) error {
	res, err := e.writer().Append(c.unit)
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		return fmt.Errorf("record the shape change: %w", err)
	}
	return nil
}

// installShapes applies the appended unit to the rebuilt read model and
// puts it in place of read.sqlite (whose subscription checkpoints it
// carries over). A unit that did not land where the rebuild assumed
// leaves read.sqlite to the ordinary open, which rebuilds it.
func (e *Engine) installShapes(old *projector.Projector, c *shapeChange, head uint64) error {
	var evs []events.Event
	for _, st := range c.unit.Streams {
		evs = append(evs, st.Events...)
	}
	err := old.Close()
	if err == nil && evs[0].Seq == head+1 {
		err = c.proj.Apply(evs)
	} else if err == nil {
		err = fmt.Errorf("the change landed at seq %d, not %d", evs[0].Seq, head+1)
	}
	if err = errors.Join(err, c.proj.Close()); err != nil {
		// The change is recorded: the ordinary open rebuilds the read model.
		e.log.Info("the migrated read model was not installed; rebuilding it", "reason", err.Error())
		return removeSQLite(c.target)
	}
	e.carrySubscriptionsFrom(e.ReadModelPath(), c.target)
	if err := removeReadModel(e.ReadModelPath()); err != nil {
		return err
	}
	return renameSQLite(c.target, e.ReadModelPath())
}

// renameSQLite renames a closed database and any -wal/-shm beside it.
func renameSQLite(from, to string) error {
	for _, suffix := range sqliteSuffixes {
		if err := os.Rename(from+suffix, to+suffix); err != nil && (suffix == "" || !errors.Is(err, fs.ErrNotExist)) {
			return fmt.Errorf("install the migrated read model: %w", err)
		}
	}
	return nil
}

// carrySubscriptionsFrom carries the subscription checkpoints of the read
// model at from into the one at to (best effort, as a rebuild does).
func (e *Engine) carrySubscriptionsFrom(from, to string) {
	if n, err := projector.CarrySubscriptions(from, to); err != nil {
		e.log.Warn("subscription checkpoints not carried over to the migrated read model", "err", err.Error())
	} else if n > 0 {
		e.log.Info("subscription checkpoints carried over", "subscriptions", n)
	}
}

// changesText names the changes for the log: entity, field, kind, the
// kinds or names before and after, the migration — never a value.
func changesText(p ShapePlan) string {
	parts := make([]string, 0, len(p.Changes))
	for _, ch := range p.Changes {
		s := ch.Entity
		if ch.Field != "" {
			s += "." + ch.Field
		}
		s += " " + string(ch.Kind) + fromTo(ch.From, ch.To, "→")
		if ch.Migration != "" {
			s += " (migration " + ch.Migration + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "entity order"
	}
	return strings.Join(parts, "; ")
}

func eventCount(u events.Unit) int {
	n := 0
	for _, st := range u.Streams {
		n += len(st.Events)
	}
	return n
}

// fromTo is " from<arrow>to", or the one of them that is set.
func fromTo(from, to, arrow string) string {
	switch {
	case from != "" && to != "":
		return " " + from + arrow + to
	case from != "" || to != "":
		return " " + from + to
	}
	return ""
}
