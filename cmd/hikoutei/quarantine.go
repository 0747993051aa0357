package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/projector"
)

// quarantineEntryJSON is one quarantine record as `quarantine list|show
// --json` prints it (field names documented in docs/cli.md "Inspecting the
// outbox and the quarantine"). The read model keeps no cell value of it.
type quarantineEntryJSON struct {
	ID         string `json:"quarantine_id"`
	Reason     string `json:"reason"`
	Active     bool   `json:"active"`
	Tab        string `json:"tab"`
	Anchor     string `json:"anchor"`
	Column     string `json:"column,omitempty"`
	SheetRow   int64  `json:"sheet_row"`
	RowHash    string `json:"row_hash,omitempty"`
	Seq        uint64 `json:"seq"`
	ClearedSeq uint64 `json:"cleared_seq,omitempty"`
}

func quarantineJSON(q projector.QuarantineEntry) quarantineEntryJSON {
	return quarantineEntryJSON{ID: q.ID, Reason: q.Reason, Active: q.Active, Tab: q.Tab, Anchor: q.Anchor, Column: q.Column,
		SheetRow: q.SheetRow, RowHash: q.RowHash, Seq: q.Seq, ClearedSeq: q.ClearedSeq}
}

func newQuarantineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "List and show quarantined evidence: malformed, ambiguous or deleted rows of Input tabs",
		Args:  argsUsage(cobra.NoArgs),
		RunE:  func(*cobra.Command, []string) error { return usageError{errors.New("give list or show")} },
	}
	cmd.AddCommand(newQuarantineListCmd(), newQuarantineShowCmd(), newQuarantineDismissCmd())
	return cmd
}

func newQuarantineListCmd() *cobra.Command {
	var dir string
	var f projector.QuarantineFilter
	var active, all, asJSON bool
	cmd := &cobra.Command{
		Use:   "list --dir DIR [--active|--all] [--reason CODE] [--tab TAB] [--limit N] [--json]",
		Short: "List quarantine records, newest first (works while the store runs)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if active && all {
				return usageError{errors.New("give --active or --all, not both")}
			}
			if f.Limit < 0 {
				return usageError{errors.New("--limit is 0 (no limit) or more")}
			}
			if all {
				f.Scope = projector.QuarantineAll
			}
			conn, done, err := inspectReadModel(dir)
			if err != nil {
				return err
			}
			defer done()
			rows, total, err := projector.ListQuarantine(conn, f)
			if err != nil {
				return fmt.Errorf("read the quarantine: %w", err)
			}
			return printQuarantineList(cmd, rows, total, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().BoolVar(&active, "active", false, "only records whose evidence still shows (the default)")
	cmd.Flags().BoolVar(&all, "all", false, "active and cleared records")
	cmd.Flags().StringVar(&f.Reason, "reason", "", "only records with reason CODE (e.g. row_deleted)")
	cmd.Flags().StringVar(&f.Tab, "tab", "", "only records of TAB (e.g. Airport_Input)")
	cmd.Flags().IntVar(&f.Limit, "limit", 50, "at most N records (0: all)")
	addJSONFlag(cmd, &asJSON, shapeLines)
	return cmd
}

func newQuarantineShowCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show --dir DIR QUARANTINE_ID [--json]",
		Short: "Show one quarantine record, active or cleared",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, done, err := inspectReadModel(dir)
			if err != nil {
				return err
			}
			defer done()
			q, err := projector.QuarantineEntryByID(conn, args[0])
			if err != nil {
				return err
			}
			return printQuarantineShow(cmd.OutOrStdout(), quarantineJSON(q), asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

func printQuarantineList(cmd *cobra.Command, rows []projector.QuarantineEntry, total int64, asJSON bool) error {
	w := cmd.OutOrStdout()
	if asJSON {
		out := make([]quarantineEntryJSON, 0, len(rows))
		for _, r := range rows {
			out = append(out, quarantineJSON(r))
		}
		if err := printJSONLines(w, out); err != nil {
			return err
		}
		return printCut(cmd.ErrOrStderr(), len(rows), total)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUARANTINE\tREASON\tTAB\tANCHOR\tCOLUMN\tSHEET ROW\tACTIVE\tSEQ")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%t\t%d\n", shown(r.ID), shown(r.Reason), shown(r.Tab), shown(dash(r.Anchor)), shown(dash(r.Column)),
			r.SheetRow, r.Active, r.Seq)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printTotal(w, len(rows), total)
}

func printQuarantineShow(w io.Writer, q quarantineEntryJSON, asJSON bool) error {
	if asJSON {
		return printJSON(w, q)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "quarantine\t%s\nreason\t%s\nactive\t%t\ntab\t%s\nanchor\t%s\ncolumn\t%s\n", shown(q.ID), shown(q.Reason), q.Active, shown(q.Tab),
		shown(dash(q.Anchor)), shown(dash(q.Column)))
	fmt.Fprintf(tw, "sheet row\t%d\nrow hash\t%s\nrecorded at seq\t%d\n", q.SheetRow, dash(q.RowHash), q.Seq)
	if q.ClearedSeq != 0 {
		fmt.Fprintf(tw, "cleared at seq\t%d\n", q.ClearedSeq)
	}
	return tw.Flush()
}
