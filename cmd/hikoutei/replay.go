package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

func newReplayCmd() *cobra.Command {
	var dir, out string
	var upTo uint64
	cmd := &cobra.Command{
		Use:   "replay --dir DIR [--to SEQ] [--out FILE]",
		Short: "Rebuild the read model from the log, with a progress bar",
		Long: `replay rebuilds read.sqlite from log.db using the entity shapes the log
records. Without --out it replaces DIR/read.sqlite (the store must not be
running); with --out it writes a new file and leaves the store alone. --to
stops at a sequence (a read model as of that point).`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireDir(dir); err != nil {
				return err
			}
			return runReplay(cmd, dir, out, upTo)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&out, "out", "", "write the rebuilt read model here instead of replacing DIR/read.sqlite")
	cmd.Flags().Uint64Var(&upTo, "to", 0, "last log sequence to apply (default: the head)")
	return cmd
}

func runReplay(cmd *cobra.Command, dir, out string, upTo uint64) error {
	inPlace := out == ""
	if inPlace {
		out = filepath.Join(dir, "."+hikoutei.ReadModelFile+".replay")
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(out + suffix)
	}
	bar := progressbar.NewOptions64(-1, progressbar.OptionSetWriter(cmd.ErrOrStderr()), progressbar.OptionSetDescription("replaying"),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	cp, err := hikoutei.Replay(dir, out, hikoutei.ReplayOptions{UpTo: upTo, Progress: func(p hikoutei.Progress) {
		bar.ChangeMax64(int64(p.Total))
		bar.Set64(int64(p.Done))
	}})
	bar.Finish()
	if err != nil {
		return err
	}
	if inPlace {
		if err := replaceReadModel(dir, out); err != nil {
			return err
		}
		out = filepath.Join(dir, hikoutei.ReadModelFile)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "replayed to checkpoint %d into %s\n", cp, out)
	return nil
}

func replaceReadModel(dir, built string) error {
	target := filepath.Join(dir, hikoutei.ReadModelFile)
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(target + suffix)
	}
	return os.Rename(built, target)
}
