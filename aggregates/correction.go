package aggregates

import (
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Correction decides the effect that makes the row of a terminal failed
// effect e show canonical state again (I10): the entity's values (exists
// false once removed) picked for the tab's columns, guarded by the row hash
// the failure observed. ok is false when nothing needs writing (the entity
// is gone and so is the row), and for a write that failed because its
// anchor shows on several rows: any write of that row fails the same way
// until a copy is gone, so the failed effect is superseded alone and the
// copies are anti-entropy's, which reads them (duplicateRepair on a
// System tab, people's quarantine on an Input tab), then rewrites the row
// left from canonical state.
func Correction(e Effect, values map[string]any, exists bool, columns []string) (Queue, bool) {
	q := Queue{Target: e.Target, Entity: e.Entity, ID: e.EntityID, ExpectedHash: e.ObservedHash}
	switch {
	case e.LastCode == CodeAnchorDuplicated:
		return q, false
	case !exists && e.ObservedHash == "":
		return q, false
	case !exists:
		q.Op = events.OpDelete
	case e.ObservedHash == "":
		q.Op, q.Values = events.OpAppend, pick(columns, values)
	default:
		q.Op, q.Values = events.OpUpdate, pick(columns, values)
	}
	// A write of no cell is refused by the provider (invalid_op), and its
	// correction would be the same write: reconciliation would supersede
	// one by the next forever. Nothing to write is no write.
	return q, q.Op == events.OpDelete || len(q.Values) > 0
}

// ConflictRowCorrection decides the effect that makes the Sync_Conflicts
// row of a terminal failed effect e show what the store last meant it to
// show (I10): the cells every effect of the row wrote or meant to write,
// in order (rowFx, e included: its OPEN append, value refreshes, a
// rejection's reason, the RESOLVED update), all but the person's choice
// cell (choiceColumn, left as it is). A row that differs from what the
// store wrote (a person edited a cell: row_hash_mismatch) is rewritten
// whole, by CAS on the row the failure observed, so an edit made since is
// never overwritten (the correction then fails and is corrected again from
// what it observed); a row that is gone (anchor_not_found) is appended
// again. A failure that observed no row for another reason queues the
// update guarded by no row: it fails with the row it finds, whose
// correction then writes. ok is false when the row's effects wrote
// nothing to fold (then nothing can be written, and nothing is queued:
// never a write that fails the same way again).
func ConflictRowCorrection(e Effect, rowFx []Effect, choiceColumn string) (Queue, bool) {
	values := map[string]any{}
	for _, fx := range rowFx {
		if fx.Op == events.OpDelete {
			continue // a copy's removal: the row itself stays
		}
		for k, v := range fx.Values {
			values[k] = v
		}
	}
	delete(values, choiceColumn)
	q := Queue{Target: e.Target, Entity: e.Entity, ID: e.EntityID, ExpectedHash: e.ObservedHash, Op: events.OpUpdate, Values: values}
	if e.ObservedHash == "" && e.LastCode == CodeAnchorNotFound {
		q.Op = events.OpAppend
	}
	return q, len(values) > 0
}

// CodeAnchorNotFound is the failure code of a write whose row is gone.
const CodeAnchorNotFound = "anchor_not_found"

// CodeAnchorDuplicated is the failure code of a write whose anchor shows
// on several rows.
const CodeAnchorDuplicated = "anchor_duplicated"

func pick(columns []string, vals map[string]any) map[string]any {
	out := map[string]any{}
	for _, c := range columns {
		if v, ok := vals[c]; ok {
			out[c] = v
		}
	}
	return out
}

// DecideSupersede marks a terminal failed head superseded by replacement
// (I10, "" when the row needs no write); recoverable failures are never
// superseded. Errors: ErrNotSupersedable.
func DecideSupersede(e Effect, replacement string, now time.Time) (Decision, error) {
	if e.State != EffectFailed || !e.Terminal {
		return Decision{}, fmt.Errorf("%w: %s is %s (terminal %v)", ErrNotSupersedable, e.ID, e.State, e.Terminal)
	}
	return transition(e, events.EffectSuperseded{EffectID: e.ID, By: replacement}, now), nil
}

// decideFold supersedes e, a pending effect queued behind terminal failed
// on the same row, by replacement: the correction reconciliation queues
// for failed (Correction). The correction writes the entity's canonical
// state, which already holds what e would have written, while e would
// meet the failure again — an update of a System row a person deleted
// fails anchor_not_found, and each pending update behind it would hold
// the row back one more reconciliation period (I28). Errors:
// ErrNotSupersedable unless e is pending on failed's row and queued after
// it, and failed is a terminal failure replaced by a correction.
func decideFold(e, failed Effect, replacement string, now time.Time) (Decision, error) {
	switch {
	case replacement == "" || failed.State != EffectFailed || !failed.Terminal:
		return Decision{}, fmt.Errorf("%w: %s is not a replaced terminal failure", ErrNotSupersedable, failed.ID)
	case !Behind(e, failed):
		return Decision{}, fmt.Errorf("%w: %s is %s, not pending behind %s", ErrNotSupersedable, e.ID, e.State, failed.ID)
	}
	return transition(e, events.EffectSuperseded{EffectID: e.ID, By: replacement}, now), nil
}

// Behind reports whether e is pending on failed's row, queued after it:
// what decideFold folds into failed's correction.
func Behind(e, failed Effect) bool {
	return e.State == EffectPending && e.Target == failed.Target && e.StreamSeq > failed.StreamSeq
}

// FoldBehind folds each effect of behind (pending effects queued after
// failed on its row) not yet in folded into failed's correction
// (decideFold), marking it folded, so a unit supersedes each once.
func FoldBehind(ch *Changes, behind []Effect, failed Effect, replacement string, folded map[string]bool, now time.Time) error {
	for _, p := range behind {
		if folded[p.ID] {
			continue
		}
		folded[p.ID] = true
		d, err := decideFold(p, failed, replacement, now)
		if err != nil {
			return err
		}
		ch.AddDecision(d)
	}
	return nil
}
