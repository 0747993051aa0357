package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/operator"
)

// newOperatorCampaignCmd is `hikoutei-lab operator` (`make operator`):
// the operator campaign. Its acts run the product's commands (the
// hikoutei binary --hikoutei names); its running store is a child
// `hikoutei-lab operator-hold`.
func newOperatorCampaignCmd() *cobra.Command {
	var runs int
	var seed uint64
	var product string
	cmd := &cobra.Command{
		Use:   "operator [--runs N] [--seed S]",
		Short: "Operator campaign: backup, restore, salvage, replay and audit pointed at every path class and interrupted; nothing acknowledged lost, no copy left, every refusal typed",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runs < 1 {
				return usageError{fmt.Errorf(`flag "--runs" must be positive`)}
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			if product, err = productBinary(product, exe); err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "hikoutei-operator-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "operator: %d runs, seed %d\n", runs, seed)
			start := time.Now()
			res, err := operator.Run(ctx, operator.Config{Dir: dir, Runs: runs, Seed: seed, Out: out,
				CLI:    func(args ...string) *exec.Cmd { return exec.Command(product, args...) },
				Holder: func(dir string) *exec.Cmd { return exec.Command(exe, "operator-hold", "--dir", dir) }})
			fmt.Fprintf(out, "operator: acked=%d outcomes=%v litter=%d problems=%d elapsed=%s\n", res.Acked, res.Outcomes, res.Litter,
				len(res.Problems), time.Since(start).Round(time.Second))
			for _, p := range res.Problems {
				fmt.Fprintln(out, "operator: problem: "+p)
			}
			return endCampaign(out, res, err)
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 300, "runs, one act each")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of every act")
	cmd.Flags().StringVar(&product, "hikoutei", "", "the hikoutei binary the acts run (default: the one beside this binary)")
	return cmd
}

// newOperatorHoldCmd is the operator campaign's running store.
func newOperatorHoldCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "operator-hold --dir DIR",
		Short:  "The operator campaign's running store: commits an item every 50 ms, printing each acknowledged id, until SIGINT",
		Hidden: true,
		Args:   argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			return operator.Hold(ctx, dir, cmd.OutOrStdout(), 50*time.Millisecond)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "store directory (created when missing)")
	return cmd
}
