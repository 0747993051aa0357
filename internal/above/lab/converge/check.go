package converge

import (
	"context"
	"fmt"
	"strings"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/mirrorcheck"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// waitConverged waits, on the condition, until the sheet equals canonical
// state, bounded by Config.Bound; past the bound the run is counted as
// diverged and the wait goes on (up to ten bounds) only to say whether
// and when it converged late. ok is false when it never converged.
func (r *runner) waitConverged(ctx context.Context) (took time.Duration, ok bool, err error) {
	start := time.Now()
	r.quiet = campaign.Quiet{Stopped: start}
	bound := r.c.cfg.Bound()
	counted := false
	for {
		st, err := r.compare(ctx)
		if err != nil {
			return 0, false, err
		}
		took := time.Since(start)
		if st.Canonical() {
			r.c.res.Slowest = max(r.c.res.Slowest, took)
			if counted {
				fmt.Fprintf(r.c.out, "converge: run %d converged late, after %s\n", r.run, took.Round(time.Millisecond))
			}
			return took, true, nil
		}
		r.noteHealth()
		r.operate(st.Drifted)
		if r.quiet.Late(took, bound) && !counted {
			counted = true
			r.c.problem(&r.c.res.Diverged, r.run, "not canonical %s after damage stopped (bound %s and %d reconciliation passes): %s", took.Round(time.Millisecond), bound, campaign.PassesToConverge, st)
		}
		if took > 10*bound {
			fmt.Fprintf(r.c.out, "converge: run %d never converged: %s%s\n", r.run, st, campaign.Diagnose(r.s.ReadModelPath(), st))
			return took, false, nil
		}
		select { // polls a condition, bounded above
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// operate is the operator reacting to a tab that sync reports blocked
// by header drift: the header row is put back (counted).
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
// the store's parts.
func (r *runner) compare(ctx context.Context) (campaign.State, error) {
	return campaign.Target{Store: r.s, Provider: r.prov}.Compare(ctx, []string{"Part"}, func(ctx context.Context) (campaign.Want, error) {
		parts, err := hikoutei.Find[Part](ctx, r.s)
		if err != nil {
			return nil, err
		}
		want := map[string]map[string]any{}
		for _, p := range parts {
			want[p.ID] = values(p)
		}
		return campaign.Want{"Part": want}, nil
	}, nil)
}

// countDuplicates counts each anchor a tab shows twice (once per run).
func (r *runner) countDuplicates() {
	p := r.c.sheets.Emu.Person(r.sheetID)
	for _, d := range campaign.Duplicates(p, systemTab, inputTab, layout.ConflictsTab, layout.ReceiptsTab) {
		if r.dups == nil {
			r.dups = map[string]bool{}
		}
		if !r.dups[d] {
			r.dups[d] = true
			tab, anchor, _ := strings.Cut(d, "/")
			r.c.problem(&r.c.res.Duplicates, r.run, "%s shows anchor %q twice", tab, anchor)
		}
	}
}

// finish: the last comparison's counts, nothing acknowledged lost (the
// store against the model, then every acknowledged commit in the log,
// read after a clean close), personal values as the ledger says (store,
// sheet, and no plaintext in the closed store's files), the log's counts
// of accepted edits and conflicts.
func (r *runner) finish(ctx context.Context) error {
	r.countDuplicates()
	st, err := r.compare(ctx)
	if err != nil {
		return err
	}
	if !st.Canonical() {
		r.c.problem(&r.c.res.Diverged, r.run, "diverged again after it had converged: %s", st)
	}
	r.c.res.Open += st.Open
	for reason, n := range st.Quarantine {
		r.c.res.Quarantined[reason] += n
	}
	r.c.res.Excused += st.Excused
	r.c.res.Review += st.Review
	parts, err := hikoutei.Find[Part](ctx, r.s)
	if err != nil {
		return err
	}
	for _, l := range r.work.lost(parts) {
		r.c.problem(&r.c.res.Lost, r.run, "%s", l)
	}
	for _, l := range r.work.personalDiffs(parts) {
		r.c.problem(&r.c.res.PersonalMismatches, r.run, "%s", l)
	}
	r.checkSheetPersonal()
	r.checkMirror(ctx)
	if err := r.close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if err := r.checkPlaintext(); err != nil {
		return err
	}
	return r.readLog()
}

// readLog checks every acknowledged commit is in the log and counts the
// accepted edits and the conflicts opened.
func (r *runner) readLog() error {
	commits, err := campaign.ReadLog(r.dir, func(e events.Event) {
		switch e.Payload.EventType() {
		case events.TypeObservationAccepted:
			r.c.res.Accepted++
		case events.TypeConflictOpened:
			r.c.res.Conflicts++
		}
	})
	if err != nil {
		return err
	}
	for _, id := range r.work.acked {
		if !commits[id] {
			r.c.problem(&r.c.res.Lost, r.run, "acknowledged commit %s is not in the log", id)
		}
	}
	return nil
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
