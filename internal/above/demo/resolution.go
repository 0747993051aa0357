package demo

import (
	"context"
	"fmt"
	"slices"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// ResultResolvedUseSheet: a person chose "use sheet" for a conflict in
// Sync_Conflicts and the store committed the person's value.
const ResultResolvedUseSheet Result = "resolved_use_sheet"

// resolveAttempts bounds the airports the resolution act tries: a poll
// that reads the person's edit before the application's commit is a
// correct outcome without a conflict, and the act moves to the next one.
const resolveAttempts = 5

// MinRows is the fewest airports the demo runs on: the person acts edit
// the first six, and the resolution act tries the next resolveAttempts.
const MinRows = 6 + resolveAttempts

// resolveInSheet: a person and the application change the same altitude,
// the conflict opens, and the person picks "use sheet" in its
// Sync_Conflicts row; the next poll commits the person's value.
func (e *env) resolveInSheet(ctx context.Context, pp *people) (Outcome, error) {
	const what = "a conflict resolved in Sync_Conflicts with use sheet"
	e.logf("a person resolves a conflict from the sheet:")
	for i := 0; i < resolveAttempts && 6+i < len(e.data); i++ {
		a := &e.data[6+i]
		want := a.Altitude + 1000
		if err := pp.collide(ctx, a); err != nil {
			return Outcome{}, err
		}
		cid, err := e.awaitCollision(ctx, a.ID)
		if err != nil {
			return Outcome{}, err
		}
		if cid == "" {
			e.logf("  a poll took the edit of %s before the application's commit (no conflict); trying the next airport", a.ID)
			continue
		}
		if err := e.chooseUseSheet(ctx, pp, cid, a, want); err != nil {
			return Outcome{}, err
		}
		return Outcome{Act: what, Result: ResultResolvedUseSheet}, nil
	}
	return Outcome{}, fmt.Errorf("%w: %s: no conflict opened in %d attempts", ErrUnexpectedOutcome, what, resolveAttempts)
}

// awaitCollision waits until the collision of id is recorded: the open
// conflict's id, or "" when a poll accepted the edit first.
func (e *env) awaitCollision(ctx context.Context, id string) (string, error) {
	var cid string
	err := e.waitFor(ctx, "the collision on "+id, true, func() (bool, string, error) {
		done := false
		err := e.withReadModel(ctx, func(rm *readModel) error {
			var err error
			if cid, err = rm.openConflict(id); err != nil || cid != "" {
				done = true
				return err
			}
			n, err := rm.accepted(id)
			done = n > 0
			return err
		})
		return done, "", err
	})
	return cid, err
}

// chooseUseSheet waits for the conflict's Sync_Conflicts row, picks "use
// sheet" in it, and waits until the store committed the person's value.
func (e *env) chooseUseSheet(ctx context.Context, pp *people, cid string, a *Airport, want int64) error {
	var ref string
	err := e.waitFor(ctx, "the conflict's Sync_Conflicts row", true, func() (bool, string, error) {
		var err error
		ref, err = conflictCell(pp, cid)
		return ref != "", "", err
	})
	if err != nil {
		return err
	}
	e.logf("  person: picks %q in Sync_Conflicts for the altitude of airport %s (sheet %d, system %d)", layout.ChoiceUseSheet, a.ID, want, a.Altitude)
	if err := pp.p.Type(layout.ConflictsTab, ref, layout.ChoiceUseSheet); err != nil {
		return err
	}
	err = e.waitFor(ctx, "the choice to be applied", true, func() (bool, string, error) {
		got, err := hikoutei.Get[Airport](ctx, e.store, a.ID)
		if err != nil || got == nil {
			return false, "", err
		}
		return got.Altitude == want, "", nil
	})
	if err == nil {
		a.Altitude = want
		e.logf("  resolved: the store committed the person's altitude %d (by the sheet)", want)
	}
	return err
}

// conflictCell is the A1 reference of the resolution cell of conflict
// cid's Sync_Conflicts row ("" while the row is not there yet).
func conflictCell(pp *people, cid string) (string, error) {
	rows, err := pp.p.Displayed(layout.ConflictsTab)
	if err != nil || len(rows) == 0 {
		return "", err
	}
	anchor, col := slices.Index(rows[0], layout.AnchorHeader), slices.Index(rows[0], layout.ConflictResolution)
	for i, r := range rows {
		if anchor >= 0 && col >= 0 && anchor < len(r) && r[anchor] == cid {
			return fmt.Sprintf("%c%d", 'A'+col, i+1), nil
		}
	}
	return "", nil
}
