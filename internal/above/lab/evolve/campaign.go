// Package evolve is the evolution campaign (`make evolve`, I35): seeded
// runs in which a store syncs through the real Sheets client to the
// emulator over HTTP with its workers running on short cadences, while
// the application commits, a person edits Input cells (conflicts open
// when the application changes the same field) and, at random points,
// the store is closed and reopened with its entity changed: a step of a
// random walk on a graph of Go types (graph.go), each step one class of
// change — a field added, a user field added, a field dropped (system or
// user), a field made editable or no longer, fields reordered, a rename
// declared with was=, a widening retype, a second entity added or
// removed, and the incompatible ones: a retype some values do not
// convert to (float → int, text → float), another primary key, an
// entity removed while it has records. For those the campaign expects
// the typed refusal, then reopens with a migration (hikoutei.Migrate) —
// or, for a removed entity, after removing its records — and counts both.
//
// Checks: at every reopen the store the change met holds every
// acknowledged commit (the model, mapped through every rename,
// conversion and migration since); the log records each change with the
// expected kind and class; while the run goes on, a tab health calls ok
// shows the declared layout, and — when the log did not move meanwhile —
// equals canonical state except what open conflicts, quarantine and
// edits not yet polled excuse; after quiescence every tab equals
// canonical state in the newest layout within two reconciliation periods
// plus a stated margin (health never ok while one differs, once a pass
// has read it), every edit the person made ended accepted, in conflict,
// quarantined, kept in a retired column or on a row left for review — or,
// counted apart, overwritten by a store write after the store's last read
// of its cell, as the emulator's journal proves (window.go) — no
// anchor ever showed twice, and a replay of the log builds the same read
// model as the live one (I23).
package evolve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// Config configures a campaign.
type Config struct {
	Dir   string // parent of the runs' store directories (created)
	Runs  int
	Seed  uint64
	Steps int // acts per run (default 40)
	// ReconcileInterval is the stores' reconciliation period (default
	// 400 ms); the poller polls every half of it and scans fully every one.
	ReconcileInterval time.Duration
	// Margin is added to two reconciliation periods to bound the wait
	// after the last act (default 1 s: a dispatch and its requests after
	// the second pass, a poll before an Input row's restore, a layout
	// migration's batchUpdate, a shared 2-core machine).
	Margin time.Duration
	Out    io.Writer    // progress lines (nil = discard)
	Logger *slog.Logger // the stores' logger (nil = discard)
	// FirstRun is the number of the first run (default 1): with the
	// seed, it replays the acts of one run of a campaign (Runs: 1).
	FirstRun int
	// Verbose prints every act as it is done.
	Verbose bool
	// Keep keeps each run's store directory (under Dir) for inspection.
	Keep bool
}

// Bound is how long the campaign waits after the last act.
func (c Config) Bound() time.Duration { return 2*c.ReconcileInterval + c.Margin }

// ClassCount counts the changes of one class: made (recorded by the
// store), refused (the typed refusal, as expected) and migrated (mapped
// by a migration).
type ClassCount struct{ Made, Refused, Migrated int }

// Result is what a campaign saw. Line renders the closing line.
type Result struct {
	Runs                       int
	Changes, Refused, Migrated int
	ByClass                    [classCount]ClassCount
	Lost                       int            // acknowledged commits missing from the log, or records not as acknowledged
	Misclassified              int            // a change refused, recorded or mapped otherwise than its class says
	Edits                      map[string]int // the person's edits by outcome (outLost: lost)
	Diverged                   int            // runs whose sheet was not canonical within the bound after the last act
	Duplicates                 int            // anchors seen twice on a tab
	ReplayMismatches           int
	// Health: HeaderLies, samples where a tab health called ok showed
	// another layout than the declared one; ContentLies, samples where it
	// differed from canonical state while the log stood still; Silent,
	// samples after the last act, after a pass that read the sheet, that
	// said ok while a tab differed. Checked counts the samples compared,
	// Raced those the log moved under (not compared).
	HeaderLies, ContentLies, Silent, Checked, Raced int
	Commits, Restarts, Operator                     int
	Conflicts, Accepted                             int // conflicts opened, edits accepted (from the logs)
	Slowest                                         time.Duration
	Problems                                        []string
}

// HealthLies are the samples in which health said ok while a tab differed.
func (r Result) HealthLies() int { return r.HeaderLies + r.ContentLies + r.Silent }

// Line is the campaign's last line: the changes, then what the checks
// count — acknowledged commits lost, the person's edits by outcome (lost
// first), runs not canonical within the bound, health samples that said
// ok while a tab differed, replays unlike the live read model.
func (r Result) Line() string {
	return fmt.Sprintf("evolve: runs=%d changes=%d refused=%d migrated=%d lost_commits=%d lost_edits=%d overwritten_in_write_window=%d accepted=%d conflicts=%d quarantined=%d retired=%d review=%d diverged_after_quiescence=%d health_ok_while_differs=%d replay_mismatches=%d misclassified=%d duplicates=%d",
		r.Runs, r.Changes, r.Refused, r.Migrated, r.Lost, r.Edits[outLost], r.Edits[outWindow], r.Edits[outAccepted], r.Edits[outConflict], r.Edits[outQuarantined],
		r.Edits[outRetired], r.Edits[outReview], r.Diverged, r.HealthLies(), r.ReplayMismatches, r.Misclassified, r.Duplicates)
}

// Counts is the lines before the last: every class (made/refused/migrated),
// the edits by outcome, the health samples.
func (r Result) Counts() string {
	var b strings.Builder
	b.WriteString("evolve: classes (made/refused/migrated)")
	for c := range classCount {
		n := r.ByClass[c]
		fmt.Fprintf(&b, " %s=%d/%d/%d", c, n.Made, n.Refused, n.Migrated)
	}
	total := 0
	for _, o := range outcomes {
		total += r.Edits[o]
	}
	fmt.Fprintf(&b, "\nevolve: edits=%d", total)
	for _, o := range outcomes {
		fmt.Fprintf(&b, " %s=%d", o, r.Edits[o])
	}
	fmt.Fprintf(&b, " conflicts_opened=%d\nevolve: commits=%d restarts=%d operator_acts=%d health_checked=%d health_raced=%d header_lies=%d content_lies=%d silent=%d slowest=%s",
		r.Conflicts, r.Commits, r.Restarts, r.Operator, r.Checked, r.Raced, r.HeaderLies, r.ContentLies, r.Silent, r.Slowest.Round(time.Millisecond))
	return b.String()
}

// OK reports a clean campaign.
func (r Result) OK() bool { return len(r.Problems) == 0 }

type evolveCampaign struct {
	cfg     Config
	sheets  *campaign.Sheets
	res     Result
	out     io.Writer
	windows sync.Map // spreadsheet id → *window
}

// window is the journal of a run's spreadsheet (made on first use).
func (c *evolveCampaign) window(sheetID string) *window {
	w, _ := c.windows.LoadOrStore(sheetID, newWindow())
	return w.(*window)
}

// observe passes an access to its spreadsheet's journal.
func (c *evolveCampaign) observe(a emulator.Access) { c.window(a.Spreadsheet).observe(a) }

// Run executes a campaign. Errors: setup failures, and a store that
// cannot be opened or committed to unexpectedly (a finding, with its run
// and seed).
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg = defaults(cfg)
	c := &evolveCampaign{cfg: cfg, out: cfg.Out, res: Result{Edits: map[string]int{}}}
	c.sheets = campaign.ServeObservedSheets(int64(cfg.Seed), c.observe)
	defer c.sheets.Close()
	for run := cfg.FirstRun; run < cfg.FirstRun+cfg.Runs; run++ {
		if err := ctx.Err(); err != nil {
			return c.res, err
		}
		dir := filepath.Join(cfg.Dir, fmt.Sprintf("run-%03d", run))
		if err := c.oneRun(ctx, run, dir); err != nil {
			return c.res, fmt.Errorf("run %d (seed %d): %w", run, cfg.Seed, err)
		}
		c.res.Runs++
		if cfg.Keep {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return c.res, err
		}
	}
	return c.res, nil
}

func defaults(cfg Config) Config {
	if cfg.Steps <= 0 {
		cfg.Steps = 40
	}
	if cfg.FirstRun <= 0 {
		cfg.FirstRun = 1
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

// problem records a problem of kind (counted) in run.
func (c *evolveCampaign) problem(kind *int, run int, format string, args ...any) {
	if kind != nil {
		*kind++
	}
	msg := fmt.Sprintf("run %d (seed %d): ", run, c.cfg.Seed) + fmt.Sprintf(format, args...)
	c.res.Problems = append(c.res.Problems, msg)
	fmt.Fprintln(c.out, "evolve: PROBLEM "+msg)
}
