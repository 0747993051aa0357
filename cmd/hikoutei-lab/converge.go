package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/converge"
)

// newConvergeCampaignCmd is `hikoutei-lab converge` (`make converge`):
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
	header := fmt.Sprintf("%d runs, seed %d, %d acts each, reconcile every %s, bound %s after damage stops",
		cfg.Runs, cfg.Seed, cfg.Steps, cfg.ReconcileInterval, cfg.Bound())
	return runSyncCampaign(cmd, "converge", header, func(ctx context.Context, dir string, out io.Writer) (converge.Result, int, error) {
		cfg.Dir, cfg.Out = dir, out
		res, err := converge.Run(ctx, cfg)
		return res, len(res.Problems), err
	})
}
