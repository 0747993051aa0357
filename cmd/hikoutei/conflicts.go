package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/cliflag"
)

// conflictRow is one conflict as the CLI shows it (values are renderings;
// they may be personal data, so they appear only in show/--json).
type conflictRow struct {
	ID                string `json:"conflict_id"`
	Entity            string `json:"entity"`
	EntityID          string `json:"id"`
	Field             string `json:"field"`
	State             string `json:"state"`
	CanonicalRevision int64  `json:"canonical_revision"`
	CandidateHash     string `json:"candidate_hash"`
	CandidateEpoch    int64  `json:"candidate_epoch"`
	VisibleHash       string `json:"visible_hash"`
	SystemValue       string `json:"system_value"`
	SheetValue        string `json:"sheet_value"`
	OpenedAt          string `json:"opened_at"`
	Resolution        string `json:"resolution,omitempty"`
	ResolvedBy        string `json:"resolved_by,omitempty"` // application | cli | sheet ("" before actors were recorded)
	ResolvedAt        string `json:"resolved_at,omitempty"`
	ReconcileState    string `json:"reconcile_state,omitempty"`
}

func newConflictsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "conflicts",
		Short: "List, show and acknowledge conflicts between people's edits and the system",
		Args:  argsUsage(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return usageError{errors.New("give list, show or ack")} },
	}
	cmd.AddCommand(newConflictsListCmd(), newConflictsShowCmd(), newConflictsAckCmd(), newConflictsResolveCmd())
	return cmd
}

func newConflictsListCmd() *cobra.Command {
	var dir, state string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list --dir DIR [--state open|resolved|all] [--json]",
		Short: "List conflicts with the fence `conflicts ack` needs (works while the store runs)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			rows, err := queryConflicts(dir, state, "")
			if err != nil {
				return err
			}
			return printConflicts(cmd, rows, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cliflag.AddEnum(cmd, &state, "state", "open", "conflicts in this state", "open", "resolved", "all")
	addJSONFlag(cmd, &asJSON, shapeLines)
	cmd.Flags().Lookup("json").Usage += " (includes the cell values)"
	return cmd
}

func newConflictsShowCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show --dir DIR CONFLICT_ID [--json]",
		Short: "Show one conflict in full, including both values and, once resolved, how, by whom and when",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			rows, err := queryConflicts(dir, "all", args[0])
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				return fmt.Errorf("%w: %s", hikoutei.ErrConflictNotFound, args[0])
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rows[0])
			}
			return printConflict(cmd.OutOrStdout(), rows[0])
		},
	}
	addDirFlag(cmd, &dir)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

func newConflictsAckCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ack --dir DIR CONFLICT_ID CANONICAL_REVISION CANDIDATE_HASH CANDIDATE_EPOCH",
		Short: "acknowledge_system: keep the system's value (fenced by revision, candidate hash and epoch; works while the store runs)",
		Long: `ack keeps the system's value of a conflicted field. The four arguments are the
fence printed by "conflicts list": if the field's revision, the candidate or its
epoch moved since, the command is recorded as stale and changes nothing. The
row reconcile it queues is guarded by the candidate-time row hash, so a later
human edit becomes blocked_candidate instead of being overwritten.
While a process holds the store (e.g. "hikoutei serve"), the command is sent
to it over its administrative channel (DIR/admin.sock); otherwise it opens the
store itself. Either way it uses no network and needs no spreadsheet flags:
the service dispatches the reconcile.`,
		Args: argsUsage(cobra.ExactArgs(4)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			ack, err := parseAck(args)
			if err != nil {
				return err
			}
			return ackConflict(cmd, dir, ack, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

func newConflictsResolveCmd() *cobra.Command {
	var dir, commandID string
	var useSheet, keepSystem, asJSON bool
	cmd := &cobra.Command{
		Use:   "resolve --dir DIR CONFLICT_ID (--use-sheet | --keep-system) [--command-id ID]",
		Short: "resolve a conflict as a person decided: use the sheet's value or keep the system's (works while the store runs)",
		Long: `resolve ends an open conflict. --use-sheet commits the person's value as a new
revision of the field (the application sees an ordinary change, actor cli);
--keep-system keeps the system's value and rewrites the person's cell. The
command is fenced by the conflict's current revision, candidate hash and
epoch: a person typing again, or an application commit, before it runs makes
it stale (conflict_stale), never an overwrite. --command-id makes a retry
safe: the same id returns the first outcome.
While a process holds the store (e.g. "hikoutei serve"), the command is sent
to it over its administrative channel (DIR/admin.sock); otherwise it opens the
store itself. It uses no network.`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireStore(dir); err != nil {
				return err
			}
			if useSheet == keepSystem {
				return usageError{errors.New("give exactly one of --use-sheet and --keep-system")}
			}
			req := admin.ResolveRequest{ConflictID: args[0], Resolution: string(hikoutei.KeepSystem), CommandID: commandID}
			if useSheet {
				req.Resolution = string(hikoutei.UseSheet)
			}
			return resolveConflict(cmd, dir, req, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().BoolVar(&useSheet, "use-sheet", false, "use the sheet's value (accept_user)")
	cmd.Flags().BoolVar(&keepSystem, "keep-system", false, "keep the system's value (acknowledge_system)")
	cmd.Flags().StringVar(&commandID, "command-id", "", "idempotency key: a retry with the same id returns the first outcome")
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

func resolveConflict(cmd *cobra.Command, dir string, req admin.ResolveRequest, asJSON bool) error {
	var res admin.AckResponse
	err := resolveAnywhere(cmd.Context(), dir, req, &res)
	return errors.Join(err, printOutcome(cmd.OutOrStdout(), req.ConflictID, req.Resolution, res, asJSON))
}

// outcomeJSON is what `conflicts ack|resolve --json` print.
type outcomeJSON struct {
	ConflictID      string `json:"conflict_id"`
	Resolution      string `json:"resolution"`
	Outcome         string `json:"outcome"`
	ReconcileEffect string `json:"reconcile_effect,omitempty"`
}

// printOutcome says how a resolution ended (nothing when it did not run).
func printOutcome(w io.Writer, id, resolution string, res admin.AckResponse, asJSON bool) error {
	switch {
	case res.Outcome == "":
		return nil
	case asJSON:
		return printJSON(w, outcomeJSON{ConflictID: id, Resolution: resolution, Outcome: res.Outcome, ReconcileEffect: res.ReconcileEffect})
	}
	_, err := fmt.Fprintf(w, "%s %s %s\n", resolution, id, res.Outcome)
	return err
}

// resolveAnywhere runs the resolution in the process holding the store
// (administrative channel) or, when none does, in this one.
func resolveAnywhere(ctx context.Context, dir string, req admin.ResolveRequest, res *admin.AckResponse) error {
	if handled, err := viaChannel(ctx, dir, admin.OpConflictResolve, req, res); handled {
		return err
	}
	s, handled, err := openLocal(ctx, dir, "conflicts-resolve", admin.OpConflictResolve, req, res)
	if handled || err != nil {
		return err
	}
	opts := []hikoutei.ResolveOption{hikoutei.WithActor(hikoutei.ActorCLI)}
	if req.CommandID != "" {
		opts = append(opts, hikoutei.WithCommandID(req.CommandID))
	}
	r, err := s.ResolveConflict(ctx, req.ConflictID, hikoutei.Resolution(req.Resolution), opts...)
	*res = admin.AckResponse{Outcome: string(r.Outcome), ReconcileEffect: r.ReconcileEffect}
	return errors.Join(err, s.Close())
}

// parseAck reads CONFLICT_ID CANONICAL_REVISION CANDIDATE_HASH CANDIDATE_EPOCH.
func parseAck(args []string) (hikoutei.Acknowledge, error) {
	rev, err1 := strconv.ParseUint(args[1], 10, 64)
	epoch, err2 := strconv.ParseInt(args[3], 10, 64)
	if err1 != nil || err2 != nil {
		return hikoutei.Acknowledge{}, usageError{errors.New("CANONICAL_REVISION and CANDIDATE_EPOCH are decimal integers")}
	}
	return hikoutei.Acknowledge{ConflictID: args[0], CanonicalRevision: rev, CandidateHash: args[2], CandidateEpoch: epoch}, nil
}

func ackConflict(cmd *cobra.Command, dir string, ack hikoutei.Acknowledge, asJSON bool) error {
	ack.Actor = hikoutei.ActorCLI
	req := admin.AckRequest{ConflictID: ack.ConflictID, CanonicalRevision: ack.CanonicalRevision, CandidateHash: ack.CandidateHash,
		CandidateEpoch: ack.CandidateEpoch}
	var res admin.AckResponse
	err := ackAnywhere(cmd.Context(), dir, ack, req, &res)
	return errors.Join(err, printOutcome(cmd.OutOrStdout(), ack.ConflictID, "acknowledge_system", res, asJSON))
}

// ackAnywhere runs acknowledge_system in the process holding the store
// (administrative channel) or, when none does, in this one.
func ackAnywhere(ctx context.Context, dir string, ack hikoutei.Acknowledge, req admin.AckRequest, res *admin.AckResponse) error {
	if handled, err := viaChannel(ctx, dir, admin.OpConflictAck, req, res); handled {
		return err
	}
	s, handled, err := openLocal(ctx, dir, "conflicts-ack", admin.OpConflictAck, req, res)
	if handled || err != nil {
		return err
	}
	r, err := s.AcknowledgeSystem(ctx, ack)
	*res = admin.AckResponse{Outcome: string(r.Outcome), ReconcileEffect: r.ReconcileEffect}
	return errors.Join(err, s.Close())
}

func queryConflicts(dir, state, id string) ([]conflictRow, error) {
	conn, done, err := openReadModel(dir)
	if err != nil {
		return nil, err
	}
	defer done()
	q := `SELECT conflict_id, entity, id, field, state, canonical_revision, coalesce(candidate_hash, ''), coalesce(candidate_epoch, 0),
  coalesce(visible_hash, ''), coalesce(system_value, ''), coalesce(sheet_value, ''), opened_at, coalesce(resolution, ''),
  coalesce(reconcile_state, ''), coalesce(resolved_by, ''), coalesce(resolved_at, '') FROM hk_conflicts WHERE (? = 'all' OR state = ?) AND (? = '' OR conflict_id = ?) ORDER BY opened_seq`
	var out []conflictRow
	err = sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: []any{state, state, id, id}, ResultFunc: func(s *sqlite.Stmt) error {
		out = append(out, conflictRow{ID: s.ColumnText(0), Entity: s.ColumnText(1), EntityID: s.ColumnText(2), Field: s.ColumnText(3),
			State: s.ColumnText(4), CanonicalRevision: s.ColumnInt64(5), CandidateHash: s.ColumnText(6), CandidateEpoch: s.ColumnInt64(7),
			VisibleHash: s.ColumnText(8), SystemValue: s.ColumnText(9), SheetValue: s.ColumnText(10), OpenedAt: s.ColumnText(11),
			Resolution: s.ColumnText(12), ReconcileState: s.ColumnText(13), ResolvedBy: s.ColumnText(14), ResolvedAt: s.ColumnText(15)})
		return nil
	}})
	return out, err
}

func printConflicts(cmd *cobra.Command, rows []conflictRow, asJSON bool) error {
	if asJSON {
		return printJSONLines(cmd.OutOrStdout(), rows)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONFLICT\tENTITY\tID\tFIELD\tSTATE\tOPENED\tACK FENCE (revision hash epoch)")
	for _, r := range rows {
		fence := fmt.Sprintf("%d %s %d", r.CanonicalRevision, r.CandidateHash, r.CandidateEpoch)
		if r.VisibleHash == "" {
			fence = "legacy: no visible evidence, cannot be acknowledged"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", shown(r.ID), shown(r.Entity), shown(r.EntityID), shown(r.Field), r.State, r.OpenedAt, fence)
	}
	return tw.Flush()
}

// printConflict prints one conflict as "key value" lines: what conflicts,
// both values, the fence `ack` needs and, once resolved, how, by whom and
// when. A value holding a control character (a terminal escape a person
// typed into a cell) is printed quoted (see shown), never raw.
func printConflict(w io.Writer, r conflictRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "conflict\t%s\nentity\t%s %s\nfield\t%s\nstate\t%s\nopened at\t%s\n", shown(r.ID), shown(r.Entity), shown(r.EntityID),
		shown(r.Field), r.State, r.OpenedAt)
	fmt.Fprintf(tw, "system value\t%s\nsheet value\t%s\n", shown(r.SystemValue), shown(r.SheetValue))
	fmt.Fprintf(tw, "ack fence\t%d %s %d\nvisible hash\t%s\n", r.CanonicalRevision, dash(r.CandidateHash), r.CandidateEpoch, dash(r.VisibleHash))
	if r.Resolution != "" {
		fmt.Fprintf(tw, "resolution\t%s\nresolved by\t%s\nresolved at\t%s\n", r.Resolution, dash(r.ResolvedBy), dash(r.ResolvedAt))
	}
	if r.ReconcileState != "" {
		fmt.Fprintf(tw, "row reconcile\t%s\n", r.ReconcileState)
	}
	return tw.Flush()
}
