package engine

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// EraLayout is the spreadsheet layout of one era of a shape history: what
// the tabs looked like while that declaration was in force.
type EraLayout struct {
	Seq    uint64         // the era's schema.declared
	Layout *layout.Schema // its tabs (layoutOf its registry)
}

// EraLayouts returns the layout of every era of hist, oldest first: the
// layouts an older tab header or a recorded effect payload may follow
// (the newest is the registry's own when the store opened with the
// declared shapes). Errors: ErrInvalidEntity for an era whose shapes
// cannot be laid out.
func EraLayouts(hist events.ShapeHistory) ([]EraLayout, error) {
	out := make([]EraLayout, 0, len(hist))
	for _, era := range hist {
		reg, err := NewRegistry(era.Declared.Entities...)
		if err != nil {
			return nil, fmt.Errorf("shapes declared at seq %d: %w", era.Seq, err)
		}
		l, err := layoutOf(reg, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: shapes declared at seq %d: %w", ErrInvalidEntity, era.Seq, err)
		}
		out = append(out, EraLayout{Seq: era.Seq, Layout: l})
	}
	return out, nil
}
