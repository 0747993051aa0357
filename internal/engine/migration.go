package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Migration maps the records of one entity from its last recorded shape
// to the declared one when its shape changes (the root's
// hikoutei.Migrate). It runs once: the schema.changed of the change
// records it (events.MigrationRun), and a recorded migration is never run
// again. Its output is committed in the change's unit as ordinary entity
// events of the actor "migration:<entity>/<version>".
type Migration struct {
	Entity, Version string
	// Old is the shape the migration reads: it must be the entity's last
	// recorded shape (the key's and fields' names, kinds and
	// nullability; owners and order aside).
	Old events.EntityShape
	// New is the shape it writes: it must be the declared shape.
	New events.EntityShape
	// Run maps one record, given its key and its values by Old's field
	// names, to its key (a new key moves the record: the old one is
	// removed) and every field's canonical value by New's names. A panic
	// is recovered and fails the Open.
	Run func(id string, values map[string]any) (string, map[string]any, error)
}

// Name is "<entity>/<version>".
func (m Migration) Name() string { return m.Entity + "/" + m.Version }

// pendingMigrations returns the migrations to run now, by entity: those
// of an entity whose shape changed that the history has not recorded.
// Errors: ErrMigrationInvalid (an undeclared entity, an Old that is not
// the last recorded shape, a New that is not the declared one, two for one
// entity).
func (e *Engine) pendingMigrations(hist events.ShapeHistory, last events.SchemaDeclared, changed map[string]bool) (map[string]Migration, error) {
	done := map[string]bool{}
	for _, era := range hist {
		if era.Changed != nil {
			for _, r := range era.Changed.Migrations {
				done[r.Name()] = true
			}
		}
	}
	out := map[string]Migration{}
	for _, m := range e.cfg.Migrations {
		if done[m.Name()] || !changed[m.Entity] {
			continue
		}
		if err := e.checkMigration(m, last, out); err != nil {
			return nil, err
		}
		out[m.Entity] = m
	}
	return out, nil
}

// checkMigration checks that m can run against the last declaration.
func (e *Engine) checkMigration(m Migration, last events.SchemaDeclared, pending map[string]Migration) error {
	declared, ok := e.reg.Shape(m.Entity)
	switch {
	case !ok:
		return fmt.Errorf("%w: %s: %s is not declared", ErrMigrationInvalid, m.Name(), m.Entity)
	case pending[m.Entity].Run != nil:
		return fmt.Errorf("%w: %s and %s both wait to migrate %s: pass one", ErrMigrationInvalid, pending[m.Entity].Name(), m.Name(), m.Entity)
	case !sameValues(m.New, declared):
		return fmt.Errorf("%w: %s: its new type is not the declared type of %s", ErrMigrationInvalid, m.Name(), m.Entity)
	}
	i := slices.IndexFunc(last.Entities, func(s events.EntityShape) bool { return s.Name == m.Entity })
	if i < 0 || !sameValues(m.Old, last.Entities[i]) {
		return fmt.Errorf("%w: %s: its old type does not have the last recorded shape of %s (%s)", ErrMigrationInvalid, m.Name(), m.Entity,
			shapeText(last, m.Entity))
	}
	return nil
}

// sameValues reports whether two shapes hold the same values: the same key
// and the same fields (names, kinds, nullability), in any order, whoever
// edits them.
func sameValues(a, b events.EntityShape) bool {
	if a.PK != b.PK || len(a.Fields) != len(b.Fields) {
		return false
	}
	for _, f := range a.Fields {
		g, ok := b.Field(f.Name)
		if !ok || g.Kind != f.Kind || g.Nullable != f.Nullable {
			return false
		}
	}
	return true
}

// shapeText describes an entity's recorded shape for an error message.
func shapeText(d events.SchemaDeclared, entity string) string {
	for _, s := range d.Entities {
		if s.Name != entity {
			continue
		}
		out := s.PK + " (key)"
		for _, f := range s.Fields {
			out += ", " + f.Name + " " + events.KindName(f)
		}
		return out
	}
	return "none recorded"
}

// migrationOutput is what a migration decided: the commands of its unit
// and what it rewrote.
type migrationOutput struct {
	run      events.MigrationRun
	cmds     []Command // removes first (moved keys), then persists
	keys     []string  // the first keys it rewrote (new keys)
	moved    []string  // the first old keys it moved away from
	nMoved   int64
	persists map[string]string // new key → old key
}

// runMigration runs m over every current record of its entity in the
// old shapes (old, in key order). Errors: *MigrationError.
func runMigration(old *projector.Projector, oldShape events.EntityShape, m Migration) (*migrationOutput, error) {
	out := &migrationOutput{run: events.MigrationRun{Entity: m.Entity, Version: m.Version}, persists: map[string]string{}}
	var removes, persists []Command
	err := projector.Select(old.Conn(), oldShape, projector.Query{Order: []projector.Order{{Field: oldShape.PK}}}, func(vals []any) error {
		id, values := vals[0].(string), map[string]any{}
		for i, f := range oldShape.Fields {
			values[f.Name] = vals[i+1]
		}
		newID, newValues, err := callMigration(m, id, values)
		if err != nil {
			return err
		}
		if prev, dup := out.persists[newID]; dup {
			return &MigrationError{Migration: m.Name(), Key: id, Reason: fmt.Sprintf("records %q and %q map to the same key %q", prev, id, newID)}
		}
		out.persists[newID] = id
		if newID != id {
			removes = append(removes, Command{Entity: m.Entity, ID: id})
		}
		persists = append(persists, Command{Entity: m.Entity, ID: newID, Values: newValues, Actor: events.MigrationActor(m.Name())})
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.cmds = append(removes, persists...)
	return out, nil
}

// callMigration runs m.Run on one record, recovering a panic.
func callMigration(m Migration, id string, values map[string]any) (newID string, newValues map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &MigrationError{Migration: m.Name(), Key: id, Reason: "the function panicked", Panic: r}
		}
	}()
	newID, newValues, err = m.Run(id, values)
	if err != nil {
		return "", nil, &MigrationError{Migration: m.Name(), Key: id, Reason: "the function failed", Err: err}
	}
	if newID == "" {
		return "", nil, &MigrationError{Migration: m.Name(), Key: id, Reason: "the function returned an empty key"}
	}
	return newID, newValues, nil
}

// checkMovedConflicts refuses a migration that would move (remove) a
// record with an open conflict.
func checkMovedConflicts(old *projector.Projector, name string, out *migrationOutput) error {
	for _, c := range out.cmds {
		if c.Values != nil {
			continue
		}
		open, err := old.OpenConflictsFor(c.Entity, c.ID)
		if err != nil {
			return err
		}
		if len(open) > 0 {
			return &MigrationError{Migration: name, Key: c.ID, Reason: "the record moves to another key but has an open conflict; resolve it first",
				Err: aggregates.ErrConflictOpen}
		}
	}
	return nil
}

// decideMigration decides a migration's commands against the new-shape
// read model (e.proj) and the batch so far, and records what it rewrote.
func (e *Engine) decideMigration(out *migrationOutput, b *batchState, now time.Time) ([]events.StreamAppend, error) {
	p, err := e.decide(&request{cmds: out.cmds}, b, now)
	if err != nil {
		var me *MigrationError
		if !errors.As(err, &me) {
			err = &MigrationError{Migration: out.run.Name(), Reason: "its output is not a valid record", Err: err}
		}
		return nil, err
	}
	for _, st := range p.unit.Streams {
		for _, ev := range st.Events {
			switch x := ev.Payload.(type) {
			case events.EntityPersisted:
				out.run.Records++
				if len(out.keys) < aggregates.CensusKeys {
					out.keys = append(out.keys, x.ID)
				}
			case events.EntityRemoved:
				out.nMoved++
				if len(out.moved) < aggregates.CensusKeys {
					out.moved = append(out.moved, x.ID)
				}
			}
		}
	}
	return p.unit.Streams, nil
}
