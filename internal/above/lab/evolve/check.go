package evolve

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// compare reads the declared entities' tabs and compares them with the
// store's records (campaign.Target.Compare); extra may be nil.
func (r *runner) compare(ctx context.Context, extra func(tab, anchor string) campaign.Excuse) (campaign.State, error) {
	st, _, err := r.compareWant(ctx, extra)
	return st, err
}

// compareWant is compare, with the canonical state it compared with.
func (r *runner) compareWant(ctx context.Context, extra func(tab, anchor string) campaign.Excuse) (campaign.State, campaign.Want, error) {
	var seen campaign.Want
	want := func(ctx context.Context) (campaign.Want, error) {
		w, err := r.want(ctx)
		seen = w
		return w, err
	}
	st, err := campaign.Target{Store: r.s, Provider: r.prov}.Compare(ctx, r.entities(), want, extra)
	return st, seen, err
}

// want is canonical state as the application reads it, by entity.
func (r *runner) want(ctx context.Context) (campaign.Want, error) {
	out := campaign.Want{}
	for _, sh := range r.current() {
		recs, err := sh.find(ctx, r.s)
		if err != nil {
			return nil, err
		}
		out[sh.entity] = map[string]map[string]any{}
		for id, rc := range recs {
			out[sh.entity][id] = sh.shown(id, rc)
		}
	}
	return out, nil
}

// waitConverged waits, on the condition, until every tab equals canonical
// state, bounded by Config.Bound; past the bound the run is counted as
// diverged and the wait goes on (up to ten bounds) only to say whether
// and when it converged late. Meanwhile sync health must not say ok once
// a pass has certainly read the sheet the last act left
// (campaign.Quiet). ok is false when it never converged.
func (r *runner) waitConverged(ctx context.Context) (took time.Duration, ok bool, err error) {
	start := time.Now()
	r.quiet = campaign.Quiet{Stopped: start}
	bound := r.c.cfg.Bound()
	counted := false
	for {
		st, want, err := r.compareWant(ctx, nil)
		if err != nil {
			return 0, false, err
		}
		took := time.Since(start)
		if st.Canonical() {
			r.converged = want
			r.c.res.Slowest = max(r.c.res.Slowest, took)
			if counted {
				fmt.Fprintf(r.c.out, "evolve: run %d converged late, after %s\n", r.run, took.Round(time.Millisecond))
			}
			return took, true, nil
		}
		if r.quiet.Judge(r.s.Health()) == campaign.Silent {
			r.c.res.Silent++
			if !r.silent {
				r.silent = true
				r.c.problem(nil, r.run, "health said ok %s after the last act, after a full reconciliation, while the sheet differed: %s",
					took.Round(time.Millisecond), st)
			}
		}
		if r.quiet.Late(took, bound) && !counted {
			counted = true
			r.c.problem(&r.c.res.Diverged, r.run, "not canonical %s after the last act (bound %s and %d reconciliation passes): %s (acts %v)", took.Round(time.Millisecond), bound, campaign.PassesToConverge, st, r.lastActs())
		}
		if took > 10*bound {
			fmt.Fprintf(r.c.out, "evolve: run %d never converged: %s%s%s\n", r.run, st, campaign.Diagnose(r.s.ReadModelPath(), st), r.describeAll(ctx, st))
			return took, false, nil
		}
		select { // polls a condition, bounded above
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// finish: the last comparison, every edit's outcome, then after a clean
// close nothing acknowledged lost (the closed store against the model,
// every acknowledged commit in the log) and a replay of the log equal to
// the live read model.
func (r *runner) finish(ctx context.Context) error {
	r.countDuplicates()
	if err := r.stillConverged(ctx); err != nil {
		return err
	}
	if err := r.scan(ctx); err != nil {
		return err
	}
	r.account(ctx)
	if err := r.shutdown(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if err := r.checkClosed(); err != nil {
		return err
	}
	commits, err := campaign.ReadLog(r.dir, nil)
	if err != nil {
		return err
	}
	for _, id := range r.m.acked {
		if !commits[id] {
			r.c.problem(&r.c.res.Lost, r.run, "acknowledged commit %s is not in the log", id)
		}
	}
	return r.checkReplay(ctx)
}

// account gives every edit without an outcome in the log the one the
// sheet shows — its value in a retired column, or on a row of a record no
// longer live, left for review — or counts it lost; then adds the run's
// outcomes up.
func (r *runner) account(ctx context.Context) {
	for _, entity := range []string{itemEntity, otherEntity} {
		retired, review := r.who.kept(layout.InputTabName(entity), func(anchor string) bool {
			_, live := r.m.recs[entity][anchor]
			return live
		})
		for _, e := range r.ed.all {
			switch {
			case e.entity != entity:
			case e.outcome == outRetired && retired[e.value] == "":
				e.outcome = outLost
				rows, _ := r.who.p.Displayed(e.tab)
				r.c.problem(nil, r.run, "a person's value kept in a retired column is gone: %s (the tab shows %q)", e, rows)
			case e.outcome != "":
			case retired[e.value] != "":
				e.outcome = outRetired
			case review[e.value] != "":
				e.outcome = outReview
			}
		}
	}
	r.heldForReview(ctx)
	r.inWriteWindow()
	for _, e := range r.ed.all {
		if e.outcome == "" { // (outLost set above was reported there)
			e.outcome = outLost
			r.c.problem(nil, r.run, "a person's edit is lost: %s%s%s", e, r.describe(ctx, e.tab, []string{e.anchor}), r.trail(ctx, e))
		}
		r.c.res.Edits[e.outcome]++
	}
}

// checkReplay replays the closed store's log into a new read model and
// compares it with the live one, table by table (I23).
func (r *runner) checkReplay(ctx context.Context) error {
	target := filepath.Join(r.c.cfg.Dir, fmt.Sprintf("replay-%03d.sqlite", r.run))
	defer os.Remove(target)
	if _, err := hikoutei.Replay(ctx, r.dir, target, hikoutei.ReplayOptions{}); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	var live, replayed bytes.Buffer
	if err := projector.Dump(filepath.Join(r.dir, hikoutei.ReadModelFile), &live); err != nil {
		return err
	}
	if err := projector.Dump(target, &replayed); err != nil {
		return err
	}
	if live.String() != replayed.String() {
		r.c.problem(&r.c.res.ReplayMismatches, r.run, "a replay of the log differs from the live read model: %s", firstDiff(live.String(), replayed.String()))
	}
	return nil
}

// firstDiff names the first line where two dumps differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: live %q, replayed %q", i+1, x, y)
		}
	}
	return ""
}

// describe shows, for the report, the rows of tab with the given anchors
// as a person sees them (header first) and the records canonical state
// holds for them.
func (r *runner) describe(ctx context.Context, tab string, anchors []string) string {
	rows, err := r.who.p.Displayed(tab)
	if err != nil || len(rows) == 0 {
		return fmt.Sprintf(" (%s unreadable: %v)", tab, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n    %s header %q", tab, rows[0])
	a := indexOf(rows[0], layout.AnchorHeader)
	want, _ := r.want(ctx)
	for _, id := range anchors {
		for _, row := range rows[1:] {
			if a >= 0 && a < len(row) && row[a] == id {
				fmt.Fprintf(&b, "\n    row %q", row)
			}
		}
		for _, w := range want {
			if v, ok := w[id]; ok {
				fmt.Fprintf(&b, "\n    canonical %v", v)
			}
		}
	}
	return b.String()
}

// describeAll describes every row that differs in st.
func (r *runner) describeAll(ctx context.Context, st campaign.State) string {
	var b strings.Builder
	for tab, rep := range st.Reports {
		if !rep.Clean() {
			b.WriteString(r.describe(ctx, tab, append(append(rep.Missing, rep.Drifted...), rep.Orphans...)))
		}
	}
	return b.String()
}

// trail lists, for the report of a lost edit, the events since e was
// typed that name its row (seq, stream, type, payload cut short), and
// the acts done since.
func (r *runner) trail(ctx context.Context, e *edit) string {
	var b strings.Builder
	streams := map[string]bool{} // the outbox streams of its row's effects
	for ev, err := range r.s.Events(ctx, e.seq+1) {
		if err != nil {
			fmt.Fprintf(&b, "\n    (log unreadable: %v)", err)
			break
		}
		p := fmt.Sprintf("%+v", ev.Payload)
		if !strings.Contains(p, e.anchor) && !strings.Contains(ev.Stream, e.anchor) && !streams[ev.Stream] {
			continue
		}
		if strings.HasPrefix(ev.Stream, "outbox/") {
			streams[ev.Stream] = true
		}
		if len(p) > 400 {
			p = p[:400] + "…"
		}
		fmt.Fprintf(&b, "\n    seq %d %s %s %s", ev.Seq, ev.Stream, ev.Payload.EventType(), p)
	}
	fmt.Fprintf(&b, "\n    acts %q", r.history[min(e.act, len(r.history)):])
	return b.String()
}

// inWriteWindow gives every edit still without an outcome that the run's
// journal proves a store write overwrote in its window that outcome.
func (r *runner) inWriteWindow() {
	for _, e := range classifyWindow(r.ed.all, r.c.window(r.sheetID)) {
		if r.c.cfg.Verbose {
			fmt.Fprintf(r.c.out, "evolve: run %d: %s overwritten in a write's window\n", r.run, e)
		}
	}
}

// classifyWindow gives the edits without an outcome that w proves were
// overwritten in a write's window that outcome, and returns them.
func classifyWindow(all []*edit, w *window) []*edit {
	var out []*edit
	for _, e := range all {
		if _, ok := w.overwritten(e.value); ok && e.outcome == "" {
			e.outcome = outWindow
			out = append(out, e)
		}
	}
	return out
}

// heldForReview gives every edit still without an outcome whose value its
// own cell still shows, on a row the store holds for review — under
// active quarantine, or in an open conflict — that outcome: the value is
// on the sheet, named by the store, not lost.
func (r *runner) heldForReview(ctx context.Context) {
	ex, err := campaign.ReadExcuses(ctx, r.s)
	if err != nil {
		r.c.problem(nil, r.run, "read the open conflicts and quarantine: %v", err)
		return
	}
	for _, e := range r.ed.all {
		if e.outcome != "" || r.who.cell(e.tab, e.anchor, e.field) != e.value {
			continue
		}
		switch ex.Rows[e.tab+"/"+e.anchor] {
		case campaign.ExcusedValue:
			e.outcome = outQuarantined
		case campaign.ExcusedAlways:
			e.outcome = outConflict
		}
	}
}

// describeRows is describe with, for each row, the person's edits of it
// and the last events of the log that name it (what health was computed
// from: its writes, observations, conflicts and quarantines).
func (r *runner) describeRows(ctx context.Context, tab string, anchors []string) string {
	var b strings.Builder
	b.WriteString(r.describe(ctx, tab, anchors))
	for _, id := range anchors {
		for _, e := range r.ed.all {
			if e.tab == tab && e.anchor == id {
				fmt.Fprintf(&b, "\n    edit %s outcome %q", e, e.outcome)
			}
		}
		b.WriteString(r.rowEvents(ctx, tab, id, 30))
	}
	return b.String()
}

// rowEvents lists the last n events of the log naming anchor, and those
// of the outbox streams of its effects on tab (seq, stream, type,
// payload cut short).
func (r *runner) rowEvents(ctx context.Context, tab, anchor string, n int) string {
	var lines []string
	streams := map[string]bool{} // the outbox streams of its row's effects
	for ev, err := range r.s.Events(ctx, 1) {
		if err != nil {
			lines = append(lines, fmt.Sprintf("\n    (log unreadable: %v)", err))
			break
		}
		p := fmt.Sprintf("%+v", ev.Payload)
		if !strings.Contains(p, anchor) && !strings.Contains(ev.Stream, anchor) && !streams[ev.Stream] {
			continue
		}
		if strings.HasPrefix(ev.Stream, "outbox/") && strings.Contains(p, "Tab:"+tab+" ") {
			streams[ev.Stream] = true
		}
		if len(p) > 300 {
			p = p[:300] + "…"
		}
		lines = append(lines, fmt.Sprintf("\n    seq %d %s %s %s", ev.Seq, ev.Stream, ev.Payload.EventType(), p))
	}
	return strings.Join(lines[max(0, len(lines)-n):], "")
}
