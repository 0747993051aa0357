package events

import (
	"fmt"
	"slices"
)

// TypeSchemaChanged is the catalogue type of SchemaChanged.
const TypeSchemaChanged Type = "schema.changed"

// SchemaChanged records how the declared entity shapes changed at an Open,
// compared with the last schema.declared: every change, classified, and the
// migrations that mapped the incompatible ones. It is appended to the
// schema stream in the same unit as the schema.declared it explains, just
// before it, so a replay reads old events into the new shapes (renames,
// conversions) exactly as the store did, at the same points. A log written
// before shape changes were classified holds none: its schema.declared
// events follow each other without one, and readers treat such a step as
// "fields matched by name".
type SchemaChanged struct {
	// Changes lists every difference between the two shapes, in the
	// order of the new declaration (entities, then fields).
	Changes []ShapeChange `canon:"changes"`
	// Migrations lists the migrations the application passed that mapped
	// the incompatible changes; their output follows in the same unit as
	// ordinary entity events of the migration's actor.
	Migrations []MigrationRun `canon:"migrations,omitempty"`
}

// ShapeChange is one classified difference between two declarations of an
// entity.
type ShapeChange struct {
	// Entity is the entity's name.
	Entity string `canon:"entity,required"`
	// Kind is what changed.
	Kind ChangeKind `canon:"kind,required"`
	// Field is the field's name in the new shape; for a dropped field,
	// its old name; empty for a change of the whole entity.
	Field string `canon:"field,omitempty"`
	// From and To are the old and new values of what changed: the names
	// of a renamed field or key, the kinds of a retyped field ("int",
	// "float?" for a nullable float), the owners of a field that moved
	// between the application and people.
	From string `canon:"from,omitempty"`
	To   string `canon:"to,omitempty"`
	// Class says how the store treats the change.
	Class ChangeClass `canon:"class,required"`
	// Migration names the migration ("<entity>/<version>") that mapped
	// an incompatible change; empty otherwise.
	Migration string `canon:"migration,omitempty"`
}

// ChangeKind is what a ShapeChange changed.
type ChangeKind string

// Change kinds.
const (
	ChangeEntityAdded     ChangeKind = "entity_added"
	ChangeEntityRemoved   ChangeKind = "entity_removed"
	ChangeFieldAdded      ChangeKind = "field_added"
	ChangeFieldDropped    ChangeKind = "field_dropped"
	ChangeFieldRenamed    ChangeKind = "field_renamed"    // declared in the tag: `hikoutei:"title,was=name"`
	ChangeFieldRetyped    ChangeKind = "field_retyped"    // kind or nullability
	ChangeOwnerChanged    ChangeKind = "owner_changed"    // system ↔ user
	ChangeFieldsReordered ChangeKind = "fields_reordered" // same fields, another declaration order
	ChangeKeyRenamed      ChangeKind = "key_renamed"      // the primary key field renamed (was=)
	ChangeKeyChanged      ChangeKind = "key_changed"      // another field is the primary key
)

// ChangeClass is how the store treats a change.
type ChangeClass string

// Change classes.
const (
	// ClassAdditive: something new (a field, an entity); nothing
	// recorded changes.
	ClassAdditive ChangeClass = "additive"
	// ClassCompatible: every recorded value keeps its meaning (a drop, a
	// rename, an owner move, a reorder, a retype every recorded value
	// converts to losslessly).
	ClassCompatible ChangeClass = "compatible"
	// ClassIncompatible: some recorded value cannot take the new shape; a
	// recorded change of this class was mapped by a migration.
	ClassIncompatible ChangeClass = "incompatible"
)

// MigrationRun records one migration applied at an Open.
type MigrationRun struct {
	// Entity is the migrated entity.
	Entity string `canon:"entity,required"`
	// Version is the migration's version, as the application named it.
	Version string `canon:"version,required"`
	// Records is how many records the migration rewrote.
	Records int64 `canon:"records"`
}

// Name is the migration's name as ShapeChange.Migration and the actor of
// its events carry it: "<entity>/<version>".
func (m MigrationRun) Name() string { return m.Entity + "/" + m.Version }

// EventType implements Payload.
func (SchemaChanged) EventType() Type { return TypeSchemaChanged }

func init() {
	register[SchemaChanged](1, SchemaStream)
}

// KindName is a field shape's kind as ShapeChange.From and To name it:
// the kind, with "?" when nullable ("float?").
func KindName(f FieldShape) string {
	if f.Nullable {
		return string(f.Kind) + "?"
	}
	return string(f.Kind)
}

// ShapeEra is one declaration of a log's entity shapes: the
// schema.declared at Seq and the schema.changed that explained it (nil for
// the first declaration, and for one recorded before changes were
// classified).
type ShapeEra struct {
	Seq      uint64
	Declared SchemaDeclared
	Changed  *SchemaChanged
}

// ShapeHistory is a log's shape eras in log order: what a reader needs to
// read an old event into the newest shapes. Build it with ReadShapeHistory.
type ShapeHistory []ShapeEra

// ReadShapeHistory reads every declaration of l's schema stream.
func ReadShapeHistory(l *Log) (ShapeHistory, error) {
	var h ShapeHistory
	var pending *SchemaChanged
	err := l.ReadStream(SchemaStream, 1, func(e Event) error {
		switch p := e.Payload.(type) {
		case SchemaChanged:
			pending = &p
		case SchemaDeclared:
			h = append(h, ShapeEra{Seq: e.Seq, Declared: p, Changed: pending})
			pending = nil
		default:
			return fmt.Errorf("%w: %s on the schema stream", ErrMalformedPayload, e.Type())
		}
		return nil
	})
	return h, err
}

// Latest is the newest declaration (false when the log declares nothing).
func (h ShapeHistory) Latest() (SchemaDeclared, bool) {
	if len(h) == 0 {
		return SchemaDeclared{}, false
	}
	return h[len(h)-1].Declared, true
}

// FieldName follows field of entity, as named by an event at seq, through
// every later declaration's renames to its name in the newest shapes.
// ok is false when a later declaration dropped the field or removed the
// entity. A field no declaration names (a log without declarations, or
// an event older than the first one) keeps its name.
func (h ShapeHistory) FieldName(entity, field string, seq uint64) (name string, ok bool) {
	name = field
	for _, era := range h {
		if era.Seq <= seq || era.Changed == nil {
			continue
		}
		if name, ok = era.Changed.follow(entity, name); !ok {
			return "", false
		}
	}
	return name, true
}

// follow maps one field name across one change set.
func (c *SchemaChanged) follow(entity, field string) (string, bool) {
	for _, ch := range c.Changes {
		if ch.Entity != entity {
			continue
		}
		switch {
		case ch.Kind == ChangeEntityRemoved:
			return "", false
		case ch.Kind == ChangeFieldDropped && ch.Field == field:
			return "", false
		case (ch.Kind == ChangeFieldRenamed || ch.Kind == ChangeKeyRenamed) && ch.From == field:
			return ch.To, true
		}
	}
	return field, true
}

// Shape returns entity's shape in the declaration in force at seq (the
// newest era at or before seq; false before the first).
func (h ShapeHistory) Shape(entity string, seq uint64) (EntityShape, bool) {
	i, found := slices.BinarySearchFunc(h, seq, func(e ShapeEra, s uint64) int {
		switch {
		case e.Seq < s:
			return -1
		case e.Seq > s:
			return 1
		}
		return 0
	})
	if !found {
		i--
	}
	if i < 0 {
		return EntityShape{}, false
	}
	for _, s := range h[i].Declared.Entities {
		if s.Name == entity {
			return s, true
		}
	}
	return EntityShape{}, false
}
