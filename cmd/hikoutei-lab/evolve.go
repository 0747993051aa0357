package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/evolve"
)

// newEvolveCampaignCmd is `hikoutei-lab evolve` (`make evolve`): the
// evolution campaign. It runs in this process (no failpoints needed).
func newEvolveCampaignCmd() *cobra.Command {
	var cfg evolve.Config
	cmd := &cobra.Command{
		Use:   "evolve [--runs N] [--seed S]",
		Short: "Evolution campaign: a store restarts with its records' shape changed while the application commits and people edit; nothing is lost and the sheet follows",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Runs < 1 || cfg.Steps < 1 || cfg.FirstRun < 1 {
				return usageError{fmt.Errorf(`flags "--runs", "--steps" and "--first-run" must be positive`)}
			}
			return runEvolveCampaign(cmd, cfg)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Runs, "runs", 60, "runs, each a new store and spreadsheet")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the workload, the edits and the shape changes")
	f.IntVar(&cfg.Steps, "steps", 40, "acts per run (commits, edits, restarts with a shape change)")
	f.IntVar(&cfg.FirstRun, "first-run", 1, "number of the first run (with --seed and --runs 1: replays that run)")
	f.DurationVar(&cfg.ReconcileInterval, "reconcile-interval", 400*time.Millisecond, "the stores' reconciliation period")
	f.DurationVar(&cfg.Margin, "margin", time.Second, "added to two reconciliation periods to bound the wait after the last act")
	f.BoolVar(&cfg.Verbose, "verbose", false, "print every act")
	return cmd
}

func runEvolveCampaign(cmd *cobra.Command, cfg evolve.Config) error {
	header := fmt.Sprintf("%d runs, seed %d, %d acts each, reconcile every %s, bound %s after the last act",
		cfg.Runs, cfg.Seed, cfg.Steps, cfg.ReconcileInterval, cfg.Bound())
	return runSyncCampaign(cmd, "evolve", header, func(ctx context.Context, dir string, out io.Writer) (evolve.Result, int, error) {
		cfg.Dir, cfg.Out = dir, out
		res, err := evolve.Run(ctx, cfg)
		return res, len(res.Problems), err
	})
}
