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
// written, its RESOLVED update pending) and a row of no known conflict
// are left for a later poll.
func (e *Engine) Choose(choices []aggregates.SheetChoice) (map[aggregates.ChoiceOutcome]int, error) {
	out := map[aggregates.ChoiceOutcome]int{}
	for _, ch := range choices {
		var outcome aggregates.ChoiceOutcome
		err := e.onWriter(func() (err error) { outcome, err = e.choose(ch); return err })
		if err != nil {
			return out, err
		}
		if outcome != "" {
			out[outcome]++
		}
	}
	return out, nil
}

// choose decides and commits one choice; "" when left for later.
func (e *Engine) choose(ch aggregates.SheetChoice) (aggregates.ChoiceOutcome, error) {
	busy, err := e.proj.InFlight(layout.RowBindingID(layout.ConflictsTab, ch.ConflictID))
	if err != nil || busy {
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
