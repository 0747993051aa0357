package events

import "fmt"

// Entity events: what the application committed. Stream
// "entity/<Entity>/<id>"; the stream version is the entity's version.
const (
	TypeEntityPersisted Type = "entity.persisted"
	TypeEntityRemoved   Type = "entity.removed"
	TypeSchemaDeclared  Type = "schema.declared"
)

// Streams of the entity events.
const (
	// SchemaStream holds the entity shapes a store was opened with.
	SchemaStream = "schema/entities"
)

// EntityStream is the stream of one entity: "entity/<Entity>/<id>".
func EntityStream(entity, id string) string { return "entity/" + entity + "/" + id }

// EntityPersisted records the fields of an entity a unit of work changed
// (every field when it was created), each with its raised revision. An
// unchanged entity records nothing.
type EntityPersisted struct {
	// Entity is the declared entity name.
	Entity string `canon:"entity,required"`
	// ID is the entity's primary key (NFC).
	ID string `canon:"id,required"`
	// Created is true when the entity did not exist before this event.
	Created bool `canon:"created"`
	// Fields holds the changed fields' canonical values by field name.
	Fields map[string]any `canon:"fields"`
	// Revisions holds each changed field's new revision: it rises by one
	// each time the field's canonical value changes and never goes back.
	Revisions map[string]uint64 `canon:"revisions"`
	// Actor is who made the change when it was not the application's own
	// commit: "cli" or "sheet" for a person's accept_user, "adopt" for a
	// row of a tab people kept that hikoutei adopt imported,
	// "migration:<entity>/<version>" for a migration's output when the
	// entity's shape changed ("" otherwise, and in events recorded before
	// actors).
	Actor Actor `canon:"actor,omitempty"`
}

// EntityRemoved records the removal of an entity. Field revisions are
// kept: a later re-create continues them.
type EntityRemoved struct {
	// Entity is the declared entity name.
	Entity string `canon:"entity,required"`
	// ID is the entity's primary key.
	ID string `canon:"id,required"`
}

// SchemaDeclared records the entity shapes a store was opened with,
// whenever they differ from the last recorded ones, so that tools can
// open and replay a store without its Go types.
type SchemaDeclared struct {
	// Entities are the declared entities in declaration order.
	Entities []EntityShape `canon:"entities"`
}

// EntityShape is the declared shape of one entity: the entity registry's
// unit, shared by the read model, the sheet layout and the tools.
type EntityShape struct {
	// Name is the entity name (also its read-model table and tab prefix).
	Name string `canon:"name"`
	// PK is the name of the string primary key field.
	PK string `canon:"pk"`
	// Fields are the non-key fields in declaration order.
	Fields []FieldShape `canon:"fields"`
}

// FieldShape is the declared shape of one non-key field.
type FieldShape struct {
	// Name is the field (and column) name.
	Name string `canon:"name"`
	// Kind is the field's value kind.
	Kind Kind `canon:"kind"`
	// Nullable is true for pointer fields.
	Nullable bool `canon:"nullable"`
	// Owner says who edits the field: the application or people.
	Owner Owner `canon:"owner"`
	// NoSheet keeps the field out of the spreadsheet: no tab has a column
	// for it (tag option nosheet; absent from shapes recorded before it).
	NoSheet bool `canon:"nosheet,omitempty"`
}

// HasUserFields reports whether people may edit any field of the entity.
func (s EntityShape) HasUserFields() bool {
	for _, f := range s.Fields {
		if f.Owner == OwnerUser {
			return true
		}
	}
	return false
}

// Field returns the field named name.
func (s EntityShape) Field(name string) (FieldShape, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return FieldShape{}, false
}

// Kind is the kind of a field's canonical value: the one enum the read
// model, the sheet codec and the entity declarations share.
type Kind string

// Kinds.
const (
	KindString Kind = "string"
	KindInt    Kind = "int"
	KindFloat  Kind = "float"
	KindBool   Kind = "bool"
	KindTime   Kind = "time"
)

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindString, KindInt, KindFloat, KindBool, KindTime:
		return true
	}
	return false
}

// Owner says who may edit a field: the application ("system") or people
// in the spreadsheet ("user").
type Owner string

// Owners.
const (
	OwnerSystem Owner = "system"
	OwnerUser   Owner = "user"
)

// EventType implements Payload.
func (EntityPersisted) EventType() Type { return TypeEntityPersisted }

// EventType implements Payload.
func (EntityRemoved) EventType() Type { return TypeEntityRemoved }

// EventType implements Payload.
func (SchemaDeclared) EventType() Type { return TypeSchemaDeclared }

func init() {
	register[EntityPersisted](3, "entity/<Entity>/<id>", upcast{1, upcastEntityPersistedV1}, upcast{2, upcastEntityPersistedV2})
	expandWith(TypeEntityPersisted, expandPersisted)
	register[EntityRemoved](1, "entity/<Entity>/<id>")
	register[SchemaDeclared](1, SchemaStream)
}

// upcastEntityPersistedV1 rewrites a schema-1 entity.persisted payload
// {entity, id, values{…}, revisions{…}} into schema 2: "values" was
// renamed "fields" and the explicit "created" flag was added. A schema-1
// event created its entity exactly when every field it carried was at
// revision 1.
func upcastEntityPersistedV1(p map[string]any) (map[string]any, error) {
	values, ok1 := p["values"].(map[string]any)
	revs, ok2 := p["revisions"].(map[string]any)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("schema-1 entity.persisted needs values and revisions maps")
	}
	created := len(revs) > 0
	for _, r := range revs {
		created = created && r == int64(1)
	}
	return map[string]any{"entity": p["entity"], "id": p["id"], "created": created, "fields": values, "revisions": revs}, nil
}

// upcastEntityPersistedV2 rewrites schema 2 into 3, whose records leave
// out entity and id (the stream names them), created (true exactly at
// version 1) and the revisions of a first create (every field at
// revision 1): a schema-2 record always holds them, so the payload is
// unchanged.
func upcastEntityPersistedV2(p map[string]any) (map[string]any, error) { return p, nil }
