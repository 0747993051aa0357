package hikoutei

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
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
	_ = d.fill(v, vals, rawKeys) // a migration sees personal values sealed (docs/erasure.md)
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

// declaredMigrations checks that every migration is for a declared
// entity: one for another (a typo, an entity no longer declared) would
// never run, silently. Errors: ErrMigrationInvalid naming the entity.
func declaredMigrations(ms []Migration, shapes []events.EntityShape) error {
	for _, m := range ms {
		if !slices.ContainsFunc(shapes, func(s events.EntityShape) bool { return s.Name == m.m.Entity }) {
			return fmt.Errorf("%w: %s: the entity %s is not declared", ErrMigrationInvalid, m.Name(), m.m.Entity)
		}
	}
	return nil
}

// ShapeChangeError is Open's refusal of an incompatible shape change
// (errors.Is: ErrShapeIncompatible): every change some current records'
// values cannot take, each with the entity, the field, the kind of
// change, how many records and their first keys (record ids, never
// values).
type ShapeChangeError struct {
	Refused []ShapeIncompatibility
}

func (e *ShapeChangeError) Error() string {
	in := &engine.ShapeChangeError{}
	for _, r := range e.Refused {
		in.Refused = append(in.Refused, aggregates.ShapeIncompatibility(r))
	}
	return in.Error()
}

// Unwrap gives ErrShapeIncompatible.
func (e *ShapeChangeError) Unwrap() error { return ErrShapeIncompatible }

// ShapeIncompatibility is one incompatible change (ShapeChangeError,
// ShapePlan).
type ShapeIncompatibility struct {
	Entity    string
	Field     string // "" for a removed entity
	Change    events.ChangeKind
	From, To  string // the kinds before and after a retype
	Records   int64  // records that hold what does not convert
	FirstKeys []string
	// Migration names the migration ("<entity>/<version>") that maps it;
	// empty when none does (the change is refused).
	Migration string
}

// String describes the incompatibility for people: entity, field,
// change, records and keys, never a value.
func (s ShapeIncompatibility) String() string { return aggregates.ShapeIncompatibility(s).String() }

// incompatibilities is l in the root's terms.
func incompatibilities(l []aggregates.ShapeIncompatibility) []ShapeIncompatibility {
	var out []ShapeIncompatibility
	for _, s := range l {
		out = append(out, ShapeIncompatibility(s))
	}
	return out
}

// MigrationError says which migration failed on which record (its key)
// and why (errors.Is: ErrMigrationFailed, and fn's own error).
type MigrationError struct {
	Migration string // "<entity>/<version>"
	Key       string // the record's key ("" when no single record is to blame)
	Reason    string // what went wrong, without values
	Panic     any    // the recovered value when the function panicked (not printed)
	Err       error  // the function's error, or the cause
}

func (e *MigrationError) Error() string { return (*engine.MigrationError)(e).Error() }

// Unwrap gives ErrMigrationFailed and the cause.
func (e *MigrationError) Unwrap() []error { return (*engine.MigrationError)(e).Unwrap() }

// ShapePlan is what a shape change does or would do: every change,
// classified; the incompatible ones and those refused; the migrations
// and what they rewrite (counts and first keys); the open conflicts it
// ends (on fields dropped or no longer edited by people).
type ShapePlan struct {
	// Changes lists every change in the order it is recorded.
	Changes []events.ShapeChange
	// Incompatible lists the incompatible changes, mapped by a migration
	// or not; Refused those no migration maps (Open refuses them).
	Incompatible, Refused []ShapeIncompatibility
	// Migrations lists the migrations that run (none when refused).
	Migrations []MigrationPlan
	// ConflictsEnded is how many open conflicts on fields the change
	// drops, or takes out of people's hands, it ends.
	ConflictsEnded int
}

// MigrationPlan is what one migration rewrites (ShapePlan.Migrations).
type MigrationPlan struct {
	Name      string   // "<entity>/<version>"
	Records   int64    // records it rewrites (persisted)
	FirstKeys []string // the first of them (new keys)
	Moved     int64    // records it moves to another key (old key removed)
	FirstOld  []string // the first old keys it moves away from
}

// shapePlanOf is the engine's plan in the root's terms (nil for nil).
func shapePlanOf(e *engine.ShapePlan) *ShapePlan {
	if e == nil {
		return nil
	}
	p := &ShapePlan{Changes: e.Changes, Incompatible: incompatibilities(e.Incompatible),
		Refused: incompatibilities(e.Refused), ConflictsEnded: e.ConflictsEnded}
	for _, m := range e.Migrations {
		p.Migrations = append(p.Migrations, MigrationPlan(m))
	}
	return p
}

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
	if err == nil {
		err = declaredMigrations(opts.Migrations, shapes)
	}
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
	segs, own, err := openSegments(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	defer closeSegments(segs, own)
	cfg.Segments = segs
	plan, err := engine.PlanShapeChange(ctx, dir, cfg, engine.Declare(renamesOf(entities), shapes...))
	return shapePlanOf(plan), err
}
