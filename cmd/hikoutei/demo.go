package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/above/demo"
)

func newDemoCmd() *cobra.Command {
	cfg := demo.Config{Google: true}
	var noLatency bool
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--data FILE] [--rows N] [--keep-open] [--no-latency] [--stall D]",
		Short: "Run the whole product on the OpenFlights airports: commit, sync, human edits, polling, verification",
		Long: `demo opens a fresh store with embedded NATS, serves the Sheets emulator with
Google's latency and quota model, commits the 7,184 OpenFlights airports as a
typed Airport entity, syncs them, acts as people do on Airport_Input (a clean
edit, a conflicting edit, text in a numeric column, a formula, a pasted
duplicate row, a sort), waits until each act reaches one of its correct
outcomes and prints which, has a person resolve a conflict by picking "use
sheet" in Sync_Conflicts, erases one data subject (an airport's made-up
manager, whose contact field is personal), and verifies that every
non-conflicted row in the sheet equals canonical state (the erased contact
shows the erased marker). Waits end on progress: one fails only after it
observed no progress (read-model checkpoint, outbox counts, outcomes) for
--stall. It ends with one line
"summary: rows=… sheet_rows=… mismatches=… conflicts=… resolved=… resolved_in_sheet=… quarantined_acts=… quarantined_rows=… erased=… requests=…"
(quarantined_acts: the acts of the outcomes list that were quarantined;
quarantined_rows: the rows held for review, as status counts them, so a
pasted duplicate is two) and exits 1 when mismatches > 0. The store is kept
for inspection: the report (and on any failure, the failure) says where it
is, the commands to inspect it and, for the temporary directory made
without --dir, its size and the command that removes it. The airports are built into the binary
(--data reads another copy), so it runs from any directory. Progress goes to
stderr: bars with elapsed time and the time left on a terminal, a line per
tenth elsewhere.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkDemoFlags(cfg); err != nil {
				return err
			}
			if err := demoDir(&cfg); err != nil {
				return err
			}
			cfg.Out, cfg.Progress, cfg.Google = cmd.OutOrStdout(), cmd.ErrOrStderr(), !noLatency
			ctx, stop := interruptible(context.Background())
			defer stop()
			sum, err := demo.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if sum.Mismatches > 0 {
				return errProblemsFound
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cfg.Dir, "dir", "", "store directory (default: a fresh temporary directory)")
	cmd.Flags().StringVar(&cfg.Data, "data", "", "OpenFlights airports JSON file (default: the copy built into the binary)")
	cmd.Flags().IntVar(&cfg.Rows, "rows", 0, "load only the first N airports (at least 11; default all)")
	cmd.Flags().BoolVar(&cfg.KeepOpen, "keep-open", false, "keep the emulator and its web view running until Ctrl-C")
	cmd.Flags().BoolVar(&noLatency, "no-latency", false, "skip Google's latency and quota model (faster)")
	cmd.Flags().DurationVar(&cfg.Stall, "stall", demo.DefaultStall, "fail a wait only after it observed no progress for this long")
	return cmd
}

// checkDemoFlags refuses a negative --stall, and a --rows that is
// negative or too few for the person acts (exit 2).
func checkDemoFlags(cfg demo.Config) error {
	switch {
	case cfg.Rows < 0 || (cfg.Rows > 0 && cfg.Rows < demo.MinRows):
		return usageError{fmt.Errorf("--rows is 0 (all airports) or at least %d", demo.MinRows)}
	case cfg.Stall < 0:
		return usageError{errors.New("--stall is a positive duration")}
	}
	return nil
}

// demoDir checks or makes the demo's store directory. A given one is
// output too: never inside another store's directory. By default it is
// a fresh directory in the temporary directory the process was started
// with, so the store the demo points at outlives the command (the
// process's scratch directory is removed when it exits).
func demoDir(cfg *demo.Config) error {
	if cfg.Dir != "" {
		_, err := events.CheckOutside(cfg.Dir)
		return err
	}
	dir, err := os.MkdirTemp(userTempDir(), "hikoutei-demo-")
	cfg.Dir, cfg.MadeDir = dir, err == nil
	return err
}
