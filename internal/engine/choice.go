package engine

import (
	"errors"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// WatchesChoices implements effects.Inbound: a poll reads Sync_Conflicts
// for resolutions chosen in the sheet only while a conflict is open.
func (e *Engine) WatchesChoices() (bool, error) {
	n := 0
	err := e.onWriter(func() (err error) { n, err = e.proj.OpenConflictCount(); return err })
	return n > 0, err
}

// Choose implements effects.Inbound: it decides the resolutions people
// chose in Sync_Conflicts rows (aggregates.PlanSheetChoice,
// DecideSheetChoice), one fenced commit per choice (two choices may touch
// the same record). A row with an effect in flight (its reason being
// written, its RESOLVED update pending), a row the store wrote after the
// poll's base checkpoint (the read may predate that write) and a row of
// no known conflict are left for a later poll.
func (e *Engine) Choose(base uint64, choices []aggregates.SheetChoice) (map[aggregates.ChoiceOutcome]int, error) {
	out := map[aggregates.ChoiceOutcome]int{}
	for _, ch := range choices {
		var outcome aggregates.ChoiceOutcome
		err := e.onWriter(func() (err error) { outcome, err = e.choose(base, ch); return err })
		if err != nil {
			return out, err
		}
		if outcome != "" {
			out[outcome]++
		}
	}
	return out, nil
}

// rowMoved reports whether a row has an effect in flight or was written
// after checkpoint base.
func (e *Engine) rowMoved(base uint64, binding string) (bool, error) {
	busy, err := e.proj.InFlight(binding)
	if err != nil || busy {
		return busy, err
	}
	_, _, seq, ok, err := e.proj.Visible(binding)
	return ok && seq > base, err
}

// choose decides and commits one choice; "" when left for later.
func (e *Engine) choose(base uint64, ch aggregates.SheetChoice) (aggregates.ChoiceOutcome, error) {
	if later, err := e.rowMoved(base, layout.RowBindingID(layout.ConflictsTab, ch.ConflictID)); err != nil || later {
		return "", err
	}
	st, err := e.ackState(aggregates.Acknowledge{ConflictID: ch.ConflictID}, true)
	if errors.Is(err, ErrConflictNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	plan := aggregates.PlanSheetChoice(ch, st)
	if st.Prior, err = e.prior(plan.Cmd.CommandID); err != nil {
		return "", err
	}
	now := e.cfg.Clock.Now()
	c, outcome, err := aggregates.DecideSheetChoice(plan, ch, st, e.sheet, now)
	if err != nil {
		return "", err
	}
	return outcome, e.commitWorker(c, now)
}
