package demo

import (
	"context"
	"fmt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

const inputTab = "Airport_Input"

// Result is the outcome of one person act, as the read model shows it.
type Result string

// Results the acts may reach (each act has its own set of correct ones).
const (
	// ResultAccepted: the edit became canonical state.
	ResultAccepted Result = "accepted"
	// ResultConflict: both sides changed the field: a conflict opened.
	ResultConflict Result = "conflict"
	// ResultAcceptedThenOverridden: a poll took the person's edit before
	// the application's commit, which then won as a plain later write.
	ResultAcceptedThenOverridden Result = "accepted_then_overridden"
	// ResultQuarantined: the row is quarantined for review.
	ResultQuarantined Result = "quarantined"
	// ResultRemovedByCleanup: the surplus-row cleanup deleted a copy by
	// full-row CAS before a poll saw two different rows.
	ResultRemovedByCleanup Result = "removed_by_cleanup"
	// ResultNothingRecorded: no edit was recorded.
	ResultNothingRecorded Result = "nothing_recorded"
	// ResultEditsRecorded: edits were recorded where none were made.
	ResultEditsRecorded Result = "edits_recorded"
)

// Outcome is one person act and the outcome the demo observed.
type Outcome struct {
	Act    string
	Result Result
}

// act is one thing people do on Airport_Input, with the outcomes a
// correct product may reach: observe reports the one the read model
// shows, "" while none is reached yet.
type act struct {
	what     string
	do       func() error
	outcomes []Result
	observe  func(context.Context, *readModel) (Result, error)
}

// allows reports whether r is one of the act's correct outcomes.
func (a act) allows(r Result) bool {
	for _, o := range a.outcomes {
		if o == r {
			return true
		}
	}
	return false
}

// people plays what people do on Airport_Input, through the emulator's
// person API (edits like the Sheets UI: USER_ENTERED typing).
type people struct {
	e   *env
	p   *emulator.Person
	log func(format string, args ...any)
}

// acts are the six edits of the demo (one with the application's
// concurrent change) and their correct outcomes.
func (pp *people) acts(ctx context.Context) []act {
	d := pp.e.data
	return []act{
		{"a clean edit of notes", func() error { return pp.typeAt(d[0].ID, "notes", cleanNote) },
			[]Result{ResultAccepted}, pp.noteAccepted(d[0].ID)},
		{"an edit of altitude while the application changes it too", func() error { return pp.collide(ctx, &d[1]) },
			[]Result{ResultConflict, ResultAcceptedThenOverridden}, collided(d[1].ID)},
		{"text typed into the numeric altitude column", func() error { return pp.typeAt(d[2].ID, "altitude", "very high") },
			[]Result{ResultQuarantined}, quarantinedAny(d[2].ID)},
		{"a formula typed into notes (its result is never imported)", func() error { return pp.formulaAt(d[3].ID, "notes", "=1+1") },
			[]Result{ResultQuarantined}, quarantinedAny(d[3].ID)},
		{"a pasted duplicate row, edited in the copy", func() error { return pp.paste(d[4].ID) },
			[]Result{ResultQuarantined, ResultRemovedByCleanup}, duplicate(d[4].ID)},
		{"a sort of the whole tab, descending", func() error { return pp.p.SortByColumn(inputTab, "A", true, 1) },
			[]Result{ResultNothingRecorded}, onlyEditsOf(d[0].ID, d[1].ID, d[4].ID)},
	}
}

const cleanNote = "runway resurfaced 2026"

// noteAccepted: the typed note is canonical.
func (pp *people) noteAccepted(id string) func(context.Context, *readModel) (Result, error) {
	return func(ctx context.Context, _ *readModel) (Result, error) {
		a, err := hikoutei.Get[Airport](ctx, pp.e.store, id)
		if err != nil || a == nil || a.Notes != cleanNote {
			return "", err
		}
		return ResultAccepted, nil
	}
}

// collided: a conflict opened, or a poll accepted the edit before the
// application's commit (which then won).
func collided(id string) func(context.Context, *readModel) (Result, error) {
	return func(_ context.Context, rm *readModel) (Result, error) {
		if n, err := rm.conflicts(id, ""); err != nil || n > 0 {
			return ResultConflict, err
		}
		if n, err := rm.accepted(id); err != nil || n > 0 {
			return ResultAcceptedThenOverridden, err
		}
		return "", nil
	}
}

func quarantinedAny(id string) func(context.Context, *readModel) (Result, error) {
	return func(_ context.Context, rm *readModel) (Result, error) {
		if n, err := rm.quarantined(id, ""); err != nil || n == 0 {
			return "", err
		}
		return ResultQuarantined, nil
	}
}

// duplicate: the cleanup removed one copy by full-row CAS (its read saw
// the copies while still identical, before the person typed; the
// person's note on the remaining row is then an ordinary edit, or lands
// on a row without an anchor), or, once nothing is in flight on the row,
// the two different copies are quarantined (duplicate anchor). Removal
// is checked first: a quarantine recorded before the delete landed is
// cleared by a later pass. Polls and cleanups never overlap, so once a
// poll has recorded the different copies, any delete decided from an
// earlier read is already queued (in flight).
func duplicate(id string) func(context.Context, *readModel) (Result, error) {
	return func(_ context.Context, rm *readModel) (Result, error) {
		if n, err := rm.removed(id); err != nil || n > 0 {
			return ResultRemovedByCleanup, err
		}
		if n, err := rm.inFlight(id); err != nil || n > 0 {
			return "", err
		}
		if n, err := rm.quarantined(id, aggregates.ReasonDuplicateAnchor); err != nil || n > 0 {
			return ResultQuarantined, err
		}
		return "", nil
	}
}

// onlyEditsOf: no edit was accepted on rows other than the edited ones.
func onlyEditsOf(ids ...string) func(context.Context, *readModel) (Result, error) {
	return func(_ context.Context, rm *readModel) (Result, error) {
		if n, err := rm.acceptedOutside(ids...); err != nil || n > 0 {
			return ResultEditsRecorded, err
		}
		return ResultNothingRecorded, nil
	}
}

// collide: the person types a new altitude while the application commits
// another one for the same airport before the next poll (usually).
func (pp *people) collide(ctx context.Context, a *Airport) error {
	if err := pp.typeAt(a.ID, "altitude", fmt.Sprint(a.Altitude+1000)); err != nil {
		return err
	}
	a.Altitude += 7
	return pp.persist(ctx, a)
}

// systemWins is the application's later commit that strictly raises the
// conflicted field's revision: implicit system-wins (I12).
func (pp *people) systemWins(ctx context.Context) error {
	a := &pp.e.data[1]
	a.Altitude += 3
	return pp.persist(ctx, a)
}

func (pp *people) persist(ctx context.Context, a *Airport) error {
	u := pp.e.store.Begin()
	if err := u.Persist(a); err != nil {
		return err
	}
	_, err := u.Commit(ctx)
	return err
}

// cell finds the A1 reference of column on the row whose anchor is id.
func (pp *people) cell(id, column string) (string, error) {
	rows, err := pp.p.Displayed(inputTab)
	if err != nil {
		return "", err
	}
	col := -1
	for j, h := range rows[0] {
		if h == column {
			col = j
		}
	}
	for i, r := range rows {
		if len(r) > 0 && r[len(r)-1] == id && col >= 0 {
			return fmt.Sprintf("%c%d", 'A'+col, i+1), nil
		}
	}
	return "", fmt.Errorf("no row for %s on %s", id, inputTab)
}

func (pp *people) typeAt(id, column, text string) error {
	ref, err := pp.cell(id, column)
	if err != nil {
		return err
	}
	return pp.p.Type(inputTab, ref, text)
}

func (pp *people) formulaAt(id, column, formula string) error {
	ref, err := pp.cell(id, column)
	if err != nil {
		return err
	}
	return pp.p.TypeFormula(inputTab, ref, formula)
}

// paste copies the row of id to the end of the tab and types a note into
// the copy: two different rows claim one anchor, so the row is quarantined
// and left for review, unless the surplus-row cleanup read the copy while
// it was still identical and removed one copy by full-row CAS.
func (pp *people) paste(id string) error {
	ref, err := pp.cell(id, "notes")
	if err != nil {
		return err
	}
	var row int
	fmt.Sscanf(ref[1:], "%d", &row)
	at, err := pp.p.PasteRow(inputTab, row)
	if err != nil {
		return err
	}
	return pp.p.Type(inputTab, fmt.Sprintf("%c%d", ref[0], at), "copied by hand")
}
