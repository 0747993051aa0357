package evolve

import (
	"context"
	"errors"
	"fmt"
	"slices"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// change closes the store, lets the person edit the tabs as they are,
// checks the closed store against the model, and opens it with the next
// shape of a random transition. A change some records cannot take is
// refused (typed, nothing written); then, half the time at once, it is
// mapped by a migration, or — a removed entity — the operator removes
// its records with the old shape first.
func (r *runner) change(ctx context.Context) error {
	t := r.pick()
	r.act(fmt.Sprintf("%s %s→%s", t.class, r.item.name, t.to))
	if err := r.shutdown(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	r.editWhileClosed()
	if err := r.checkClosed(); err != nil {
		return err
	}
	refusing := t.refusing(r.m.recs[t.entity()])
	if len(refusing) == 0 {
		return r.reopen(ctx, t, nil, 0)
	}
	if t.migrate == nil || r.rng.IntN(2) == 0 {
		if err := r.expectRefusal(ctx, t, refusing); err != nil {
			return err
		}
	}
	if t.migrate == nil {
		return r.clearThenRemove(ctx, t)
	}
	if t.class == KeyChange {
		if err := r.expectConflictsBlock(ctx, t); err != nil {
			return err
		}
	}
	r.version++
	version := fmt.Sprintf("%s-%d", t.class, r.version)
	m := t.migrate(version, t.fn)
	return r.reopen(ctx, t, &m, t.rewrites(r.m.recs[itemEntity]))
}

// pick draws a transition leaving Item's version or, one time in six,
// Other's toggle.
func (r *runner) pick() *transition {
	if ts := graph[r.item.name]; r.rng.IntN(6) != 0 {
		return ts[r.rng.IntN(len(ts))]
	}
	if r.otherOn {
		return removeOther
	}
	return addOther
}

// after are the shapes after t.
func (r *runner) after(t *transition) (*shape, bool) {
	switch t.class {
	case AddEntity:
		return r.item, true
	case RemoveEntity:
		return r.item, false
	}
	return shapes[t.to], r.otherOn
}

// checkClosed compares the closed store with the model (nothing
// acknowledged lost, every value as committed or as a person typed it)
// and takes its values.
func (r *runner) checkClosed() error {
	for _, sh := range r.current() {
		have, err := readClosed(r.dir, sh)
		if err != nil {
			return fmt.Errorf("read the closed store: %w", err)
		}
		for _, l := range r.m.lost(sh.entity, have) {
			r.c.problem(&r.c.res.Lost, r.run, "%s: %s", sh.name, l)
		}
	}
	return nil
}

// reopen opens the store with t's next shapes, expecting the change to be
// recorded (with migration m mapping n records, when not nil), and maps
// the model through it.
func (r *runner) reopen(ctx context.Context, t *transition, m *hikoutei.Migration, n int) error {
	item, otherOn := r.after(t)
	var ms []hikoutei.Migration
	if m != nil {
		ms = []hikoutei.Migration{*m}
	}
	if err := r.open(ctx, r.defs(item, otherOn), ms); err != nil {
		var sce *hikoutei.ShapeChangeError
		if !errors.As(err, &sce) && !errors.Is(err, hikoutei.ErrMigrationFailed) {
			return fmt.Errorf("open %s after %s: %w", item.name, t.class, err)
		}
		r.c.problem(&r.c.res.Misclassified, r.run, "%s %s → %s: Open refused a change it should take: %v", t.class, r.item.name, item.name, err)
		return r.open(ctx, r.defs(r.item, r.otherOn), nil)
	}
	r.recorded(t, m, n)
	r.follow(t, m != nil)
	r.item, r.otherOn = item, otherOn
	return nil
}

// follow maps the model through t (the store's mapping, or the
// migration's function) and lets the person type into cells of fields
// that left the Input tab.
func (r *runner) follow(t *transition, migrated bool) {
	switch {
	case migrated:
		r.m.apply(t.entity(), t.fn)
	case t.auto != nil:
		r.m.apply(t.entity(), t.auto)
	}
	switch t.class {
	case Rename:
		from := map[string]string{"title": "name", "name": "title"}[t.field]
		r.m.renameTyped(itemEntity, from, t.field)
	case RemoveEntity:
		r.m.recs[otherEntity] = map[string]rec{}
	}
	r.c.res.Changes++
	r.c.res.ByClass[t.class].Made++
	if migrated {
		r.c.res.Migrated++
		r.c.res.ByClass[t.class].Migrated++
	}
}

// recorded checks what the Open recorded: one schema.changed with t's
// change of its entity, classified as expected, mapped by m (n records)
// when given.
func (r *runner) recorded(t *transition, m *hikoutei.Migration, n int) {
	want := events.ClassCompatible
	switch {
	case m != nil:
		want = events.ClassIncompatible
	case t.additive:
		want = events.ClassAdditive
	}
	if len(r.changed) != 1 {
		r.c.problem(&r.c.res.Misclassified, r.run, "%s: the Open recorded %d %s events, want 1", t.class, len(r.changed), events.TypeSchemaChanged)
		return
	}
	sc := r.changed[0]
	i := slices.IndexFunc(sc.Changes, func(c events.ShapeChange) bool { return c.Entity == t.entity() && c.Kind == t.change })
	switch {
	case i < 0:
		r.c.problem(&r.c.res.Misclassified, r.run, "%s: no %s change recorded: %+v", t.class, t.change, sc.Changes)
	case sc.Changes[i].Class != want || (t.field != "" && sc.Changes[i].Field != t.field):
		r.c.problem(&r.c.res.Misclassified, r.run, "%s: recorded %+v, want class %s field %q", t.class, sc.Changes[i], want, t.field)
	case m != nil && (sc.Changes[i].Migration != m.Name() || !ranOnce(sc.Migrations, m.Name(), n)):
		r.c.problem(&r.c.res.Misclassified, r.run, "%s: migration %s (%d records) recorded as %+v / %+v", t.class, m.Name(), n, sc.Changes[i], sc.Migrations)
	}
}

func ranOnce(runs []events.MigrationRun, name string, n int) bool {
	return len(runs) == 1 && runs[0].Name() == name && runs[0].Records == int64(n)
}

// expectRefusal opens with t's next shapes and no migration, expecting
// the typed refusal naming t's change, the records that cannot take it
// (count and first keys), and nothing written but the writer lease's
// own events (acquired, released: every Open takes the lease before it
// reads the log).
func (r *runner) expectRefusal(ctx context.Context, t *transition, refusing []string) error {
	item, otherOn := r.after(t)
	head, err := logHead(r.dir)
	if err != nil {
		return err
	}
	err = r.open(ctx, r.defs(item, otherOn), nil)
	var sce *hikoutei.ShapeChangeError
	switch {
	case err == nil:
		r.c.problem(&r.c.res.Misclassified, r.run, "%s %s → %s: Open took a change %d records cannot take (%v): %+v", t.class, r.item.name, item.name, len(refusing), firstKeys(refusing), r.changed)
		return errUnexpectedChange
	case !errors.As(err, &sce) || !errors.Is(err, hikoutei.ErrShapeIncompatible):
		return fmt.Errorf("open %s (%s): %w", item.name, t.class, err)
	}
	r.c.res.Refused++
	r.c.res.ByClass[t.class].Refused++
	if !refusedAsExpected(sce, t, refusing) {
		r.c.problem(&r.c.res.Misclassified, r.run, "%s: refusal %v, want %s of %d records (%v)", t.class, sce, t.change, len(refusing), firstKeys(refusing))
	}
	if wrote := logTypes(r.dir, head+1); len(wrote) > 0 {
		r.c.problem(&r.c.res.Misclassified, r.run, "%s: a refused Open wrote to the log: %v", t.class, wrote)
	}
	return nil
}

// errUnexpectedChange ends a run: the store recorded a change the
// campaign expected refused, so its model no longer follows the store (the
// problem is counted and reported).
var errUnexpectedChange = errors.New("the store recorded a change expected refused")

func refusedAsExpected(sce *hikoutei.ShapeChangeError, t *transition, refusing []string) bool {
	for _, x := range sce.Refused {
		if x.Entity == t.entity() && x.Change == t.change {
			return x.Records == int64(len(refusing)) && slices.Equal(x.FirstKeys, firstKeys(refusing))
		}
	}
	return false
}

func firstKeys(ids []string) []string { return ids[:min(5, len(ids))] }

// expectConflictsBlock: a migration that gives records another key
// cannot move one with an open conflict (migration_failed); the operator
// then resolves the conflicts with the old shape first (counted).
func (r *runner) expectConflictsBlock(ctx context.Context, t *transition) error {
	for try := 0; ; try++ {
		n, err := openConflicts(r.dir, itemEntity)
		if err != nil || n == 0 {
			return err
		}
		if try == 5 {
			return fmt.Errorf("%s: conflicts keep opening while the operator resolves them", t.class)
		}
		r.version++
		item, _ := r.after(t)
		m := t.migrate(fmt.Sprintf("%s-%d", t.class, r.version), t.fn)
		err = r.open(ctx, r.defs(item, r.otherOn), []hikoutei.Migration{m})
		if err == nil || !errors.Is(err, hikoutei.ErrMigrationFailed) || !errors.Is(err, hikoutei.ErrConflictOpen) {
			r.c.problem(&r.c.res.Misclassified, r.run, "%s with %d open conflicts: Open returned %v, want migration_failed (conflict_open)", t.class, n, err)
			if err == nil {
				return errUnexpectedChange
			}
		}
		if err := r.resolveAll(ctx, itemEntity); err != nil {
			return err
		}
	}
}

// resolveAll opens the store with its shapes, keeps the system's value
// of every open conflict on entity (the operator), and closes it.
func (r *runner) resolveAll(ctx context.Context, entity string) error {
	if err := r.open(ctx, r.defs(r.item, r.otherOn), nil); err != nil {
		return fmt.Errorf("reopen %s for the operator: %w", r.item.name, err)
	}
	open, err := r.s.Conflicts(ctx, hikoutei.ConflictOpen)
	for _, c := range open {
		if c.Entity == entity && err == nil {
			r.c.res.Operator++
			err = resolved(r.s.ResolveConflict(ctx, c.ID, hikoutei.KeepSystem))
		}
	}
	return errors.Join(err, r.shutdown())
}

// clearThenRemove: an entity that still has records cannot be removed;
// the operator removes them with the old shapes (conflicts on them
// resolved first), then the store opens without the entity.
func (r *runner) clearThenRemove(ctx context.Context, t *transition) error {
	if err := r.resolveAll(ctx, otherEntity); err != nil {
		return err
	}
	if err := r.open(ctx, r.defs(r.item, r.otherOn), nil); err != nil {
		return fmt.Errorf("reopen for the operator: %w", err)
	}
	for _, id := range r.m.ids(otherEntity) {
		r.c.res.Operator++
		if err := r.work.commit(ctx, r.s, other, id, nil, true); err != nil {
			return err
		}
	}
	if err := r.shutdown(); err != nil {
		return err
	}
	if err := r.checkClosed(); err != nil {
		return err
	}
	if n := len(r.m.recs[otherEntity]); n > 0 {
		return fmt.Errorf("%s: %d records left after the operator removed them (a conflict opened meanwhile)", t.class, n)
	}
	return r.reopen(ctx, t, nil, 0)
}
