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
// Errors: ErrQuarantineNotDismissable, saying why (cleared, no row, or a
// removed entity); the message carries no cell value.
func DecideDismiss(q QuarantinedRow, values map[string]any, exists bool, columns []string) (Queue, error) {
	if why := notDismissable(q, exists); why != "" {
		return Queue{}, fmt.Errorf("%w: quarantine record %s %s", ErrQuarantineNotDismissable, q.ID, why)
	}
	qu, ok := Correction(Effect{Target: q.Target, Entity: q.Entity, EntityID: q.Anchor, ObservedHash: q.RowHash}, values, exists, columns)
	if !ok {
		return Queue{}, fmt.Errorf("%w: quarantine record %s has nothing to rewrite", ErrQuarantineNotDismissable, q.ID)
	}
	return qu, nil
}

// notDismissable says why q cannot be dismissed ("" when it can).
func notDismissable(q QuarantinedRow, exists bool) string {
	switch {
	case !q.Active:
		return "is no longer active: a poll found its row changed since (the value fixed, accepted or rewritten); nothing to dismiss"
	case q.Anchor == "" || q.RowHash == "":
		return "names no row of the sheet (its row had no anchor): nothing to rewrite"
	case !exists:
		return "belongs to a record that was removed: its row goes away with it"
	}
	return ""
}
