package converge

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/mirrorcheck"
	"github.com/hikoutei/hikoutei-go/internal/sheetcheck"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// state is the sheet compared with canonical state at one instant.
type state struct {
	reports  map[string]sheetcheck.Report
	open     int            // open conflicts
	review   int            // Input orphans left for review
	quarant  map[string]int // active quarantine records by reason
	excused  int            // rows that differ, excused by a conflict or quarantine
	blocked  string
	drifted  []string // tabs blocked by header drift (the operator acts on them)
	differ   int
	snapshot error
}

func (st state) canonical() bool { return st.blocked == "" && st.snapshot == nil && st.differ == 0 }

func (st state) String() string {
	switch {
	case st.snapshot != nil:
		return "sheet unreadable: " + st.snapshot.Error()
	case st.blocked != "":
		return st.blocked
	}
	var b strings.Builder
	for tab, r := range st.reports {
		if !r.Clean() {
			fmt.Fprintf(&b, "%s: missing %v duplicated %v drifted %v orphans %v; ", tab, r.Missing, r.Duplicated, r.Drifted, r.Orphans)
		}
	}
	return b.String()
}

// waitConverged waits, on the condition, until the sheet equals canonical
// state, bounded by Config.Bound; past the bound the run is counted as
// diverged and the wait goes on (up to ten bounds) only to say whether
// and when it converged late. ok is false when it never converged.
func (r *runner) waitConverged(ctx context.Context) (took time.Duration, ok bool, err error) {
	start := time.Now()
	r.firstPass = time.Time{}
	bound := r.c.cfg.Bound()
	counted := false
	for {
		st, err := r.compare(ctx)
		if err != nil {
			return 0, false, err
		}
		took := time.Since(start)
		if st.canonical() {
			r.c.res.Slowest = max(r.c.res.Slowest, took)
			if counted {
				fmt.Fprintf(r.c.out, "converge: run %d converged late, after %s\n", r.run, took.Round(time.Millisecond))
			}
			return took, true, nil
		}
		r.noteHealth(start)
		r.operate(st.drifted)
		if took > bound && !counted {
			counted = true
			r.c.problem(&r.c.res.Diverged, r.run, "not canonical %s after damage stopped (bound %s): %s", took.Round(time.Millisecond), bound, st)
		}
		if took > 10*bound {
			fmt.Fprintf(r.c.out, "converge: run %d never converged: %s%s\n", r.run, st, diagnose(r.s.ReadModelPath(), st))
			return took, false, nil
		}
		select { // polls a condition, bounded above
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// operate is the operator reacting to a tab that sync reports blocked by
// header drift: the header row is put back (counted).
func (r *runner) operate(tabs []string) {
	_, _, wb := engine.Of(r.s).Workers()
	for _, tab := range tabs {
		spec, _ := wb.Schema().Tab(tab)
		acted, dataRow := r.person().restoreHeader(tab, spec.Headers())
		if acted {
			r.c.res.Operator++
		}
		if dataRow {
			r.c.res.HeaderOverwritten++
			fmt.Fprintf(r.c.out, "converge: run %d (seed %d): FINDING %s showed a data row in its header row; the operator inserted the header above it\n", r.run, r.c.cfg.Seed, tab)
		}
	}
}

// compare reads both tabs through the provider and compares them with
// the store's parts (sheetcheck).
func (r *runner) compare(ctx context.Context) (state, error) {
	var st state
	_, _, wb := engine.Of(r.s).Workers()
	if wb == nil {
		st.blocked = "not provisioned yet"
		return st, nil
	}
	snaps, err := r.prov.Snapshot(ctx, wb, systemTab, inputTab)
	if err != nil {
		st.snapshot = err
		return st, nil
	}
	for _, tab := range []string{systemTab, inputTab} {
		if s := snaps[tab]; s.Err != nil || s.Empty {
			st.blocked = fmt.Sprintf("%s blocked or empty (%v)", tab, s.Err)
			if errors.Is(s.Err, sheetsio.ErrHeaderDrift) {
				st.drifted = append(st.drifted, tab)
			}
		}
	}
	if st.blocked != "" {
		return st, nil
	}
	parts, err := hikoutei.Find[Part](ctx, r.s)
	if err != nil {
		return st, err
	}
	excuse, err := r.excuses(ctx, &st)
	if err != nil {
		return st, err
	}
	want := map[string]map[string]any{}
	for _, p := range parts {
		want[p.ID] = values(p)
	}
	st.reports = map[string]sheetcheck.Report{}
	for _, tab := range []string{systemTab, inputTab} {
		spec, _ := wb.Schema().Tab(tab)
		rep, err := sheetcheck.Tab(snaps[tab], spec, want, func(id string, missing bool) bool {
			return excuse[tab+"/"+id] == excusedAlways || (!missing && excuse[tab+"/"+id] == excusedValue)
		})
		if err != nil {
			return st, err
		}
		if rep.Orphans, err = r.forReview(tab, rep.Orphans, &st); err != nil {
			return st, err
		}
		st.reports[tab] = rep
		st.differ += rep.Differences()
		st.excused += len(rep.Excused)
	}
	return st, nil
}

// excuse says what an open conflict or active quarantine excuses.
type excuse int

const (
	excusedNot    excuse = iota
	excusedValue         // the row's values (active quarantine: evidence not yet cleared)
	excusedAlways        // the row's values and its absence (an open conflict: people resolve it)
)

// excuses: an Input row under an open conflict keeps the person's value
// until someone acknowledges (I11), and anti-entropy leaves it alone even
// when the row is gone (a deleted tab, a replaced spreadsheet): people
// resolve it first; a row under active quarantine is evidence not yet
// cleared: its values are not compared, but its absence is not excused.
// Both are counted.
func (r *runner) excuses(ctx context.Context, st *state) (map[string]excuse, error) {
	out := map[string]excuse{}
	open, err := r.s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil {
		return nil, err
	}
	st.open = len(open)
	for _, c := range open {
		out[inputTab+"/"+c.EntityID] = excusedAlways
	}
	q, err := activeQuarantine(r.s.ReadModelPath())
	if err != nil {
		return nil, err
	}
	st.quarant = map[string]int{}
	for _, k := range q {
		if out[k.tab+"/"+k.anchor] == excusedNot {
			out[k.tab+"/"+k.anchor] = excusedValue
		}
		st.quarant[k.reason]++
	}
	return out, nil
}

// forReview drops the Input orphans whose delete settled as a conflict:
// the row carried a person's data, cleanup leaves it for review (I21).
func (r *runner) forReview(tab string, orphans []string, st *state) ([]string, error) {
	if tab != inputTab {
		return orphans, nil
	}
	var out []string
	for _, id := range orphans {
		op, state, err := sheetcheck.LastEffect(r.s.ReadModelPath(), engine.Of(r.s).Target(), tab, id)
		if err != nil {
			return nil, err
		}
		if op == "delete" && state == "conflict" {
			st.review++
			continue
		}
		out = append(out, id)
	}
	return out, nil
}

type quarantined struct{ tab, anchor, reason string }

// activeQuarantine lists every active quarantine record (read-only from
// the read model).
func activeQuarantine(readModel string) ([]quarantined, error) {
	conn, err := sqlite.OpenConn(readModel, sqlite.OpenReadOnly)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []quarantined
	err = sqlitex.Execute(conn, `SELECT tab, anchor, reason FROM hk_quarantine WHERE active = 1`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error {
			out = append(out, quarantined{st.ColumnText(0), st.ColumnText(1), st.ColumnText(2)})
			return nil
		}})
	return out, err
}

// countDuplicates counts each anchor a tab shows twice (once per run).
func (r *runner) countDuplicates() {
	p := r.c.emu.Person(r.sheetID)
	for _, tab := range []string{systemTab, inputTab, layout.ConflictsTab, layout.ReceiptsTab} {
		rows, err := p.Displayed(tab)
		if err != nil {
			continue
		}
		for _, a := range sheetcheck.DuplicateAnchors(rows, layout.AnchorHeader, layout.ConflictID) {
			if r.dups == nil {
				r.dups = map[string]bool{}
			}
			if !r.dups[tab+"/"+a] {
				r.dups[tab+"/"+a] = true
				r.c.problem(&r.c.res.Duplicates, r.run, "%s shows anchor %q twice", tab, a)
			}
		}
	}
}

// finish: the last comparison's counts, nothing acknowledged lost (the
// store against the model, then every acknowledged commit in the log,
// read after a clean close), the log's counts of accepted edits and
// conflicts.
func (r *runner) finish(ctx context.Context) error {
	r.countDuplicates()
	st, err := r.compare(ctx)
	if err != nil {
		return err
	}
	if !st.canonical() {
		r.c.problem(&r.c.res.Diverged, r.run, "diverged again after it had converged: %s", st)
	}
	r.c.res.Open += st.open
	for reason, n := range st.quarant {
		r.c.res.Quarantined[reason] += n
	}
	r.c.res.Excused += st.excused
	r.c.res.Review += st.review
	parts, err := hikoutei.Find[Part](ctx, r.s)
	if err != nil {
		return err
	}
	for _, l := range r.work.lost(parts) {
		r.c.problem(&r.c.res.Lost, r.run, "%s", l)
	}
	r.checkMirror(ctx)
	if err := r.close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return r.readLog()
}

// readLog checks every acknowledged commit is in the log and counts the
// accepted edits and the conflicts opened.
func (r *runner) readLog() error {
	l, err := events.OpenLog(filepath.Join(r.dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer l.Close()
	commits := map[string]bool{}
	err = l.ReadFrom(1, func(e events.Event) error {
		commits[e.Commit] = true
		switch e.Payload.EventType() {
		case events.TypeObservationAccepted:
			r.c.res.Accepted++
		case events.TypeConflictOpened:
			r.c.res.Conflicts++
		}
		return nil
	})
	for _, id := range r.work.acked {
		if !commits[id] {
			r.c.problem(&r.c.res.Lost, r.run, "acknowledged commit %s is not in the log", id)
		}
	}
	return err
}

// checkMirror checks, after quiescence, that the NATS event mirror holds
// every committed record up to the log's head and verifies (I36).
func (r *runner) checkMirror(ctx context.Context) {
	r.c.res.MirrorChecked++
	res, err := mirrorcheck.Check(ctx, r.s, 30*time.Second)
	if err != nil {
		r.c.problem(&r.c.res.MirrorMismatches, r.run, "mirror after quiescence: %v", err)
		return
	}
	fmt.Fprintf(r.c.out, "converge: run %d: %s, %d mirrored records verified\n", r.run, res, res.Records)
}
