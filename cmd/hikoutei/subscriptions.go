package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/projector"
)

// subscriptionJSON is one named subscription as `subscriptions --json`
// prints it (README "JSON output").
type subscriptionJSON struct {
	Name       string `json:"name"`
	Mode       string `json:"mode"`
	Checkpoint uint64 `json:"checkpoint"`
	Lag        uint64 `json:"lag"`
}

func newSubscriptionsCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "subscriptions --dir DIR [--json]",
		Short: "List the named subscriptions: checkpoint and lag behind the read model (works while the store runs)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			subs, err := readSubscriptions(dir)
			if err != nil {
				return err
			}
			return printSubscriptions(cmd.OutOrStdout(), subs, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	addJSONFlag(cmd, &asJSON, shapeLines)
	return cmd
}

// readSubscriptions reads the checkpoints and the read model's own one
// (the log head once the store has applied it) from read.sqlite.
func readSubscriptions(dir string) ([]subscriptionJSON, error) {
	conn, err := inspectReadModel(dir)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := projector.ListSubscriptions(conn)
	if err != nil {
		return nil, fmt.Errorf("read the subscriptions: %w", err)
	}
	head := uint64(scalar(conn, "SELECT CAST(value AS INTEGER) FROM hk_meta WHERE key = 'checkpoint'"))
	out := make([]subscriptionJSON, len(rows))
	for i, r := range rows {
		out[i] = subscriptionJSON{Name: r.Name, Mode: string(r.Mode), Checkpoint: r.Checkpoint, Lag: head - min(head, r.Checkpoint)}
	}
	return out, nil
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", s.Name, s.Mode, s.Checkpoint, s.Lag)
	}
	return tw.Flush()
}
