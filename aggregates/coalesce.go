package aggregates

import (
	"fmt"
	"maps"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Coalescing (I32): a change of a row whose last effect is still pending
// and was never claimed is merged into that effect instead of queueing one
// more, so a burst of commits on a row costs one write, not one per
// commit. The merged effect keeps its place (its stream_sequence) and
// writes the row's newest desired state; nothing behind it is reordered.
// Only System rows of plain commits merge: an effect that carries
// evidence (an ExpectedHash guard: corrections, repairs, reconciles,
// cleanups), an Input row (conflict rules stay exact) and a Sync_Conflicts
// row are never merged, on either side.

// coalescedWrite is the op and values a tail effect writes once q merged
// into it.
type coalescedWrite struct {
	Op     events.Op
	Values map[string]any
}

// coalesce reports whether q may merge into tail, the last effect queued
// for q's row, and what the merged effect writes:
//   - append + update → one append of the merged row;
//   - update + update → one update of the changed cells, later ones win;
//   - update + delete → the delete (the row goes: the update is moot).
//
// Any other pair (an append after a delete, a delete after an append, …)
// is queued as its own effect.
func coalesce(tail Effect, q Queue, sheet Sheet) (coalescedWrite, bool) {
	if !coalescible(tail, q, sheet) {
		return coalescedWrite{}, false
	}
	switch {
	case q.Op == events.OpUpdate && (tail.Op == events.OpAppend || tail.Op == events.OpUpdate):
		v := maps.Clone(tail.Values)
		if v == nil {
			v = map[string]any{}
		}
		maps.Copy(v, q.Values)
		return coalescedWrite{Op: tail.Op, Values: v}, true
	case q.Op == events.OpDelete && tail.Op == events.OpUpdate:
		return coalescedWrite{Op: events.OpDelete}, true
	}
	return coalescedWrite{}, false
}

// coalescible is the evidence rule: tail never left pending (never
// claimed, so no receipt can name its payload hash, I09), both effects
// write the same System row of the same entity and neither is guarded.
func coalescible(tail Effect, q Queue, sheet Sheet) bool {
	if tail.State != EffectPending || tail.Attempts != 0 || tail.ClaimToken != "" {
		return false
	}
	if tail.Target != q.Target || tail.Entity != q.Entity || tail.EntityID != q.ID {
		return false
	}
	if tail.ExpectedHash != "" || q.ExpectedHash != "" {
		return false
	}
	return systemRow(sheet, q.Entity, q.Target.Tab)
}

// systemRow reports whether tab is entity's System tab (a row tab people
// do not edit).
func systemRow(sheet Sheet, entity, tab string) bool {
	for _, t := range sheet.RowTabs(entity) {
		if t.Tab == tab {
			return !t.Input
		}
	}
	return false
}

// DecideCoalesce merges q into tail (see coalesce): it returns the
// effect.coalesced event on tail's stream, at tail's version, or ok false
// when q must be queued as its own effect.
// Errors: ErrInvalidValue (a value without canonical form).
func DecideCoalesce(tail Effect, q Queue, sheet Sheet, now time.Time) (Decision, bool, error) {
	w, ok := coalesce(tail, q, sheet)
	if !ok {
		return Decision{}, false, nil
	}
	hash, err := payloadHash(w.Op, tail.Target, w.Values)
	if err != nil {
		return Decision{}, false, err
	}
	return transition(tail, events.EffectCoalesced{EffectID: tail.ID, Op: w.Op, Values: w.Values, PayloadHash: hash}, now), true, nil
}

// payloadHash is an effect's payload hash: over op, tab, anchor and values
// (I09).
func payloadHash(op events.Op, t Target, values map[string]any) (string, error) {
	hash, err := events.EffectPayloadHash(op, t.Tab, t.Anchor, values)
	if err != nil {
		return "", fmt.Errorf("%w: effect payload: %w", ErrInvalidValue, err)
	}
	return hash, nil
}
