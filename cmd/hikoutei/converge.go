package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/converge"
)

// newConvergeCampaignCmd is `hikoutei crash converge` (`make converge`):
// the damage campaign. It runs in this process (no failpoints needed).
func newConvergeCampaignCmd() *cobra.Command {
	var cfg converge.Config
	cmd := &cobra.Command{
		Use:   "converge [--runs N] [--seed S]",
		Short: "Damage campaign: people damage the spreadsheet while a store syncs; after damage stops the sheet returns to canonical state",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Runs < 1 || cfg.Steps < 1 {
				return usageError{fmt.Errorf(`flags "--runs" and "--steps" must be positive`)}
			}
			return runConvergeCampaign(cmd, cfg)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Runs, "runs", 60, "runs, each a new store and spreadsheet")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the workload, the damage and the restarts")
	f.IntVar(&cfg.Steps, "steps", 50, "acts per run (commits, edits, damage, restarts)")
	f.DurationVar(&cfg.ReconcileInterval, "reconcile-interval", 400*time.Millisecond, "the stores' reconciliation period")
	f.DurationVar(&cfg.Margin, "margin", time.Second, "added to two reconciliation periods to bound the wait after damage stops")
	return cmd
}

func runConvergeCampaign(cmd *cobra.Command, cfg converge.Config) error {
	dir, err := os.MkdirTemp(userTempDir(), "hikoutei-converge-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	out := cmd.OutOrStdout()
	cfg.Dir, cfg.Out = dir, out
	fmt.Fprintf(out, "converge: %d runs, seed %d, %d acts each, reconcile every %s, bound %s after damage stops\n",
		cfg.Runs, cfg.Seed, cfg.Steps, cfg.ReconcileInterval, cfg.Bound())
	start := time.Now()
	res, err := converge.Run(ctx, cfg)
	fmt.Fprintf(out, "converge: elapsed=%s problems=%d\n", time.Since(start).Round(time.Second), len(res.Problems))
	fmt.Fprintln(out, res.Counts())
	return endCampaign(out, res, err)
}
