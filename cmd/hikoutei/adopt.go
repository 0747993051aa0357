package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// adoptFlags is the parsed command line of adopt.
type adoptFlags struct {
	dir, spreadsheet, credentials, endpoint string
	tab, entity                             string
	maps, numbersAsText                     []string
	unit                                    int
	dryRun, asJSON                          bool
	wait                                    time.Duration
}

func newAdoptCmd() *cobra.Command {
	var f adoptFlags
	cmd := &cobra.Command{
		Use:   "adopt --dir DIR --spreadsheet URL --tab TAB --entity NAME [--map HEADER=FIELD ...] [--dry-run] [--json]",
		Short: "Take over a tab people kept: import its rows into a declared entity, keep the tab as \"TAB (before hikoutei)\"",
		Long: `adopt starts a store from a spreadsheet people already keep. It reads the tab
TAB once, maps its columns to the fields of the entity NAME by header (case,
spaces, "_" and "-" do not matter; --map HEADER=FIELD names a column whose
header is not the field's, --map HEADER=- sets a column aside), and decodes
every row with the rules the store polls Input cells with: numbers, booleans
and dates typed in Sheets; dates kept as text in ISO 8601 form only
(2024-03-01, 2024-03-01 14:30, 2024-03-01T14:30:05Z); never a formula's
result, a merged or an error cell; text fields keep leading zeros, and a
number there is not adopted unless --numbers-as-text FIELD asks for it.

--dry-run prints, per row, what would be imported and why every other row
would not be (duplicate key, empty key, a key with edge spaces, a cell that
is not its field's type, a formula, a merged cell, a key the store holds with
other values), and writes nothing: no record, no lease, no cell. It needs the
store closed (it reads the log and the read model read-only).

Without --dry-run, adopt opens the store (its entities must be declared: open
it once with the application first), commits the rows that decode as new
records in units of --unit rows (actor "adopt"; a record the store holds is
never changed), quarantines every other row with its reason (hikoutei
quarantine list --tab "TAB (before hikoutei)"), then renames the tab to
"TAB (before hikoutei)", changing nothing else of it: nothing a person wrote
is deleted. The store is opened with its sync workers stopped, so a refused
adoption writes nothing to the spreadsheet; once the tab is kept, the store's
own System and Input tabs are created and filled through the outbox, and adopt
waits up to --wait for that (hikoutei serve finishes what is left).

An interrupted adopt can be run again: rows already adopted record nothing.
Once the tab is renamed, adopting TAB again fails with
adopt_tab_already_adopted; adopting "TAB (before hikoutei)" imports the rows
a person fixed there.

The spreadsheet, credentials and emulator endpoint are taken as serve takes
them (flags, else HIKOUTEI_SYNC_SPREADSHEET_URL, GOOGLE_APPLICATION_CREDENTIALS,
HIKOUTEI_SHEETS_ENDPOINT). Logs never carry cell values or spreadsheet ids.`,
		Example: `  hikoutei adopt --dir ./store --spreadsheet "$SHEET_URL" --tab Airports --entity Airport \
      --map "Airport name=name" --numbers-as-text id --dry-run
  hikoutei adopt --dir ./store --spreadsheet "$SHEET_URL" --tab Airports --entity Airport \
      --map "Airport name=name" --numbers-as-text id`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rules, err := f.validate()
			if err != nil {
				return err
			}
			return runAdopt(cmd, f, rules)
		},
	}
	addDirFlag(cmd, &f.dir)
	fl := cmd.Flags()
	fl.StringVar(&f.spreadsheet, "spreadsheet", "", "spreadsheet URL or id (default $HIKOUTEI_SYNC_SPREADSHEET_URL)")
	fl.StringVar(&f.credentials, "credentials", "", "service-account JSON key (default $GOOGLE_APPLICATION_CREDENTIALS)")
	fl.StringVar(&f.endpoint, "sheets-endpoint", "", "Sheets API endpoint of an emulator (default $HIKOUTEI_SHEETS_ENDPOINT)")
	fl.StringVar(&f.tab, "tab", "", "title of the tab to adopt (required)")
	fl.StringVar(&f.entity, "entity", "", "declared entity its rows become (required)")
	fl.StringArrayVar(&f.maps, "map", nil, "HEADER=FIELD: the column headed HEADER holds FIELD (FIELD - sets it aside; repeatable)")
	fl.StringArrayVar(&f.numbersAsText, "numbers-as-text", nil, "a text field whose cells people typed as numbers: adopt an integer as its digits (repeatable)")
	fl.IntVar(&f.unit, "unit", engine.DefaultAdoptUnit, fmt.Sprintf("rows committed per unit of work (1–%d)", engine.MaxAdoptUnit))
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be imported and what not; write nothing")
	fl.DurationVar(&f.wait, "wait", 10*time.Minute, "how long to wait for the System and Input tabs to be filled (0: do not wait)")
	addJSONFlag(cmd, &f.asJSON, shapeObject)
	return cmd
}

// validate checks every flag before the store or the network is touched
// (exit 2) and returns the --map rules.
func (f adoptFlags) validate() (map[string]string, error) {
	if err := (serveFlags{dir: f.dir, spreadsheet: f.spreadsheet, credentials: f.credentials, endpoint: f.endpoint}).validate(); err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(f.tab) == "":
		return nil, usageError{errors.New(`required flag "--tab" not set`)}
	case f.entity == "":
		return nil, usageError{errors.New(`required flag "--entity" not set`)}
	case f.unit < 1 || f.unit > engine.MaxAdoptUnit:
		return nil, usageError{fmt.Errorf(`flag "--unit" must be between 1 and %d`, engine.MaxAdoptUnit)}
	case f.wait < 0:
		return nil, usageError{errors.New(`flag "--wait" must not be negative`)}
	}
	return parseMapRules(f.maps)
}

// parseMapRules reads HEADER=FIELD rules (split at the last "=": a field
// name never holds one, a header may).
func parseMapRules(maps []string) (map[string]string, error) {
	rules := map[string]string{}
	for _, m := range maps {
		i := strings.LastIndex(m, "=")
		if i <= 0 || strings.TrimSpace(m[:i]) == "" || strings.TrimSpace(m[i+1:]) == "" {
			return nil, usageError{fmt.Errorf(`flag "--map" must be HEADER=FIELD (or HEADER=-)`)}
		}
		if _, dup := rules[m[:i]]; dup {
			return nil, usageError{fmt.Errorf(`flag "--map" gives one header twice`)}
		}
		rules[m[:i]] = strings.TrimSpace(m[i+1:])
	}
	return rules, nil
}

// runAdopt runs the dry run or the adoption and prints its report.
func runAdopt(cmd *cobra.Command, f adoptFlags, rules map[string]string) error {
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	if err := requireStore(f.dir); err != nil {
		return err
	}
	syncOpts, err := syncFromFlags(ctx, serveFlags{spreadsheet: f.spreadsheet, credentials: f.credentials, endpoint: f.endpoint})
	if err != nil {
		return err
	}
	counter := &requestCounter{}
	syncOpts.Provider.Adopt(sheetsio.Hooks{Observer: counter})
	req := engine.AdoptRequest{Tab: f.tab, Entity: f.entity, Map: rules, NumbersAsText: f.numbersAsText, DryRun: f.dryRun, UnitSize: f.unit}
	out := adoptOutput{counter: counter}
	if f.dryRun {
		out.report, err = engine.PreviewAdoption(ctx, f.dir, syncOpts.Provider, syncOpts.SpreadsheetID, req)
		if errors.Is(err, projector.ErrReadModelInvalid) {
			err = fmt.Errorf("%w; %s", err, rebuildAdvice(f.dir))
		}
		if err == nil {
			err = refusePersonal(f.dir, f.entity)
		}
	} else {
		err = adoptInStore(ctx, cmd, f, syncOpts, req, &out)
	}
	if err != nil {
		return err
	}
	return out.print(cmd, f)
}

// adoptInStore opens the store with its declared entities and the sync
// options, workers stopped (nothing touches the spreadsheet before the
// adoption's own checks passed), adopts, then runs the dispatcher (the
// store's own tabs provisioned and filled through the outbox) until the
// backfill is done or --wait ends.
func adoptInStore(ctx context.Context, cmd *cobra.Command, f adoptFlags, syncOpts *hikoutei.SyncOptions, req engine.AdoptRequest, out *adoptOutput) error {
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	syncOpts.Manual = true
	s, err := hikoutei.OpenDeclared(ctx, f.dir, hikoutei.Options{Operation: "adopt", Logger: logger, Sync: syncOpts})
	if err != nil {
		return err
	}
	e := engine.Of(s)
	start := time.Now()
	rep, err := e.Adopt(ctx, req)
	out.report, out.took = rep, time.Since(start)
	out.adoptReads, out.adoptWrites = out.counter.reads.Load(), out.counter.writes.Load()
	if err == nil && f.wait > 0 {
		start = time.Now()
		out.pending, err = backfill(ctx, e, f.wait)
		out.waited = time.Since(start)
	}
	return errors.Join(err, s.Close())
}

// backfill runs the dispatcher (and its reconciliation) until no effect
// is unsettled, at most wait, and returns how many still are.
func backfill(ctx context.Context, e *engine.Engine, wait time.Duration) (int64, error) {
	d, err := e.Provision(ctx)
	if err != nil {
		return 0, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx) }()
	pending, stopped, rerr, err := waitBackfill(runCtx, e, wait, done)
	cancel()
	if !stopped {
		rerr = <-done
	}
	if rerr != nil && !errors.Is(rerr, context.Canceled) {
		err = errors.Join(err, rerr)
	}
	return pending, err
}

// waitBackfill waits until no effect of the outbox is unsettled, at most
// wait, or the dispatcher stops (stopped, with its error); it returns how
// many still are (a blocked tab stops the wait).
func waitBackfill(ctx context.Context, e *engine.Engine, wait time.Duration, done <-chan error) (pending int64, stopped bool, runErr, err error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		counts, err := e.OutboxCounts()
		if err != nil {
			return 0, false, nil, err
		}
		for _, st := range aggregates.Unsettled() {
			pending += counts[st]
		}
		if pending == 0 || errors.Is(e.Health().Sync, engine.ErrSyncBlocked) {
			return pending, false, nil, nil
		}
		select {
		case <-ctx.Done():
			return pending, false, nil, nil
		case <-deadline.C:
			return pending, false, nil, nil
		case err := <-done:
			return pending, true, err, nil
		case <-tick.C:
			pending = 0
		}
	}
}

// requestCounter counts the Sheets requests of the run.
type requestCounter struct{ reads, writes atomic.Int64 }

func (c *requestCounter) SheetsRequest(method string, _ sheetsio.StatusClass, _ time.Duration) {
	if method == "provision" || method == "batch_update" {
		c.writes.Add(1)
		return
	}
	c.reads.Add(1)
}

func (c *requestCounter) SheetsRetry(string, time.Duration) {}

// refusePersonal refuses a dry run into an entity whose personal fields
// the store's key file records, as the adoption itself would be refused
// (the rows would reach the log unsealed; docs/erasure.md).
func refusePersonal(dir, entity string) error {
	r, err := keyring.OpenReadOnly(filepath.Join(dir, keyring.File))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	if len(r.Personal(entity)) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s has personal fields: adopting a tab into it would log them unsealed (docs/erasure.md)", hikoutei.ErrAdoptMapInvalid, entity)
}
