package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/crash"
	"github.com/hikoutei/hikoutei-go/internal/cliflag"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// The crash campaign's --segments values.
const (
	segmentsFolder = "folder"
	segmentsBucket = "bucket"
)

// newCrashCmd is the crash campaign (`make crash`; docs/testing.md "Make targets"):
// `hikoutei-lab crash` supervises, `hikoutei-lab crash worker` is the child it
// re-executes and kills.
func newCrashCmd() *cobra.Command {
	var kills int
	var seed uint64
	var faults, dir, segments string
	var keep bool
	cmd := &cobra.Command{
		Use:   "crash [--kills N] [--seed S] [--faults off|on|mixed] [--segments folder|bucket] [--dir D]",
		Short: "Crash campaign: kill -9 a store's writer at random instants and failpoints, then check nothing was lost or duplicated",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !failpoint.Compiled {
				return errors.New("crash: this binary has no failpoints: build it with -tags failpoints (make crash does)")
			}
			if kills < 1 {
				return usageError{fmt.Errorf(`flag "--kills" must be positive`)}
			}
			if dir == "" {
				d, err := os.MkdirTemp(userTempDir(), "hikoutei-crash-")
				if err != nil {
					return err
				}
				dir = d
				if !keep {
					defer os.RemoveAll(d)
					defer os.RemoveAll(d + crash.BucketSuffix)
				}
			}
			exe, err := selfExe()
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "crash: store %s, %d kills, seed %d, faults %s, segments %s\n", dir, kills, seed, faults, segments)
			start := time.Now()
			res, err := crash.Run(ctx, crash.Config{Dir: dir, Kills: kills, Seed: seed, Faults: crash.Faults(faults), Out: out,
				Bucket: segments == segmentsBucket, Spawn: func() *exec.Cmd { return exec.Command(exe, "crash", "worker") }})
			fmt.Fprintf(out, "crash: acked=%d failpoints=%v open_conflicts=%d review=%d litter=%d worker_errors=%d elapsed=%s\n",
				res.Acked, res.Failpoints, res.OpenConflicts, res.Review, len(res.Litter), len(res.WorkerErrors), time.Since(start).Round(time.Second))
			return endCampaign(out, res, err)
		},
	}
	f := cmd.Flags()
	f.IntVar(&kills, "kills", 200, "runs, each ending in a SIGKILL")
	f.Uint64Var(&seed, "seed", 1, "seed of the kill instants, failpoints, workload and fault mix")
	cliflag.AddEnum(cmd, &faults, "faults", string(crash.FaultsMixed), "emulator fault mix during the runs (mixed: every other run)",
		string(crash.FaultsOff), string(crash.FaultsOn), string(crash.FaultsMixed))
	cliflag.AddEnum(cmd, &segments, "segments", segmentsFolder,
		"where sealed segments go: the store's segments folder, or an object store (a gocloud.dev/blob file bucket in the folder DIR"+crash.BucketSuffix+")",
		segmentsFolder, segmentsBucket)
	f.StringVar(&dir, "dir", "", "store directory (default: a temporary one, removed unless --keep)")
	f.BoolVar(&keep, "keep", false, "keep the temporary store directory")
	cmd.AddCommand(&cobra.Command{
		Use:    "worker",
		Short:  "The campaign's child: runs the workload described by " + crash.WorkerEnv + " until killed",
		Hidden: true,
		Args:   argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelError}))
			ok, err := crash.WorkerFromEnv(context.Background(), os.Stdout, logger)
			if !ok {
				return errors.New(crash.WorkerEnv + " is not set: the worker is started by `hikoutei-lab crash`")
			}
			return err
		},
	})
	return cmd
}
