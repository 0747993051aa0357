package events

import "fmt"

// Upcaster rewrites the payload of an event stored at schema From into the
// shape of schema From+1. It must be pure and deterministic (replay calls it).
type Upcaster func(payload map[string]any) (map[string]any, error)

type upcastKey struct {
	typ  string
	from uint32
}

// Upcasters is a registry of upcast steps keyed by event type and source
// schema. Reads apply steps until none matches, so a schema-1 event reaches
// schema 3 through the 1→2 and 2→3 steps. Register everything before the
// log is opened; the registry is then read-only and safe for concurrent use.
type Upcasters struct {
	steps map[upcastKey]Upcaster
}

// NewUpcasters returns an empty registry.
func NewUpcasters() *Upcasters { return &Upcasters{steps: map[upcastKey]Upcaster{}} }

// Register adds the step that turns typ events at schema from into from+1.
func (u *Upcasters) Register(typ string, from uint32, fn Upcaster) {
	u.steps[upcastKey{typ, from}] = fn
}

// Apply upcasts e in place. Errors: ErrUpcast wrapping the step's error.
func (u *Upcasters) Apply(e *Event) error {
	if u == nil {
		return nil
	}
	for {
		step, ok := u.steps[upcastKey{e.Type, e.Schema}]
		if !ok {
			return nil
		}
		p, err := step(e.Payload)
		if err != nil {
			return fmt.Errorf("%w: seq %d %s schema %d: %w", ErrUpcast, e.Seq, e.Type, e.Schema, err)
		}
		e.Payload, e.Schema = p, e.Schema+1
	}
}
