package aggregates

import (
	"fmt"
)

// QuarantinedRow is one active quarantine record a person dismisses: the
// Input row it names and the full-row hash it was recorded with.
type QuarantinedRow struct {
	ID      string
	Target  Target
	Entity  string
	Anchor  string
	RowHash string
	Active  bool
}

// DecideDismiss rewrites a quarantined Input row to canonical state (the
// person's value is dropped): an update of the row's cells from the
// entity's canonical values, guarded by the row hash the quarantine
// recorded, so a row the person changed again since is not overwritten
// (the write fails its guard and the new content is polled as usual).
// The quarantine clears when a poll sees the row without the evidence.
// Errors: ErrQuarantineNotDismissable (cleared, no row, or a removed
// entity).
func DecideDismiss(q QuarantinedRow, values map[string]any, exists bool, columns []string) (Queue, error) {
	if !q.Active || q.Anchor == "" || q.RowHash == "" || !exists {
		return Queue{}, fmt.Errorf("%w: %s", ErrQuarantineNotDismissable, q.ID)
	}
	qu, ok := Correction(Effect{Target: q.Target, Entity: q.Entity, EntityID: q.Anchor, ObservedHash: q.RowHash}, values, exists, columns)
	if !ok {
		return Queue{}, fmt.Errorf("%w: %s", ErrQuarantineNotDismissable, q.ID)
	}
	return qu, nil
}
