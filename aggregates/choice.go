package aggregates

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/hikoutei/hikoutei-go/events"
)

// SheetChoice is a resolution a person chose in a conflict's
// Sync_Conflicts row, as a poll read the row: the choice cell, the values
// the row showed next to it, the row's resolution_result cell and its
// guard hash (which leaves the choice cell out).
type SheetChoice struct {
	ConflictID              string
	Choice                  string
	SystemShown, SheetShown string
	Status, Result          string
	RowHash                 string
	SheetRow                int // where the poll read it (1-based)
	// Formula: the choice cell holds a formula (or an error value, or is
	// merged), which is never a choice, whatever it shows.
	Formula bool
}

// Pending reports whether the choice may still be decided: set on a row
// that shows its conflict open (the only rows whose choice cell a grid
// read checks for formulas).
func (c SheetChoice) Pending() bool { return c.Choice != "" && c.Status == "OPEN" }

// parseChoice reads a choice cell: "keep system" or "use sheet" (case,
// edge space and "_" for " " do not matter). ok is false for anything
// else.
func parseChoice(s string) (how events.Resolution, ok bool) {
	s = strings.Join(strings.Fields(strings.ToLower(strings.ReplaceAll(s, "_", " "))), " ")
	switch s {
	case "keep system":
		return events.ResolutionAcknowledged, true
	case "use sheet":
		return events.ResolutionUseSheet, true
	}
	return "", false
}

// ChoicePlan is what a choice asks for before the command runs: nothing
// (Skip), a rejection of the row as it is (Reject, and Clear when the
// choice cell is emptied), or the resolution command Cmd for How.
type ChoicePlan struct {
	Skip          bool
	Reject        string
	Clear         bool
	How           events.Resolution
	Cmd           Acknowledge
	ShownMismatch bool
}

// Reasons a choice made in the sheet is not applied, as the row's
// resolution_result shows them.
const (
	choiceNotAChoice = "not applied: not a choice; pick keep system or use sheet"
	choiceFormula    = "not applied: a formula is never a choice; pick keep system or use sheet from the list"
	choiceResolved   = "not applied: already resolved (%s)"
	choiceMovedOn    = "not applied: the conflict changed after this row was written; its values above are current, choose again"
	choiceBlocked    = "not applied: this conflict cannot be resolved from the sheet; use hikoutei conflicts resolve"
)

// PlanSheetChoice is the first half of a choice's decision (pure): st is
// the conflict's AckState with its candidate value (Prior not needed). A
// choice on an open conflict becomes the resolution command, fenced by
// what the row showed: when the row's system or sheet value is no longer
// the conflict's (the person typed again, the record changed), the fence
// carries a fingerprint of what was shown instead of the candidate hash,
// so the command is stale and records that, never applied over values
// the person did not see. The command id is derived from the row and
// the fence: a repeated poll of the same row repeats the same command.
func PlanSheetChoice(ch SheetChoice, st AckState) ChoicePlan {
	how, ok := parseChoice(ch.Choice)
	cs := st.Conflict
	switch {
	case ch.Formula:
		return ChoicePlan{Skip: ch.Result == choiceFormula, Reject: choiceFormula}
	case !ok:
		return ChoicePlan{Skip: ch.Result == choiceNotAChoice, Reject: choiceNotAChoice}
	case cs.Status != ConflictOpen && cs.Resolution == how:
		return ChoicePlan{Skip: true}
	case cs.Status != ConflictOpen:
		return ChoicePlan{Reject: fmt.Sprintf(choiceResolved, resolutionName(cs.Resolution)), Clear: true}
	}
	cmd := Acknowledge{ConflictID: cs.ID, CanonicalRevision: st.CanonicalRevision, CandidateHash: cs.Sheet.CandidateHash,
		CandidateEpoch: cs.Sheet.CandidateEpoch, Actor: events.ActorSheet}
	mismatch := ch.SystemShown != Render(st.CanonicalValue) || !st.CandidateKnown || ch.SheetShown != Render(st.CandidateValue)
	if mismatch {
		cmd.CandidateHash = "shown:" + fingerprint(ch.SystemShown, ch.SheetShown)
	}
	cmd.CommandID = "sheet-" + fingerprint(cs.ID, string(how), ch.RowHash, fmt.Sprint(cmd.CanonicalRevision), cmd.CandidateHash,
		fmt.Sprint(cmd.CandidateEpoch))
	return ChoicePlan{How: how, Cmd: cmd, ShownMismatch: mismatch}
}

// resolutionName is how the sheet names a resolution.
func resolutionName(how events.Resolution) string {
	switch how {
	case events.ResolutionAcknowledged:
		return "keep system"
	case events.ResolutionUseSheet:
		return "use sheet"
	case events.ResolutionSystemWins:
		return "system wins"
	}
	return string(how)
}

func fingerprint(parts ...string) string {
	return fmt.Sprintf("%016x", xxhash.Sum64String(strings.Join(parts, "\x00")))
}

// ChoiceOutcome is how one choice made in the sheet ended.
type ChoiceOutcome string

// Choice outcomes.
const (
	ChoiceSkipped  ChoiceOutcome = "skipped"  // nothing to do: already as chosen, or the reason already shows
	ChoiceApplied  ChoiceOutcome = "applied"  // the conflict is resolved as chosen
	ChoiceRejected ChoiceOutcome = "rejected" // not applied; the row says why
	// RowRestored: an open conflict's row a person deleted is appended
	// again.
	RowRestored ChoiceOutcome = "row_restored"
	// RowCopyRemoved: one copy of a conflict's row a person pasted is
	// deleted (by full-row CAS); no choice is decided while the anchor
	// shows twice.
	RowCopyRemoved ChoiceOutcome = "row_copy_removed"
)

// RestoreConflictRow is the append that shows an open conflict's row
// again after a person deleted it: the conflict's values now (st with its
// candidate value), opened at its opening time.
func RestoreConflictRow(st AckState, sheet Sheet) Queue {
	cs := st.Conflict
	opened := events.ConflictOpened{ConflictID: cs.ID, Entity: cs.Entity, ID: cs.EntityID, Field: cs.Field,
		SystemValue: Render(st.CanonicalValue), SheetValue: cs.SheetValue}
	if st.CandidateKnown {
		opened.SheetValue = Render(st.CandidateValue)
	}
	return Queue{Target: sheet.Target(sheet.ConflictsTab(), cs.ID), Op: events.OpAppend, Entity: cs.Entity, ID: cs.EntityID,
		Values: sheet.AuditOpened(opened, cs.OpenedAt)}
}

// RemoveConflictRowCopy deletes one copy of a conflict's row that shows
// more than once (a person pasted it), by full-row CAS: a copy that
// differs from what the store last wrote (expected), else one of the
// identical copies; one per poll. False when there is nothing to delete.
func RemoveConflictRowCopy(cs Conflict, expected string, copies []string, sheet Sheet) (Queue, bool) {
	return duplicateRepair(RepairRow{Target: sheet.Target(sheet.ConflictsTab(), cs.ID), Entity: cs.Entity, ID: cs.EntityID,
		Expected: expected, CopyHashes: copies})
}

// DecideSheetChoice is the second half (pure): st.Prior is the first
// outcome of plan.Cmd's id. An applied command resolves the conflict as
// DecideAcknowledge or DecideAcceptUser do, with the sheet as the actor;
// a command that is stale or rejected, and a plan's rejection, queue the
// update of the conflict's row that shows the reason and the conflict's
// values now, guarded by the row hash the poll read (a row changed since
// is left alone and read again by the next poll).
func DecideSheetChoice(plan ChoicePlan, ch SheetChoice, st AckState, sheet Sheet, now time.Time) (Changes, ChoiceOutcome, error) {
	if plan.Skip {
		return Changes{}, ChoiceSkipped, nil
	}
	if plan.Reject != "" {
		return rejectChoice(plan.Reject, plan.Clear, ch, st, sheet), ChoiceRejected, nil
	}
	decide := DecideAcknowledge
	if plan.How == events.ResolutionUseSheet {
		decide = DecideAcceptUser
	}
	c, outcome, _, err := decide(st, plan.Cmd, sheet, now)
	switch {
	case outcome == AckApplied:
		return c, ChoiceApplied, nil
	case outcome == "":
		return Changes{}, "", err
	}
	reason := choiceBlocked
	switch {
	case plan.ShownMismatch || errors.Is(err, ErrConflictStale):
		reason = choiceMovedOn
	case errors.Is(err, ErrConflictNotOpen):
		reason = fmt.Sprintf(choiceResolved, resolutionName(st.Conflict.Resolution))
	}
	c.Merge(rejectChoice(reason, true, ch, st, sheet))
	return c, ChoiceRejected, nil
}

// rejectChoice queues the row update of a choice not applied; an open
// conflict's row also shows the conflict's values now.
func rejectChoice(reason string, clear bool, ch SheetChoice, st AckState, sheet Sheet) Changes {
	cs := st.Conflict
	values := sheet.ChoiceRejected(reason, clear)
	if cs.Status == ConflictOpen && st.CandidateKnown {
		maps.Copy(values, sheet.AuditValues(Render(st.CanonicalValue), Render(st.CandidateValue)))
	}
	var c Changes
	c.Queue = append(c.Queue, Queue{Target: sheet.Target(sheet.ConflictsTab(), cs.ID), Op: events.OpUpdate, Entity: cs.Entity,
		ID: cs.EntityID, ExpectedHash: ch.RowHash, Values: values})
	return c
}
