package hikoutei

import (
	"context"
	"fmt"
	"reflect"
	"regexp"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// Migration maps the records of one entity from the shape the store last
// recorded to the declared one, once (made by Migrate, passed in
// Options.Migrations).
type Migration struct {
	m   engine.Migration
	err error
}

// Name is "<entity>/<version>": how the log records the migration and the
// actor of its events ("migration:<entity>/<version>").
func (m Migration) Name() string { return m.m.Name() }

var versionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Migrate declares a migration of entity's records for a shape change
// some current values cannot take (a retype, a new primary key): Old is
// a struct with the shape the store last recorded for entity (a copy of
// the previous version of the type, tags included), New the type entity
// is declared with now, and fn maps one record. At the Open that records
// the change, fn runs once for every current record (in key order); its
// output is committed in the same unit as the change, as ordinary events
// of the actor "migration:<entity>/<version>", and the log records that
// the migration ran, so it never runs again. The events recorded before
// stay as they are.
//
// A record fn gives another key moves: the old key is removed and the new
// one created (refused when the old record has an open conflict, or when
// two records map to one key). An error returned by fn, or a panic, makes
// Open fail with ErrMigrationFailed (*MigrationError names the record's
// key) and write nothing. Problems with the declaration itself (a bad
// version, Old not the recorded shape, New not the declared one) are
// ErrMigrationInvalid at Open.
func Migrate[Old, New any](entity, version string, fn func(Old) (New, error)) Migration {
	oldDef := newEntityDef(entity, reflect.TypeFor[Old]())
	newDef := newEntityDef(entity, reflect.TypeFor[New]())
	m := Migration{m: engine.Migration{Entity: entity, Version: version}}
	switch {
	case !versionPattern.MatchString(version):
		m.err = fmt.Errorf("%w: %s: the version %q is not a plain name (letters, digits, '.', '_', '-')", ErrMigrationInvalid, m.Name(), version)
	case oldDef.err != nil:
		m.err = fmt.Errorf("%w: %s: its old type: %w", ErrMigrationInvalid, m.Name(), oldDef.err)
	case newDef.err != nil:
		m.err = fmt.Errorf("%w: %s: its new type: %w", ErrMigrationInvalid, m.Name(), newDef.err)
	case fn == nil:
		m.err = fmt.Errorf("%w: %s: no function", ErrMigrationInvalid, m.Name())
	}
	if m.err != nil {
		return m
	}
	m.m.Old, m.m.New = oldDef.shape(), newDef.shape()
	m.m.Run = func(id string, values map[string]any) (string, map[string]any, error) {
		old := reflect.New(oldDef.typ).Elem()
		oldDef.fillByName(old, id, values)
		out, err := fn(old.Interface().(Old))
		if err != nil {
			return "", nil, err
		}
		return newDef.record(reflect.ValueOf(&out).Elem())
	}
	return m
}

// fillByName sets the struct v from a record's key and canonical values
// by field name.
func (d *EntityDef) fillByName(v reflect.Value, id string, values map[string]any) {
	vals := make([]any, 0, len(d.fields)+1)
	vals = append(vals, id)
	for _, f := range d.fields {
		vals = append(vals, values[f.name])
	}
	d.fill(v, vals)
}

// record reads the key and the canonical values of the struct v.
func (d *EntityDef) record(v reflect.Value) (string, map[string]any, error) {
	key, err := d.key(v)
	if err != nil {
		return "", nil, fmt.Errorf("the new record is invalid: %w", err)
	}
	values, err := d.values(v, key)
	if err != nil {
		return "", nil, fmt.Errorf("the new record is invalid: %w", err)
	}
	return key, values, nil
}

// engineMigrations checks the migrations and returns the engine's.
func engineMigrations(ms []Migration) ([]engine.Migration, error) {
	out := make([]engine.Migration, 0, len(ms))
	for _, m := range ms {
		if m.err != nil {
			return nil, m.err
		}
		if m.m.Run == nil {
			return nil, fmt.Errorf("%w: a Migration not made by Migrate", ErrMigrationInvalid)
		}
		out = append(out, m.m)
	}
	return out, nil
}

// ShapeChangeError is Open's refusal of an incompatible shape change
// (errors.Is: ErrShapeIncompatible): every change some current records'
// values cannot take, each with the entity, the field, the kind of
// change, how many records and their first keys (record ids, never
// values).
type ShapeChangeError = engine.ShapeChangeError

// ShapeIncompatibility is one incompatible change (ShapeChangeError,
// ShapePlan).
type ShapeIncompatibility = aggregates.ShapeIncompatibility

// MigrationError says which migration failed on which record (its key)
// and why (errors.Is: ErrMigrationFailed, and fn's own error).
type MigrationError = engine.MigrationError

// ShapePlan is what a shape change does or would do: every change,
// classified; the incompatible ones and those refused; the migrations
// and what they rewrite (counts and first keys); the open conflicts it
// ends (on fields dropped or no longer edited by people).
type ShapePlan = engine.ShapePlan

// MigrationPlan is what one migration rewrites (ShapePlan.Migrations).
type MigrationPlan = engine.MigrationPlan

// PlanShapeChange is a dry run of opening the store in dir with entities
// and opts.Migrations: it says what would change — every change
// classified, the refusals with their counts and first keys, what each
// migration would rewrite — and writes nothing (it holds log.db
// read-only: the store must not be open in another process, and it
// builds its read models in a private temporary directory). A refused
// change is in the plan, not an error. Errors: ErrNotAStore,
// ErrStoreLocked, ErrInvalidEntity, ErrMigrationInvalid,
// ErrMigrationFailed; the context's.
func PlanShapeChange(ctx context.Context, dir string, opts Options, entities ...EntityDef) (*ShapePlan, error) {
	_, shapes, err := declare(entities)
	if err != nil {
		return nil, err
	}
	cfg, err := engineConfig(Options{Clock: opts.Clock, Logger: opts.Logger, Progress: opts.Progress, Migrations: opts.Migrations})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return engine.PlanShapeChange(ctx, dir, cfg, engine.Declare(renamesOf(entities), shapes...))
}
