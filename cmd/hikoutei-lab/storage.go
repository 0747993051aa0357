package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/storagefault"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// newStorageCampaignCmd is `hikoutei-lab storage` (`make storage`): the
// storage fault campaign. Each run is a child `hikoutei-lab storage-run`.
func newStorageCampaignCmd() *cobra.Command {
	var runs int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "storage [--runs N] [--seed S]",
		Short: "Storage fault campaign: full disks, failing writes, torn writes and flipped bytes; nothing acknowledged lost, no damage unreported",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !failpoint.Compiled {
				return errors.New("storage: this binary has no failpoints: build it with -tags failpoints (make storage does)")
			}
			if runs < 1 {
				return usageError{fmt.Errorf(`flag "--runs" must be positive`)}
			}
			return runStorageCampaign(cmd, runs, seed)
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 300, "runs, the kinds taking turns")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of every run")
	return cmd
}

func runStorageCampaign(cmd *cobra.Command, runs int, seed uint64) error {
	dir, err := os.MkdirTemp(userTempDir(), "hikoutei-storage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	exe, err := selfExe()
	if err != nil {
		return err
	}
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "storage: %d runs, seed %d, kinds %v\n", runs, seed, storagefault.Kinds)
	start := time.Now()
	res, err := storagefault.Run(ctx, storagefault.Config{Dir: dir, Runs: runs, Seed: seed, Out: out,
		Spawn: func() *exec.Cmd { return exec.Command(exe, "storage-run") }})
	fmt.Fprintf(out, "storage: detected=%d harmless=%d problems=%d elapsed=%s\n", res.Detected, res.Harmless, len(res.Problems), time.Since(start).Round(time.Second))
	for _, p := range res.Problems {
		fmt.Fprintln(out, "storage: problem: "+p)
	}
	return endCampaign(out, res, err)
}

// newStorageRunCmd is the campaign's child: one run, described by
// HIKOUTEI_STORAGEFAULT_RUN.
func newStorageRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "storage-run",
		Short:  "The storage campaign's child: runs the run described by " + config.EnvStorageRun,
		Hidden: true,
		Args:   argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ok, err := storagefault.ChildFromEnv(cmd.OutOrStdout())
			if !ok {
				return errors.New(config.EnvStorageRun + " is not set: the run is started by `hikoutei-lab storage`")
			}
			return err
		},
	}
}
