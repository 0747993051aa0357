package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// viaChannel sends one request to the process that holds store dir, over
// its administrative channel. It reports handled=false when nobody serves
// the channel (or the store is shutting down), so the caller applies the
// command locally instead.
func viaChannel(ctx context.Context, dir string, op admin.Op, req, resp any) (handled bool, err error) {
	err = admin.Call(ctx, dir, op, req, resp)
	if errors.Is(err, admin.ErrUnavailable) || errors.Is(err, admin.ErrStoreClosing) || errors.Is(err, hikoutei.ErrStoreClosed) {
		return false, nil
	}
	return true, err
}

// openLocal opens the store in this process for a command that uses no
// network: no sync (nothing is dispatched; the service does it when it
// next runs), no NATS, no administrative channel. When another process
// holds the store, the channel is tried once more (that process may have
// been starting), then the error names the holder.
func openLocal(ctx context.Context, dir, operation string, op admin.Op, req, resp any) (*hikoutei.Store, bool, error) {
	s, err := hikoutei.OpenDeclared(ctx, dir, hikoutei.Options{Operation: operation, NoAdmin: true})
	if !errors.Is(err, hikoutei.ErrStoreLocked) && !errors.Is(err, hikoutei.ErrLeaseHeld) {
		return s, false, err
	}
	if handled, cerr := viaChannel(ctx, dir, op, req, resp); handled {
		return nil, true, cerr
	}
	return nil, false, fmt.Errorf("%w: %w; it serves no administrative channel (an older version, opened with NoAdmin, or shutting down): stop it and run the command again",
		admin.ErrHeldWithoutChannel, err)
}

func newPingCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ping --dir DIR [--json]",
		Short: "Ask the process holding the store, over its administrative channel, how it is (read-only)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			var st admin.StatusResponse
			if err := admin.Call(cmd.Context(), dir, admin.OpStatus, nil, &st); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), st)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "pid %d operation %s protocol %d log head %d open conflicts %d\n",
				st.PID, st.Operation, st.Protocol, st.LogHead, st.OpenConflicts)
			if err == nil && st.LocalCode != "" {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "commits refused: %s\n", quoteControls(st.Local))
			}
			return err
		},
	}
	addDirFlag(cmd, &dir)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}
