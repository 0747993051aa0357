package engine

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/echo"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Registry is the set of declared entity shapes, in declaration order: what
// the read model's tables, the sheet layout and the schema.declared event
// are derived from. A store opened by Go types and one opened by its log's
// declarations build the same Registry.
type Registry struct {
	shapes  []events.EntityShape
	byName  map[string]int
	renames aggregates.Renames // the declaration's was= names (not part of the shapes)
	mask    projector.MaskFunc // what the read model stores of a persisted event's fields (nil: them)
}

// WithMask sets the projector's Options.Mask (the root package: an erased
// subject's personal values written in clear become the marker) and
// returns r.
func (r *Registry) WithMask(m projector.MaskFunc) *Registry {
	r.mask = m
	return r
}

// NewRegistry validates shapes (plain identifiers, unique names, a string
// primary key, known kinds and owners). Errors: ErrInvalidEntity.
func NewRegistry(shapes ...events.EntityShape) (*Registry, error) {
	r := &Registry{shapes: shapes, byName: map[string]int{}}
	if err := projector.ValidateShapes(shapes); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidEntity, err)
	}
	for i, s := range shapes {
		for _, f := range s.Fields {
			if f.Owner != events.OwnerSystem && f.Owner != events.OwnerUser {
				return nil, fmt.Errorf("%w: %s.%s has owner %s", ErrInvalidEntity, s.Name, f.Name, echo.Quote(string(f.Owner)))
			}
		}
		r.byName[s.Name] = i
	}
	return r, nil
}

// WithRenames returns r with the earlier names the declaration gives its
// fields (`hikoutei:"title,was=name"`): what the shape change at Open
// follows. They are not part of the recorded shapes.
func (r *Registry) WithRenames(renames aggregates.Renames) *Registry {
	c := *r
	c.renames = renames
	return &c
}

// Renames is the declaration's earlier field names (nil: none).
func (r *Registry) Renames() aggregates.Renames { return r.renames }

// Declared returns the registry of the entity shapes last recorded in l.
// Errors: ErrInvalidEntity when none are recorded or they are malformed.
func Declared(l *events.Log) (*Registry, error) {
	last, _, err := lastSchema(l)
	if err != nil {
		return nil, err
	}
	if last == nil || len(last.Entities) == 0 {
		return nil, fmt.Errorf("%w: the log records no entity declarations", ErrInvalidEntity)
	}
	return NewRegistry(last.Entities...)
}

// lastSchema reads the last schema.declared of l and the schema stream's version.
func lastSchema(l *events.Log) (*events.SchemaDeclared, uint64, error) {
	var last *events.SchemaDeclared
	var version uint64
	err := l.ReadStream(events.SchemaStream, 1, func(e events.Event) error {
		if p, ok := e.Payload.(events.SchemaDeclared); ok {
			last = &p
		}
		version = e.Version
		return nil
	})
	return last, version, err
}

// Shapes returns the shapes in declaration order.
func (r *Registry) Shapes() []events.EntityShape { return r.shapes }

// Shape returns the shape of entity name.
func (r *Registry) Shape(name string) (events.EntityShape, bool) {
	i, ok := r.byName[name]
	if !ok {
		return events.EntityShape{}, false
	}
	return r.shapes[i], true
}
