// Package converge is the damage campaign (`make converge`, I28): seeded runs in
// which a store syncs through the real Sheets client to the emulator over
// HTTP with its workers running on short cadences, while the application
// commits and a person damages the spreadsheet — deletes or clears a tab,
// deletes or edits System rows, deletes or edits Input rows, renames a
// header cell, replaces the spreadsheet with an empty one — and the store
// is restarted or pointed at another spreadsheet at random points. Where
// the policy asks an operator to act (a drifted header blocks its tab),
// the campaign acts as the operator would and counts it.
//
// After the last act (quiescence) it waits, on the condition and bounded
// by two reconciliation periods plus a stated margin (Config.Margin), until
// the spreadsheet equals canonical state except what open conflicts and
// active quarantine excuse (counted): every live part shows exactly once
// on each tab with its canonical values, no anchor twice on any tab, no
// row of a removed part. Then it checks that no acknowledged commit was
// lost (the store against the model of acknowledged commits, and every
// acknowledged commit id in the log). Parts carry a personal field and the
// workload erases subjects: every live part's Email must read, and show on
// the System tab, as last acknowledged or as the erased marker, no tab
// shows an erased subject's value, and no file of the closed store but
// keys.db holds a personal value in plaintext (personal.go).
package converge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
)

// Config configures a campaign.
type Config struct {
	Dir   string // parent of the runs' store directories (created)
	Runs  int
	Seed  uint64
	Steps int // acts per run (default 50)
	// ReconcileInterval is the stores' reconciliation period (default
	// 400 ms); the poller polls every half of it and scans fully every one.
	ReconcileInterval time.Duration
	// Margin is added to two reconciliation periods to bound the wait
	// after damage stops (default 1 s: one dispatch interval and its
	// requests after the second pass, a poll before an Input row's restore
	// — deletion evidence first —, a shared 2-core machine).
	Margin time.Duration
	Out    io.Writer    // progress lines (nil = discard)
	Logger *slog.Logger // the stores' logger (nil = discard)
}

// Result is what a campaign saw. Line renders the closing line.
type Result struct {
	Runs       int
	Diverged   int // runs whose sheet was not canonical within the bound after damage stopped
	Duplicates int // anchors seen twice on a tab, at any check
	Lost       int // acknowledged commits missing from the log, or parts not as acknowledged
	Acts       [kindCount]int
	Operator   int // operator acts (the header row of a tab blocked by header drift put back)
	// HeaderOverwritten counts tabs whose header row showed a data row the
	// store appended: a person emptied the tab (header included) between
	// a dispatch's preflight read and its appendCells, which then landed
	// in row 1 (the C06 window; reported, the operator inserts the header).
	HeaderOverwritten int
	Accepted          int            // person's Input edits the poller accepted (observation.accepted)
	Conflicts         int            // conflicts opened
	Open              int            // conflicts open at the end of the runs
	Quarantined       map[string]int // active quarantine records at the end of the runs, by reason
	Excused           int            // rows differing at the end, excused by an open conflict or active quarantine
	Review            int            // Input rows of removed parts left for review (delete settled as a conflict, I21)
	Repairs           int64
	// HealthLoud, HealthUnknown and HealthSilent count the samples taken
	// while the sheet differed from canonical state after damage stopped:
	// sync health reported it (not ok); said ok before a reconciliation
	// could have read the damaged sheet; said ok after one had.
	// SilentRuns counts the runs with a silent sample (a problem).
	HealthLoud, HealthUnknown, HealthSilent, SilentRuns int
	Slowest                                             time.Duration // longest wait for convergence after damage stopped
	// MirrorChecked counts the runs whose NATS event mirror was checked
	// after quiescence (I36); MirrorMismatches those whose stream did not
	// reach the log's head or did not verify (a problem).
	MirrorChecked, MirrorMismatches int
	// PersonalMismatches counts, after quiescence, live parts whose
	// personal Email the store reads, or the System tab shows, other than
	// the value last acknowledged or, once the subject was erased, the
	// marker ⟦erased⟧, and tab cells showing an erased subject's value.
	// PlaintextFiles counts the files of a closed store's directory (but
	// keys.db) holding a personal value in plaintext. Both are problems.
	PersonalMismatches, PlaintextFiles int
	Erased, PersonalValues             int // subjects erased, personal values written
	Problems                           []string
}

// Line is the campaign's last line.
func (r Result) Line() string {
	return fmt.Sprintf("converge: runs=%d diverged_after_quiescence=%d duplicates=%d lost=%d mirror_at_log_head=%d/%d personal_mismatches=%d plaintext_files=%d", r.Runs, r.Diverged,
		r.Duplicates, r.Lost, r.MirrorChecked-r.MirrorMismatches, r.MirrorChecked, r.PersonalMismatches, r.PlaintextFiles)
}

// Counts is the line before the last: every kind of act, the operator's
// acts, edits, conflicts and quarantine.
func (r Result) Counts() string {
	var b strings.Builder
	b.WriteString("converge: acts")
	for k := range kindCount {
		fmt.Fprintf(&b, " %s=%d", k, r.Acts[k])
	}
	fmt.Fprintf(&b, " operator_acts=%d header_row_overwritten=%d accepted_edits=%d conflicts=%d open_conflicts=%d quarantined=%d by_reason=%v excused_rows=%d review=%d repairs=%d health_loud=%d health_unknown=%d health_silent=%d slowest=%s personal_values=%d subjects_erased=%d",
		r.Operator, r.HeaderOverwritten, r.Accepted, r.Conflicts, r.Open, r.quarantined(), r.Quarantined, r.Excused, r.Review, r.Repairs, r.HealthLoud, r.HealthUnknown, r.HealthSilent, r.Slowest.Round(time.Millisecond),
		r.PersonalValues, r.Erased)
	return b.String()
}

func (r Result) quarantined() int {
	n := 0
	for _, v := range r.Quarantined {
		n += v
	}
	return n
}

// OK reports a clean campaign.
func (r Result) OK() bool {
	return r.Diverged == 0 && r.Duplicates == 0 && r.Lost == 0 && r.SilentRuns == 0 && r.MirrorMismatches == 0 &&
		r.PersonalMismatches == 0 && r.PlaintextFiles == 0
}

// Bound is how long the campaign waits after damage stops.
func (c Config) Bound() time.Duration { return 2*c.ReconcileInterval + c.Margin }

type damageCampaign struct {
	cfg    Config
	sheets *campaign.Sheets
	res    Result
	out    io.Writer
}

// Run executes a campaign. Errors: setup failures, and a store that
// cannot be opened or committed to (a finding, with its run and seed).
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg = defaults(cfg)
	sheets := campaign.ServeSheets(int64(cfg.Seed))
	defer sheets.Close()
	c := &damageCampaign{cfg: cfg, sheets: sheets, out: cfg.Out, res: Result{Quarantined: map[string]int{}}}
	for run := 1; run <= cfg.Runs; run++ {
		if err := ctx.Err(); err != nil {
			return c.res, err
		}
		dir := filepath.Join(cfg.Dir, fmt.Sprintf("run-%03d", run))
		if err := c.oneRun(ctx, run, dir); err != nil {
			return c.res, fmt.Errorf("run %d (seed %d): %w", run, cfg.Seed, err)
		}
		c.res.Runs++
		if err := os.RemoveAll(dir); err != nil {
			return c.res, err
		}
	}
	return c.res, nil
}

func defaults(cfg Config) Config {
	if cfg.Steps <= 0 {
		cfg.Steps = 50
	}
	if cfg.ReconcileInterval <= 0 {
		cfg.ReconcileInterval = 400 * time.Millisecond
	}
	if cfg.Margin <= 0 {
		cfg.Margin = time.Second
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return cfg
}

// lastActs names the last acts of a run slower than two reconciliation
// periods to converge (for the report).
func (r *runner) lastActs(took time.Duration) string {
	if took <= 2*r.c.cfg.ReconcileInterval {
		return ""
	}
	h := r.history[max(0, len(r.history)-3):]
	return fmt.Sprintf(" (beyond two periods; last acts %v)", h)
}

func (c *damageCampaign) problem(kind *int, run int, format string, args ...any) {
	*kind++
	msg := fmt.Sprintf("run %d (seed %d): ", run, c.cfg.Seed) + fmt.Sprintf(format, args...)
	c.res.Problems = append(c.res.Problems, msg)
	fmt.Fprintln(c.out, "converge: PROBLEM "+msg)
}

// oneRun: the acts, then the operator, then the wait and the checks.
func (c *damageCampaign) oneRun(ctx context.Context, run int, dir string) error {
	rng := rand.New(rand.NewPCG(c.cfg.Seed, uint64(run)))
	r := &runner{c: c, run: run, dir: dir, rng: rng, sheetID: fmt.Sprintf("converge-%d", run), work: newWorkload(run)}
	if err := r.open(ctx); err != nil {
		return err
	}
	defer r.close()
	for range c.cfg.Steps {
		r.countDuplicates()
		if err := r.step(ctx); err != nil {
			return err
		}
		select { // the workload's rate, not synchronisation
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rng.IntN(30)) * time.Millisecond):
		}
	}
	took, ok, err := r.waitConverged(ctx)
	if err != nil {
		return err
	}
	if ok {
		fmt.Fprintf(c.out, "converge: run %d: %d parts, %d acts, canonical %s after damage stopped%s\n", run, len(r.work.live), r.acts, took.Round(time.Millisecond), r.lastActs(took))
	}
	return r.finish(ctx)
}
