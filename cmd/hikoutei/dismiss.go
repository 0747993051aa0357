package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/admin"
)

func newQuarantineDismissCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "dismiss --dir DIR QUARANTINE_ID [--json]",
		Short: "drop a person's quarantined edit: the row is rewritten to canonical state (works while the store runs)",
		Long: `dismiss drops the edit a quarantine record holds (text in a number column, a
formula, ...): the Input row is rewritten to the system's values, guarded by
the row hash the record was taken with, so a row the person changed again
since is never overwritten. The record clears when a poll sees the row clean.
While a process holds the store (e.g. "hikoutei serve"), the command is sent
to it over its administrative channel (DIR/admin.sock); otherwise it opens the
store itself. It uses no network.`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			req := admin.DismissRequest{QuarantineID: args[0]}
			var res admin.DismissResponse
			if err := dismissAnywhere(cmd.Context(), dir, req, &res); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), dismissJSON{QuarantineID: req.QuarantineID, Queued: res.Queued})
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "dismissed %s: the row's rewrite is queued\n", req.QuarantineID)
			return err
		},
	}
	addDirFlag(cmd, &dir)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// dismissJSON is what `quarantine dismiss --json` prints.
type dismissJSON struct {
	QuarantineID string `json:"quarantine_id"`
	Queued       bool   `json:"queued"`
}

// dismissAnywhere runs the dismissal in the process holding the store
// (administrative channel) or, when none does, in this one.
func dismissAnywhere(ctx context.Context, dir string, req admin.DismissRequest, res *admin.DismissResponse) error {
	if handled, err := viaChannel(ctx, dir, admin.OpQuarantineDismiss, req, res); handled {
		return err
	}
	s, handled, err := openLocal(ctx, dir, "quarantine-dismiss", admin.OpQuarantineDismiss, req, res)
	if handled || err != nil {
		return err
	}
	err = s.DismissQuarantine(ctx, req.QuarantineID)
	res.Queued = err == nil
	return errors.Join(err, s.Close())
}
