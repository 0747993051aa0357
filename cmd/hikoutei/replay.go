package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/progress"
)

func newReplayCmd() *cobra.Command {
	var dir, out, segments string
	var upTo uint64
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "replay --dir DIR [--to SEQ] [--out FILE [--force]] [--segments URL] [--json]",
		Short: "Rebuild the read model from the log, with a progress bar on stderr",
		Long: `replay rebuilds a read model from log.db using the entity shapes the log
records, holding the log read-only throughout (it fails while the store is
open, and no writer can open it meanwhile).

Without --out it rebuilds DIR/read.sqlite: the previous read model is renamed
aside (read.sqlite.before-rebuild-<time>), never deleted. With --out it writes
a new file and leaves the store alone; --out must not be inside a store
directory, and must not exist unless --force is given; the temporary file
of a replay into the same folder that was killed is removed first when the
process that wrote it no longer runs (kept otherwise), and said so on stderr. --to stops at a
sequence (a read model as of that point). Progress goes to stderr: a bar
on a terminal, a line per tenth of the log elsewhere. Sealed records are read
from DIR/segments, or from the store --segments names.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			if force && out == "" {
				return usageError{fmt.Errorf("--force only applies with --out")}
			}
			segs, err := openSegmentsFlag(cmd.Context(), segments, dir)
			if err != nil {
				return err
			}
			defer closeSegments(segs)
			return runReplay(cmd, dir, out, hikoutei.ReplayOptions{UpTo: upTo, Force: force, Segments: segs}, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&out, "out", "", "write the rebuilt read model to this new file instead of rebuilding DIR/read.sqlite")
	cmd.Flags().BoolVar(&force, "force", false, "with --out: replace the file if it exists")
	cmd.Flags().Uint64Var(&upTo, "to", 0, "last log sequence to apply (default: the head)")
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// replayJSON is what `replay --json` prints.
type replayJSON struct {
	Checkpoint uint64 `json:"checkpoint"`
	Out        string `json:"out"`
	// Previous is where the previous read model was kept (rebuilding
	// DIR/read.sqlite only).
	Previous string `json:"previous_read_model,omitempty"`
}

func runReplay(cmd *cobra.Command, dir, out string, opts hikoutei.ReplayOptions, asJSON bool) error {
	bar := progress.New(cmd.ErrOrStderr(), 0, "replaying")
	opts.Progress = func(p hikoutei.Progress) {
		bar.SetMax(int64(p.Total))
		bar.Set(int64(p.Done))
	}
	opts.Leftover = func(l hikoutei.ReplayLeftover) { printLeftover(cmd.ErrOrStderr(), l) }
	var cp uint64
	var aside string
	var err error
	if out == "" {
		cp, aside, err = hikoutei.RebuildReadModel(cmd.Context(), dir, opts)
		out = filepath.Join(dir, hikoutei.ReadModelFile)
	} else {
		cp, err = hikoutei.Replay(cmd.Context(), dir, out, opts)
	}
	if err != nil {
		bar.Abandon()
		return err
	}
	bar.Finish()
	if asJSON {
		return printJSON(cmd.OutOrStdout(), replayJSON{Checkpoint: cp, Out: out, Previous: aside})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "replayed to checkpoint %d into %s\n", cp, out)
	if aside != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "the previous read model was kept as %s\n", aside)
	}
	return nil
}

// printLeftover says what became of a temporary file an interrupted
// replay or rebuild left (stderr: it is no part of the result).
func printLeftover(w io.Writer, l hikoutei.ReplayLeftover) {
	what := "kept"
	if l.Removed {
		what = "removed"
	}
	fmt.Fprintf(w, "%s %s (%d bytes), left by an interrupted replay: %s\n", what, shown(l.Path), l.Bytes, l.Why)
}
