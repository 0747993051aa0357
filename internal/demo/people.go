package demo

import (
	"context"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

const inputTab = "Airport_Input"

// people plays what people do on Airport_Input, through the emulator's
// person API (edits like the Sheets UI: USER_ENTERED typing).
type people struct {
	e   *env
	p   *emulator.Person
	log func(format string, args ...any)
}

// act performs the six edits of the demo and the application's concurrent
// change, then polls until each has its outcome. It returns the ids whose
// rows may legitimately differ from canonical (open conflicts).
func (pp *people) act(ctx context.Context) error {
	d := pp.e.data
	steps := []struct {
		what string
		do   func() error
	}{
		{"a clean edit of notes (accepted)", func() error { return pp.typeAt(d[0].ID, "notes", "runway resurfaced 2026") }},
		{"an edit of altitude while the application changes it too (conflict)", func() error { return pp.collide(ctx, &d[1]) }},
		{"text typed into the numeric altitude column (quarantined)", func() error { return pp.typeAt(d[2].ID, "altitude", "very high") }},
		{"a formula typed into notes (quarantined, its result never imported)", func() error { return pp.formulaAt(d[3].ID, "notes", "=1+1") }},
		{"a pasted duplicate row, edited in the copy (duplicate anchor: quarantined for review)", func() error { return pp.paste(d[4].ID) }},
		{"a sort of the whole tab, descending (no edits)", func() error { return pp.p.SortByColumn(inputTab, "A", true, 1) }},
	}
	for _, s := range steps {
		pp.log("  person: %s", s.what)
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return nil
}

// collide: the person types a new altitude while the application commits
// another one for the same airport before the next poll.
func (pp *people) collide(ctx context.Context, a *Airport) error {
	if err := pp.typeAt(a.ID, "altitude", fmt.Sprint(a.Altitude+1000)); err != nil {
		return err
	}
	a.Altitude += 7
	u := pp.e.store.Begin()
	if err := u.Persist(a); err != nil {
		return err
	}
	_, err := u.Commit(ctx)
	return err
}

// systemWins is the application's later commit that strictly raises the
// conflicted field's revision: implicit system-wins (I12).
func (pp *people) systemWins(ctx context.Context) error {
	a := &pp.e.data[1]
	a.Altitude += 3
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
// and left for review. (An identical copy would be removed by the
// surplus-row cleanup instead, by full-row CAS.)
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

// inbound counts what the pollers recorded, from the read model.
type inbound struct {
	opened, resolved, quarantined int
	accepted                      bool
}

func (e *env) inbound(ctx context.Context) (inbound, error) {
	var in inbound
	conn, err := sqlite.OpenConn(e.store.ReadModelPath(), sqlite.OpenReadOnly)
	if err != nil {
		return in, err
	}
	defer conn.Close()
	count := func(q string, dst *int) error {
		return sqlitex.Execute(conn, q, &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error { *dst = s.ColumnInt(0); return nil }})
	}
	for q, dst := range map[string]*int{
		"SELECT count(*) FROM hk_conflicts":                                                  &in.opened,
		"SELECT count(*) FROM hk_conflicts WHERE state = 'resolved'":                         &in.resolved,
		"SELECT count(DISTINCT anchor || '/' || reason) FROM hk_quarantine WHERE active = 1": &in.quarantined,
	} {
		if err := count(q, dst); err != nil {
			return in, err
		}
	}
	a, err := hikoutei.Get[Airport](ctx, e.store, e.data[0].ID)
	in.accepted = err == nil && a.Notes == "runway resurfaced 2026"
	return in, err
}

// pollUntil wakes the pollers (at most once a second: polls share
// Google's read quota with the dispatcher) and waits until cond holds
// (bounded by 3 minutes).
func (e *env) pollUntil(ctx context.Context, what string, cond func(inbound) bool) (inbound, error) {
	deadline := time.Now().Add(3 * time.Minute)
	var woke time.Time
	for {
		if bus := engine.Of(e.store).Bus(); bus != nil && time.Since(woke) >= time.Second {
			bus.WakePoll()
			woke = time.Now()
		}
		in, err := e.inbound(ctx)
		if err != nil || cond(in) {
			return in, err
		}
		if time.Now().After(deadline) {
			return in, fmt.Errorf("timed out waiting for %s (%+v)", what, in)
		}
		select {
		case <-ctx.Done():
			return in, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
