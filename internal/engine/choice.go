package engine

import (
	"errors"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// WatchesChoices implements effects.Inbound: a poll reads Sync_Conflicts
// only while a conflict is open.
func (e *Engine) WatchesChoices() (bool, error) {
	n := 0
	err := e.onWriter(func() (err error) { n, err = e.proj.OpenConflictCount(); return err })
	return n > 0, err
}

// Choose implements effects.Inbound: for every conflict whose row the
// poll read (rows, by anchor) it removes a copy a person pasted, or
// decides the resolution a person chose (aggregates.PlanSheetChoice,
// DecideSheetChoice); then it appends again the rows of open conflicts a
// person deleted. One fenced commit per row (two may touch the same
// record). A row with an effect in flight, a row the store wrote after
// the poll's base checkpoint (the read may predate that write) and a row
// of no known conflict are left for a later poll.
func (e *Engine) Choose(base uint64, rows map[string][]aggregates.SheetChoice) (map[aggregates.ChoiceOutcome]int, error) {
	out := map[aggregates.ChoiceOutcome]int{}
	count := func(o aggregates.ChoiceOutcome, err error) error {
		if o != "" {
			out[o]++
		}
		return err
	}
	for _, id := range sortedKeys(rows) {
		var o aggregates.ChoiceOutcome
		err := e.onWriter(func() (err error) { o, err = e.decideRow(base, id, rows[id]); return err })
		if err := count(o, err); err != nil {
			return out, err
		}
	}
	var open []aggregates.Conflict
	if err := e.onWriter(func() (err error) { open, err = e.proj.ConflictsIn(aggregates.ConflictOpen); return err }); err != nil {
		return out, err
	}
	for _, cf := range open {
		if _, seen := rows[cf.ID]; seen {
			continue
		}
		var o aggregates.ChoiceOutcome
		err := e.onWriter(func() (err error) { o, err = e.restoreRow(base, cf.ID); return err })
		if err := count(o, err); err != nil {
			return out, err
		}
	}
	return out, nil
}

// settledRow returns the row's guard hash as the store last wrote it,
// and false when the row has an effect in flight or was written after
// checkpoint base (or never written).
func (e *Engine) settledRow(base uint64, id string) (string, bool, error) {
	binding := layout.RowBindingID(layout.ConflictsTab, id)
	busy, err := e.proj.InFlight(binding)
	if err != nil || busy {
		return "", false, err
	}
	hash, _, seq, ok, err := e.proj.Visible(binding)
	return hash, ok && seq <= base, err
}

// conflictNow reads what deciding a conflict's row needs; ok is false for
// no known conflict.
func (e *Engine) conflictNow(id string) (aggregates.AckState, bool, error) {
	st, err := e.ackState(aggregates.Acknowledge{ConflictID: id}, true)
	if errors.Is(err, ErrConflictNotFound) {
		return st, false, nil
	}
	return st, err == nil, err
}

// decideRow decides one conflict's rows; "" when left for later.
func (e *Engine) decideRow(base uint64, id string, copies []aggregates.SheetChoice) (aggregates.ChoiceOutcome, error) {
	expected, settled, err := e.settledRow(base, id)
	if err != nil || !settled {
		return "", err
	}
	st, ok, err := e.conflictNow(id)
	if err != nil || !ok {
		return "", err
	}
	now := e.cfg.Clock.Now()
	if len(copies) > 1 {
		hashes := make([]string, len(copies))
		for i, c := range copies {
			hashes[i] = c.RowHash
		}
		q, ok := aggregates.RemoveConflictRowCopy(st.Conflict.Conflict, expected, hashes, e.sheet)
		if !ok {
			return "", nil
		}
		return aggregates.RowCopyRemoved, e.commitWorker(aggregates.Changes{Queue: []aggregates.Queue{q}}, now)
	}
	if copies[0].Choice == "" {
		return "", nil
	}
	return e.choose(copies[0], st, now)
}

// choose decides and commits one choice.
func (e *Engine) choose(ch aggregates.SheetChoice, st aggregates.AckState, now time.Time) (aggregates.ChoiceOutcome, error) {
	plan := aggregates.PlanSheetChoice(ch, st)
	var err error
	if st.Prior, err = e.prior(plan.Cmd.CommandID); err != nil {
		return "", err
	}
	c, outcome, err := aggregates.DecideSheetChoice(plan, ch, st, e.sheet, now)
	if err != nil {
		return "", err
	}
	return outcome, e.commitWorker(c, now)
}

// restoreRow appends again the row of open conflict id that the poll did
// not find, once the store's last write of it settled (a row never
// written is the outbox's to deliver).
func (e *Engine) restoreRow(base uint64, id string) (aggregates.ChoiceOutcome, error) {
	if _, settled, err := e.settledRow(base, id); err != nil || !settled {
		return "", err
	}
	st, ok, err := e.conflictNow(id)
	if err != nil || !ok {
		return "", err
	}
	now := e.cfg.Clock.Now()
	q := aggregates.RestoreConflictRow(st, e.sheet)
	return aggregates.RowRestored, e.commitWorker(aggregates.Changes{Queue: []aggregates.Queue{q}}, now)
}
