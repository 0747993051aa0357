package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
)

// subscriptionJSON is one named subscription as `subscriptions --json`
// prints it (docs/cli.md "JSON output").
type subscriptionJSON struct {
	Name       string `json:"name"`
	Mode       string `json:"mode"`
	Checkpoint int64  `json:"checkpoint"` // as stored (an invalid one may be negative)
	Lag        uint64 `json:"lag"`
	// Error is set when the checkpoint is one the log cannot have
	// written (past the log head, or negative): its message, led by
	// subscription_checkpoint_invalid.
	Error string `json:"error,omitempty"`
}

func newSubscriptionsCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "subscriptions --dir DIR [--json]",
		Short: "List the named subscriptions: checkpoint and lag behind the read model (works while the store runs)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			subs, err := readSubscriptions(cmd.Context(), dir)
			if err != nil {
				return err
			}
			if err := printSubscriptions(cmd.OutOrStdout(), subs, asJSON); err != nil {
				return err
			}
			for _, s := range subs {
				if s.Error != "" {
					return errProblemsFound
				}
			}
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	addJSONFlag(cmd, &asJSON, shapeLines)
	return cmd
}

// readSubscriptions reads the checkpoints from read.sqlite and checks
// each against the log head: the log's own (a running store answers its
// head over the channel; a closed store's log is read), else the read
// model's checkpoint.
func readSubscriptions(ctx context.Context, dir string) ([]subscriptionJSON, error) {
	conn, done, err := inspectReadModel(dir)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := projector.ListSubscriptions(conn)
	if err != nil {
		return nil, fmt.Errorf("read the subscriptions: %w", err)
	}
	head := max(uint64(max(scalar(conn, "SELECT CAST(value AS INTEGER) FROM hk_meta WHERE key = 'checkpoint'"), 0)), currentLogHead(ctx, dir))
	out := make([]subscriptionJSON, len(rows))
	for i, r := range rows {
		out[i] = subscriptionJSON{Name: r.Name, Mode: string(r.Mode), Checkpoint: r.Stored, Lag: head - min(head, r.Checkpoint)}
		if err := engine.CheckSubscriptionCheckpoint(r.Name, r.Stored, head); err != nil {
			out[i].Error, out[i].Lag = err.Error(), 0
		}
	}
	return out, nil
}

// currentLogHead is the log head of store dir: read from log.db when no
// process holds it, else asked of the running process (0 when neither
// answers).
func currentLogHead(ctx context.Context, dir string) uint64 {
	if head, _, err := readLogHead(dir); err == nil {
		return head
	}
	ctx, cancel := context.WithTimeout(ctx, liveHealthWait)
	defer cancel()
	var st admin.StatusResponse
	if admin.Call(ctx, dir, admin.OpStatus, nil, &st) == nil {
		return st.LogHead
	}
	return 0
}

func printSubscriptions(w io.Writer, subs []subscriptionJSON, asJSON bool) error {
	if asJSON {
		return printJSONLines(w, subs)
	}
	if len(subs) == 0 {
		_, err := fmt.Fprintln(w, "no subscriptions")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBSCRIPTION\tMODE\tCHECKPOINT\tLAG")
	for _, s := range subs {
		if s.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%d\t-\tINVALID: %s\n", shown(s.Name), s.Mode, s.Checkpoint, shown(s.Error))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", shown(s.Name), s.Mode, s.Checkpoint, s.Lag)
	}
	return tw.Flush()
}
